/**
 * The citation checker of test/docs-citations.test.ts: every file of the
 * repository may cite only what a clone holds. A citation is a root-relative
 * path of a Markdown page (`docs/launch.md`, `README.md`), optionally with an
 * anchor (`docs/launch.md#quote`, checked against the page's headings) or
 * followed by a quoted heading (`docs/data-model.md "Ledger order"`, which
 * must begin a heading of the page). A numbered section of a document the
 * repository does not hold ("decisions" plus a section sign and a number, or
 * a bare section sign and a number) is always a problem: a maintainer cannot
 * resolve it. So is a section of the API specification cited by its title
 * (the word spec, then a quoted title): the specification is not in the repository either.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { withoutCode } from './markdown-links';

/** One citation that does not resolve inside the repository. */
export interface CitationProblem {
  /** File that cites, relative to the root, with `/` separators. */
  file: string;
  /** 1-based line of the citation. */
  line: number;
  /** The citation as written. */
  citation: string;
  /** Why it does not resolve. */
  problem: string;
}

/** Folders never scanned: dependencies, git's own, and what .gitignore keeps out of a clone. */
const SKIPPED_FOLDERS = new Set(['node_modules', '.git', 'cdk.out', '.local', 'coverage', 'tmp', 'dist', '.venv-judges', '.schemathesis']);

/** Files larger than this (bytes) are data, not prose: not scanned. */
const MAX_SCANNED_BYTES = 4_000_000;

const SECTION = '\u00a7';
/** A numbered section of an outside document: "decisions" + section sign + digits, or a bare section sign + digits. */
const SECTION_CITATION = new RegExp(`(?:\\bdecisions\\s*(?:\\*\\s*|//\\s*)?)?${SECTION}\\s*\\d+`, 'gi');
/** A section of the API specification cited by its title: the word spec, then a quoted title, possibly on the next comment line. */
const SPEC_CITATION = /\bspec(?:\s|\*|\/\/)*"[A-Za-z][^"\n]*"?/gi;
/** A root-relative Markdown page, an optional anchor, an optional quoted heading after it. */
const PAGE_CITATION = /(?<![\w./-])((?:docs\/[\w./-]*?|)(?:[\w-]+)\.md)(#[\w-]+)?(?: "([^"\n]+)")?/g;

/** Every text file under `root` the check covers, relative to `root`, sorted. */
export function citingFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir)).sort()) {
      if (SKIPPED_FOLDERS.has(entry)) continue;
      const relative = dir ? `${dir}/${entry}` : entry;
      const stat = statSync(path.join(root, relative));
      if (stat.isDirectory()) walk(relative);
      else if (stat.size <= MAX_SCANNED_BYTES) files.push(relative);
    }
  };
  walk('');
  return files;
}

/** The GitHub anchor of a heading: lower-cased, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a Markdown text (code blocks excluded), as written, without the leading `#`s. */
export function markdownHeadings(markdown: string): string[] {
  // withoutCode blanks fenced blocks (and code spans); a line it keeps non-empty is read as written, code spans included.
  const outsideFences = withoutCode(markdown).split('\n');
  return markdown
    .split('\n')
    .filter((_, index) => (outsideFences[index] ?? '').trim() !== '')
    .map((line) => /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1])
    .filter((heading): heading is string => heading !== undefined);
}

/** Headings as they read in prose: code marks and link syntax dropped, lower-cased. */
const plainHeading = (heading: string) =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .toLowerCase();

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/**
 * Every problem of the citations in `text` (the content of `file`, relative to
 * `root`): sections of outside documents, pages that do not exist, anchors and
 * quoted headings the page does not have.
 */
export function citationProblems(root: string, file: string, text: string): CitationProblem[] {
  const problems: CitationProblem[] = [];
  if (text.includes('\u0000')) return problems;
  for (const match of text.matchAll(SECTION_CITATION)) {
    problems.push({
      file,
      line: lineOf(text, match.index),
      citation: match[0].replace(/\s+/g, ' '),
      problem: 'cites a numbered section of a document the repository does not hold; cite the docs/ page that states the rule',
    });
  }
  for (const match of text.matchAll(SPEC_CITATION)) {
    problems.push({
      file,
      line: lineOf(text, match.index),
      citation: match[0].replace(/\s+/g, ' '),
      problem: 'cites a section of the API specification, which the repository does not hold; cite the docs/ page that states the rule',
    });
  }
  for (const match of text.matchAll(PAGE_CITATION)) {
    const [citation, page = '', anchor, quoted] = match;
    if (!page.startsWith('docs/') && page !== 'README.md') continue;
    const absolute = path.join(root, page);
    const line = lineOf(text, match.index);
    if (!existsSync(absolute)) {
      problems.push({ file, line, citation, problem: `${page} does not exist` });
      continue;
    }
    if (!anchor && !quoted) continue;
    const headings = markdownHeadings(readFileSync(absolute, 'utf8'));
    if (anchor && !headings.some((heading) => headingAnchor(heading) === anchor.slice(1))) {
      problems.push({ file, line, citation, problem: `${page} has no heading whose anchor is ${anchor}` });
    }
    if (quoted && !headings.some((heading) => plainHeading(heading).startsWith(plainHeading(quoted)))) {
      problems.push({ file, line, citation, problem: `${page} has no heading that begins "${quoted}"` });
    }
  }
  return problems;
}

/** Every unresolvable citation of every file under `root`, except the files in `planted` (checker fixtures). */
export function checkCitations(root: string, planted: readonly string[] = []): CitationProblem[] {
  return citingFiles(root)
    .filter((file) => !planted.includes(file))
    .flatMap((file) => citationProblems(root, file, readFileSync(path.join(root, file), 'utf8')));
}
