/**
 * The figures of README.md and docs/ that follow from the code are the code's
 * (issue #38): the settings table and the defaults (lib/config.ts `SETTINGS`),
 * the stage throttle and reserved concurrency (infra/stack.ts `STAGES`) and
 * the arithmetic between them, written by `npm run openapi:write`
 * (scripts/docs-figures.ts). A changed default without regenerating fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../lib/config';
import { ERROR_STATUS } from '../lib/errors';
import { STAGES } from '../infra/stack';
import { FILES_WITH_FIGURES, generateFigureFiles, renderFigures } from '../scripts/docs-figures';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('generated figures', () => {
  it('are what the code generates, in every file that has them', () => {
    for (const [file, expected] of generateFigureFiles(ROOT)) {
      expect({ file: path.relative(ROOT, file), stale: readFileSync(file, 'utf8') !== expected }).toEqual({
        file: path.relative(ROOT, file),
        stale: false,
      });
    }
  });

  it('list every declared setting in the README, with its default', () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('<!-- generated:settings -->'), readme.indexOf('<!-- /generated:settings -->'));
    for (const setting of Object.values(SETTINGS)) {
      const row = table.split('\n').find((line) => line.startsWith(`| \`${setting.env}\` |`));
      expect(row, setting.env).toBeDefined();
      if (typeof (setting as { default?: unknown }).default === 'number') {
        expect(row).toContain(`| ${(setting as { default: number }).default.toLocaleString('en-US')}`);
      }
    }
  });

  it('state the stage throttle of infra/stack.ts', () => {
    const deploy = read('docs/deploy.md');
    for (const [stage, settings] of Object.entries(STAGES)) {
      expect(deploy).toContain(
        `| ${stage} | ${settings.throttle.rateLimit.toLocaleString('en-US')} | ${settings.throttle.burstLimit.toLocaleString('en-US')} |`,
      );
    }
  });

  it("go stale when a default changes: the README, docs/limits.md, and docs/test-mode.md for the test twin's, then differ", () => {
    const declared = SETTINGS.rateLimitRequests as { default: number };
    const before = declared.default;
    try {
      declared.default = before + 100;
      const changed = FILES_WITH_FIGURES.filter((file) => renderFigures(read(file), file) !== read(file));
      expect(changed).toEqual(['README.md', 'docs/limits.md', 'docs/deploy.md']);
      expect(renderFigures(read('docs/limits.md'), 'docs/limits.md')).toContain(
        `q=${before + 100};w=${SETTINGS.rateLimitWindowSeconds.default}`,
      );
    } finally {
      declared.default = before;
    }
    // The test twin's own limits are figures of the test-mode page too.
    const testDeclared = SETTINGS.testRateLimitRequests as { default: number };
    const testBefore = testDeclared.default;
    try {
      testDeclared.default = testBefore + 7;
      const changed = FILES_WITH_FIGURES.filter((file) => renderFigures(read(file), file) !== read(file));
      expect(changed).toEqual(['README.md', 'docs/limits.md', 'docs/test-mode.md']);
      expect(renderFigures(read('docs/test-mode.md'), 'docs/test-mode.md')).toContain(`${testBefore + 7} per`);
    } finally {
      testDeclared.default = testBefore;
    }
  });

  it('docs/errors.md explains every code the API has, under its status', () => {
    const errors = read('docs/errors.md');
    const missing = Object.entries(ERROR_STATUS).filter(([code, status]) => {
      const section = errors.indexOf(`### \`${code}\``);
      return section < 0 || errors.lastIndexOf(`\n## ${status}`, section) < 0;
    });
    expect(
      missing.map(([code]) => code),
      'codes without a "### `code`" section under their "## status" in docs/errors.md',
    ).toEqual([]);
  });

  it('refuse an unknown generator and a block closed under another name', () => {
    expect(() => renderFigures('<!-- figure:nope -->1<!-- /figure -->', 'x.md')).toThrow('no generator for figure nope');
    expect(() => renderFigures('<!-- generated:settings -->\n<!-- /generated:stage-throttle -->', 'x.md')).toThrow(
      'closed as stage-throttle',
    );
  });
});
