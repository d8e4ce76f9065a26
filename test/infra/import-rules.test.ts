/**
 * The house's import rules (.dependency-cruiser.cjs, docs/architecture.md;
 * docs/architecture.md): the real tree passes them, and each rule fails on a
 * planted violation, so the CI step that runs them (`npm run lint:imports`)
 * cannot pass by accident.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

/** Runs the rule check in `cwd` over `paths`; resolves with its exit code and output. */
async function cruise(cwd: string, paths: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [DEPCRUISE, '--config', '.dependency-cruiser.cjs', '--output-type', 'err', ...paths],
      { cwd },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const fixtures: string[] = [];
afterAll(() => fixtures.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A throw-away tree with the real rule file and tsconfig, and the given files (path → source). */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'import-rules-'));
  fixtures.push(dir);
  copyFileSync(path.join(ROOT, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'preserve', moduleResolution: 'bundler', strict: true } }),
  );
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

describe('import rules', () => {
  it('the repository has no violation and no circular import in lib/, functions/, infra/ and bin/', async () => {
    const result = await cruise(ROOT, ['lib', 'functions', 'infra', 'bin']);
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  });

  it.each<{ rule: string; files: Record<string, string> }>([
    {
      rule: 'no-upward-from-domain-history',
      files: {
        'lib/enrichment/launch.ts': 'export const launch = 1;\n',
        'lib/history/store.ts': "import { launch } from '../enrichment/launch';\nexport const x = launch;\n",
      },
    },
    {
      rule: 'pipeline-and-ground-import-no-domain',
      files: {
        'lib/campaigns/model.ts': 'export const status = 1;\n',
        'lib/http/pipeline.ts': "import { status } from '../campaigns/model';\nexport const x = status;\n",
      },
    },
    {
      rule: 'no-circular',
      files: {
        'lib/credits/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
        'lib/credits/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
      },
    },
    {
      rule: 'functions-through-root',
      files: {
        'lib/campaigns/use-cases.ts': 'export const getCampaign = 1;\n',
        'functions/campaigns-get.ts': "import { getCampaign } from '../lib/campaigns/use-cases';\nexport const handler = getCampaign;\n",
      },
    },
    {
      rule: 'every-lib-module-on-a-floor',
      files: {
        'lib/newfolder/thing.ts': 'export const thing = 1;\n',
        'lib/root.ts': "import { thing } from './newfolder/thing';\nexport const x = thing;\n",
      },
    },
  ])('a planted violation of $rule fails the check (non-zero exit, the rule named)', async ({ rule, files }) => {
    const dir = tree(files);
    const result = await cruise(
      dir,
      Object.keys(files)
        .map((file) => file.split('/')[0]!)
        .filter((top, i, all) => all.indexOf(top) === i),
    );
    expect(result.output).toContain(rule);
    expect(result.code).not.toBe(0);
  });
});
