/**
 * The deployed bundles are minified without esbuild's keepNames
 * (infra/constructs/service-function.ts), so a class's own name is mangled
 * there: every error class must spell its `name` out, as logs, Lambda's
 * `errorType` and Step Functions' `ErrorEquals` read it. The classes are
 * checked as the stack bundles them (bench/lib/bundle.ts options).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { CDK_BUNDLE_OPTIONS, PROJECT_ROOT } from '../../bench/lib/bundle';

/** Error classes outside lib/errors.ts that cross a process boundary, by the name they must carry. */
const OTHER_ERRORS = {
  AttemptSuperseded: 'lib/enrichment/steps.ts#AttemptSupersededError',
  ResultPartFormatError: 'lib/results/parts.ts#ResultPartFormatError',
  DeadlineExceededError: 'lib/http/deadline.ts#DeadlineExceededError',
  PrefixDeleteError: 'lib/storage/prefixes.ts#PrefixDeleteError',
  ImportFileError: 'lib/warehouse/import.ts#ImportFileError',
};

type ErrorClass = new (...args: unknown[]) => Error;
const instance = (cls: ErrorClass) => Reflect.construct(cls, ['campaign', 'x', ['POST']]) as Error;

describe('error names survive the deployed minification', () => {
  let dir: string;
  let bundled: { apiErrors: Record<string, unknown>; others: Record<string, ErrorClass> };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'error-names-'));
    const imports = Object.entries(OTHER_ERRORS).map(([name, ref], i) => {
      const [file, symbol] = ref.split('#');
      return { line: `import { ${symbol} as E${i} } from './${file!.replace(/\.ts$/, '')}';`, entry: `${JSON.stringify(name)}: E${i}` };
    });
    const contents = `import * as apiErrors from './lib/errors';\n${imports.map((i) => i.line).join('\n')}\nexport const bundled = { apiErrors, others: { ${imports.map((i) => i.entry).join(', ')} } };`;
    const outfile = path.join(dir, 'errors.mjs');
    await build({
      ...CDK_BUNDLE_OPTIONS,
      absWorkingDir: PROJECT_ROOT,
      stdin: { contents, resolveDir: PROJECT_ROOT, loader: 'ts' },
      outfile,
    });
    ({ bundled } = (await import(pathToFileURL(outfile).href)) as { bundled: typeof bundled });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every API error class of lib/errors.ts names itself after its class', () => {
    const classes = Object.entries(bundled.apiErrors).filter(
      ([, value]) => typeof value === 'function' && (value as ErrorClass).prototype instanceof Error,
    ) as Array<[string, ErrorClass]>;
    expect(classes.length).toBeGreaterThan(15);
    for (const [exported, cls] of classes) expect(instance(cls).name, exported).toBe(exported);
  });

  it('the workflow, storage and import errors carry their spelled-out names', () => {
    for (const [name, cls] of Object.entries(bundled.others)) expect(instance(cls).name).toBe(name);
  });
});
