/**
 * The text of every API function's bundle as the stack deploys it (the CDK's
 * esbuild options, bench/lib/bundle.ts), for tests that read what a function
 * carries (test/infra/bundle-schemas.test.ts, test/error-coverage.test.ts).
 *
 * One esbuild call builds them all, one entry point per function and no
 * code splitting: each output is byte for byte what a build of that entry
 * alone gives (checked for all 35 functions), in about a fifth of the time
 * of one build per function.
 */
import path from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { CDK_BUNDLE_OPTIONS, PROJECT_ROOT } from '../../bench/lib/bundle';
import { API_ROUTES } from '../../infra/routes';

/**
 * Builds every route's function (infra/routes.ts) in memory.
 * @param overrides - esbuild options over the CDK's (e.g. `{ minify: false }`).
 * @returns each bundle's text by the route's `functionId`.
 */
export async function routeBundles(overrides: BuildOptions = {}): Promise<Map<string, string>> {
  const result = await build({
    ...CDK_BUNDLE_OPTIONS,
    ...overrides,
    absWorkingDir: PROJECT_ROOT,
    entryPoints: API_ROUTES.map((route) => ({ in: path.join(PROJECT_ROOT, route.entry), out: route.functionId })),
    outdir: path.join('/tmp', 'route-bundles'),
    outExtension: { '.js': '.mjs' },
    write: false,
    logLevel: 'silent',
  });
  const byFile = new Map(result.outputFiles.map((file) => [path.basename(file.path), file.text]));
  return new Map(API_ROUTES.map((route) => [route.functionId, byFile.get(`${route.functionId}.mjs`)!]));
}
