/**
 * The link check of the repository's own documentation (issue #33): every
 * link of README.md and docs/**\/*.md must lead to a file of the repository,
 * and none may lead outside it, except to the running local stack
 * (`http://127.0.0.1…`, `http://localhost…`). A clone holds everything its
 * documentation refers to.
 *
 * Links are found without a Markdown library (none is a dependency of the
 * project): fenced code blocks and code spans are removed first, then inline
 * links and images `[text](target)`, reference definitions `[label]: target`,
 * autolinks `<scheme:…>`, bare `http(s)://` URLs (which GitHub turns into
 * links) and HTML `href`/`src` attributes are read. Anchors (`#…`) are not
 * checked: only the file they point into.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A link found in a Markdown file. */
export interface MarkdownLink {
  /** The target as written (`docs/errors.md#not_found`, `https://…`). */
  target: string;
  /** 1-based line of the link in its file. */
  line: number;
}

/** A link that breaks the rule, with why. */
export interface LinkProblem {
  /** The file, relative to the repository root. */
  file: string;
  line: number;
  target: string;
  problem: string;
}

/** Hosts of the running local stack: the only addresses outside the repository a link may name. */
export const LOCAL_STACK_HOSTS = ['127.0.0.1', 'localhost'];

/** The text with fenced code blocks and code spans blanked out, line breaks kept (so lines still count). */
export function withoutCode(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  const kept = lines.map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) {
      fence = marker;
      return '';
    }
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      return '';
    }
    return line;
  });
  // Code spans: a run of backticks up to the same run (CommonMark), possibly across line breaks within a paragraph.
  return kept.join('\n').replace(/(`+)(?:(?!\n[ \t]*\n)[\s\S])*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Every link target of a Markdown text, in order of appearance, code excluded. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const text = withoutCode(markdown);
  const found: { index: number; target: string }[] = [];
  const collect = (pattern: RegExp, group = 1) => {
    for (const match of text.matchAll(pattern)) found.push({ index: match.index, target: match[group]! });
  };
  // Inline links and images: [text](target), [text](<target> "title"); one level of brackets in the text, of parentheses in the target.
  for (const match of text.matchAll(/!?\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(?:<([^>\n]*)>|([^\s()]*(?:\([^\s()]*\)[^\s()]*)*))/g)) {
    found.push({ index: match.index, target: match[1] ?? match[2]! });
  }
  // Reference definitions: [label]: target
  collect(/^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?/gm);
  // Autolinks: <scheme:…>
  collect(/<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/g);
  // Bare URLs (GitHub's autolink extension), not already inside one of the forms above.
  for (const match of text.matchAll(/(?<![(<\w/:"'=])(?:https?:\/\/|www\.)[^\s<>)\]]+/g))
    found.push({ index: match.index, target: match[0].replace(/[.,:;!?'"]+$/, '') });
  // HTML attributes.
  collect(/\b(?:href|src)\s*=\s*["']([^"']*)["']/g);
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.index - b.index)
    .map(({ index, target }) => ({ target, line: lineOf(text, index) }))
    .filter((link) => {
      // A reference definition's URL is also a bare URL: report it once.
      const key = `${link.line}\t${link.target}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

/**
 * What is wrong with one link of `file`, or `undefined` when it is fine: a
 * URL must be `http(s)` to the local stack; a path must stay inside
 * `root` and name an existing file or folder. A bare anchor (`#…`) is fine.
 */
export function linkProblem(target: string, file: string, root: string): string | undefined {
  if (target === '') return 'empty link';
  if (target.startsWith('#')) return undefined;
  if (/^www\./i.test(target)) return 'points outside the repository';
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return 'not a valid URL';
    }
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_STACK_HOSTS.includes(url.hostname)) return undefined;
    return 'points outside the repository';
  }
  if (target.startsWith('//')) return 'points outside the repository';
  let relative: string;
  try {
    relative = decodeURIComponent(target.replace(/[?#].*$/, ''));
  } catch {
    return 'not a valid path';
  }
  if (relative === '') return undefined;
  const resolved = relative.startsWith('/') ? path.join(root, relative) : path.resolve(path.dirname(file), relative);
  const inside = path.relative(root, resolved);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'leaves the repository';
  if (!existsSync(resolved)) return `${inside.split(path.sep).join('/') || '.'} does not exist`;
  return undefined;
}

/** The Markdown files the check covers: `README.md` and every `.md` under `docs/`, relative to `root`. */
export function documentationFiles(root: string): string[] {
  const files = existsSync(path.join(root, 'README.md')) ? ['README.md'] : [];
  const walk = (dir: string) => {
    if (!existsSync(path.join(root, dir))) return;
    for (const entry of readdirSync(path.join(root, dir)).sort()) {
      const relative = `${dir}/${entry}`;
      if (statSync(path.join(root, relative)).isDirectory()) walk(relative);
      else if (entry.endsWith('.md')) files.push(relative);
    }
  };
  walk('docs');
  return files;
}

/** Every broken or outside link of the documentation under `root`. */
export function checkDocumentationLinks(root: string): LinkProblem[] {
  const problems: LinkProblem[] = [];
  for (const file of documentationFiles(root)) {
    const absolute = path.join(root, file);
    for (const link of markdownLinks(readFileSync(absolute, 'utf8'))) {
      const problem = linkProblem(link.target, absolute, root);
      if (problem) problems.push({ file, line: link.line, target: link.target, problem });
    }
  }
  return problems;
}
