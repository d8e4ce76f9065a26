/**
 * The documentation a clone holds is whole (issue #33): every link of
 * README.md and docs/**\/*.md leads to a file of the repository, and none
 * leads outside it except to the running local stack. The checker itself is
 * proved on a fixture with planted broken links (test/support/markdown-links.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDocumentationLinks, documentationFiles, linkProblem, markdownLinks } from './support/markdown-links';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('the repository', () => {
  it('has README.md and the user guide under docs/', () => {
    const files = documentationFiles(ROOT);
    expect(files).toContain('README.md');
    for (const page of ['README', 'authentication', 'errors', 'pagination', 'idempotency', 'limits', 'webhooks', 'csv', 'lifetimes']) {
      expect(files).toContain(`docs/${page}.md`);
    }
  });

  it('links only to files inside it, or to the running local stack', () => {
    expect(checkDocumentationLinks(ROOT)).toEqual([]);
  });

  it('names no path outside the repository (numbered sections of outside documents: test/docs-citations.test.ts)', () => {
    for (const file of documentationFiles(ROOT)) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      expect({ file, cites: text.match(/shared\/spec\//g) ?? [] }).toEqual({ file, cites: [] });
    }
  });
});

describe('the checker, on a fixture with planted links', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docs-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'docs', 'deeper'), { recursive: true });
  mkdirSync(path.join(root, 'client'));
  writeFileSync(path.join(root, 'client', 'index.ts'), '');
  writeFileSync(path.join(root, 'docs', 'deeper', 'page.md'), '# Deeper\n\n[back up](../../README.md) [broken](../missing.md)\n');
  writeFileSync(
    path.join(root, 'docs', 'guide.md'),
    [
      '# Guide',
      '',
      'Good: [errors](errors.md#not_found) is checked as a file, [here](#guide), [client](../client/index.ts),',
      '[folder](../client/), ![chart](deeper/page.md "title"), <http://127.0.0.1:3000/docs>, http://localhost:3000/health.',
      '',
      '```sh',
      'curl https://example.com/inside-a-code-block [not a link](nowhere.md)',
      '```',
      '',
      'Code spans are not links: `[x](gone.md)` and `https://example.com`.',
      '',
      'Broken: [missing](errors.md) and [outside](../../etc/passwd) and [web](https://example.com/page).',
      'Also <https://example.org> and www.example.net and [ref][r] and <a href="http://example.com/x">x</a>.',
      '',
      '[r]: https://example.com/ref',
    ].join('\n'),
  );
  writeFileSync(
    path.join(root, 'README.md'),
    '# Fixture\n\n[guide](docs/guide.md), [gone](docs/gone.md), [mail](mailto:someone@example.com).\n',
  );

  it('finds every link outside code, with its line', () => {
    const links = markdownLinks(readFileSync(path.join(root, 'docs', 'guide.md'), 'utf8'));
    expect(links.map((link) => `${link.line} ${link.target}`)).toEqual([
      '3 errors.md#not_found',
      '3 #guide',
      '3 ../client/index.ts',
      '4 ../client/',
      '4 deeper/page.md',
      '4 http://127.0.0.1:3000/docs',
      '4 http://localhost:3000/health',
      '12 errors.md',
      '12 ../../etc/passwd',
      '12 https://example.com/page',
      '13 https://example.org',
      '13 www.example.net',
      '13 http://example.com/x',
      '15 https://example.com/ref',
    ]);
  });

  it('fails on every planted broken or outside link, and on nothing else', () => {
    expect(checkDocumentationLinks(root).map((p) => `${p.file}:${p.line} ${p.target}: ${p.problem}`)).toEqual([
      'README.md:3 docs/gone.md: docs/gone.md does not exist',
      'README.md:3 mailto:someone@example.com: points outside the repository',
      'docs/deeper/page.md:3 ../missing.md: docs/missing.md does not exist',
      'docs/guide.md:3 errors.md#not_found: docs/errors.md does not exist',
      'docs/guide.md:12 errors.md: docs/errors.md does not exist',
      'docs/guide.md:12 ../../etc/passwd: leaves the repository',
      'docs/guide.md:12 https://example.com/page: points outside the repository',
      'docs/guide.md:13 https://example.org: points outside the repository',
      'docs/guide.md:13 www.example.net: points outside the repository',
      'docs/guide.md:13 http://example.com/x: points outside the repository',
      'docs/guide.md:15 https://example.com/ref: points outside the repository',
    ]);
  });

  it('passes once the planted links are fixed', () => {
    writeFileSync(path.join(root, 'docs', 'errors.md'), '# Errors\n');
    writeFileSync(path.join(root, 'docs', 'gone.md'), '# Gone\n');
    writeFileSync(path.join(root, 'docs', 'missing.md'), '# Missing\n');
    expect(checkDocumentationLinks(root).map((p) => p.target)).toEqual([
      'mailto:someone@example.com',
      '../../etc/passwd',
      'https://example.com/page',
      'https://example.org',
      'www.example.net',
      'http://example.com/x',
      'https://example.com/ref',
    ]);
  });

  it('judges one link at a time', () => {
    const file = path.join(root, 'docs', 'guide.md');
    expect(linkProblem('http://127.0.0.1:3000/openapi.json', file, root)).toBeUndefined();
    expect(linkProblem('https://localhost/x', file, root)).toBeUndefined();
    expect(linkProblem('ftp://127.0.0.1/x', file, root)).toBe('points outside the repository');
    expect(linkProblem('//example.com/x', file, root)).toBe('points outside the repository');
    expect(linkProblem('/client/index.ts', file, root)).toBeUndefined();
    expect(linkProblem('guide%20copy.md', file, root)).toBe('docs/guide copy.md does not exist');
  });
});
