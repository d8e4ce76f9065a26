/**
 * Every citation in the repository resolves inside it (issue #38): code,
 * comments, CLI help, tests and docs cite the page of docs/ (or the README)
 * that states a rule, by root-relative path (`docs/launch.md`), optionally
 * with an anchor (`docs/launch.md#quote`) or a quoted heading
 * (`docs/data-model.md "Ledger order"`), never a section of the API specification
 * by its title, and never a numbered section of a
 * document a clone does not hold. The checker (test/support/citations.ts) is
 * proved on a fixture with planted bad citations first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCitations, citingFiles, headingAnchor } from './support/citations';

const ROOT = path.resolve(import.meta.dirname, '..');
const SECTION = '\u00a7';

/** Files whose citations are planted fixtures of a checker, not citations. */
const PLANTED = ['test/docs-links.test.ts', 'test/docs-citations.test.ts'];

describe('the repository', () => {
  it('is scanned whole: code, tests, docs, CLI and bench, not dependencies', () => {
    const files = citingFiles(ROOT);
    for (const file of [
      'README.md',
      'docs/launch.md',
      'lib/config.ts',
      'infra/ops/program.ts',
      'test/docs-citations.test.ts',
      'docs/openapi.json',
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((file) => file.startsWith('node_modules/') || file.startsWith('.git/'))).toEqual([]);
  });

  it('cites only pages, anchors and headings it holds, and no numbered section of an outside document', () => {
    expect(checkCitations(ROOT, PLANTED).map((p) => `${p.file}:${p.line} ${p.citation}: ${p.problem}`)).toEqual([]);
  });
});

describe('the checker, on a fixture with planted citations', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docs-citations-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'docs'));
  mkdirSync(path.join(root, 'lib'));
  mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(path.join(root, 'README.md'), '# Fixture\n\n## Set up\n\n```sh\n# Not a heading\n```\n');
  writeFileSync(path.join(root, 'docs', 'launch.md'), '# Launch\n\n## The credit ledger\n\n### `POST /v1/org/ledger` (newest first)\n');
  writeFileSync(path.join(root, 'node_modules', 'dep', 'index.js'), `// decisions ${SECTION}4 in a dependency is not ours\n`);
  writeFileSync(
    path.join(root, 'lib', 'code.ts'),
    [
      '/**',
      ` * Good: docs/launch.md, docs/launch.md#the-credit-ledger, README.md#set-up,`,
      ' * docs/launch.md "The credit ledger", docs/launch.md "POST /v1/org/ledger", client/README.md.',
      ` * Bad: decisions ${SECTION}4, Decisions ${SECTION}17, (decisions`,
      ` * ${SECTION}11) and a bare ${SECTION}3; docs/gone.md, docs/launch.md#quote, README.md#not-a-heading,`,
      ' * docs/launch.md "Quote"; spec "Errors", (spec',
      ' * "Enrich a campaign" 3-6).',
      ' */',
    ].join('\n'),
  );

  it('finds every planted problem, with its line, and nothing else', () => {
    expect(checkCitations(root).map((p) => `${p.file}:${p.line} ${p.citation}: ${p.problem.replace(/;.*/, '')}`)).toEqual([
      `lib/code.ts:4 decisions ${SECTION}4: cites a numbered section of a document the repository does not hold`,
      `lib/code.ts:4 Decisions ${SECTION}17: cites a numbered section of a document the repository does not hold`,
      `lib/code.ts:4 decisions * ${SECTION}11: cites a numbered section of a document the repository does not hold`,
      `lib/code.ts:5 ${SECTION}3: cites a numbered section of a document the repository does not hold`,
      'lib/code.ts:6 spec "Errors": cites a section of the API specification, which the repository does not hold',
      'lib/code.ts:6 spec * "Enrich a campaign": cites a section of the API specification, which the repository does not hold',
      'lib/code.ts:5 docs/gone.md: docs/gone.md does not exist',
      'lib/code.ts:5 docs/launch.md#quote: docs/launch.md has no heading whose anchor is #quote',
      'lib/code.ts:5 README.md#not-a-heading: README.md has no heading whose anchor is #not-a-heading',
      'lib/code.ts:6 docs/launch.md "Quote": docs/launch.md has no heading that begins "Quote"',
    ]);
  });

  it('passes once the planted citations are fixed', () => {
    writeFileSync(path.join(root, 'lib', 'code.ts'), '// docs/launch.md#the-credit-ledger, README.md#set-up\n');
    expect(checkCitations(root)).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(headingAnchor('Large account lists: upload first')).toBe('large-account-lists-upload-first');
    expect(headingAnchor('`invalid_request`')).toBe('invalid_request');
    expect(headingAnchor('Lifetime of stored data (issue #13)')).toBe('lifetime-of-stored-data-issue-13');
  });
});
