/**
 * Bundling exactly as the CDK stack bundles each function, and timing a
 * bundle's import in a fresh Node process.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING, DEFAULT_ENVIRONMENT, PROJECT_ROOT } from '../../infra/constructs/service-function';

const run = promisify(execFile);

/** The repository root (esbuild runs from it, like CDK's local bundling). */
export { PROJECT_ROOT };

/**
 * esbuild options of a bundling as CDK turns it into an esbuild command line
 * (aws-cdk-lib/aws-lambda-nodejs: `--bundle --platform=node --target=… --format=…
 * --minify --sourcemap --sources-content=false [--keep-names] --banner:js=…
 * --main-fields=… --alias:…=…`, run from the project root). `bundleAwsSDK: true`
 * and `externalModules: []` mean no externals. An option this translation
 * does not know throws, so the bench cannot silently build something CDK does not.
 */
export function esbuildOptionsOf(bundling: BundlingOptions): BuildOptions {
  const known = new Set([
    'format',
    'target',
    'mainFields',
    'banner',
    'minify',
    'keepNames',
    'sourceMap',
    'sourcesContent',
    'bundleAwsSDK',
    'externalModules',
    'forceDockerBundling',
    'esbuildArgs',
    'define',
  ]);
  const unknown = Object.keys(bundling).filter((key) => !known.has(key));
  if (unknown.length)
    throw new Error(`bench/lib/bundle.ts does not translate the bundling option(s) ${unknown.join(', ')}: add them to esbuildOptionsOf`);
  if (!bundling.bundleAwsSDK || (bundling.externalModules?.length ?? 0) > 0)
    throw new Error('esbuildOptionsOf expects bundleAwsSDK: true and no externalModules');
  const alias: Record<string, string> = {};
  for (const [key, value] of Object.entries(bundling.esbuildArgs ?? {})) {
    const match = /^--alias:(.+)$/.exec(key);
    if (!match || typeof value !== 'string') throw new Error(`esbuildOptionsOf does not translate the esbuild argument ${key}`);
    alias[match[1]!] = value;
  }
  return {
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format: bundling.format,
    minify: bundling.minify ?? false,
    keepNames: bundling.keepNames ?? false,
    sourcemap: bundling.sourceMap ?? false,
    sourcesContent: bundling.sourcesContent ?? true,
    ...(bundling.mainFields ? { mainFields: [...bundling.mainFields] } : {}),
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    ...(bundling.define ? { define: { ...bundling.define } } : {}),
    alias,
    external: [],
    logLevel: 'warning',
  };
}

/** esbuild options of the deployed functions: `BUNDLING` of infra/constructs/service-function.ts, translated. */
export const CDK_BUNDLE_OPTIONS: BuildOptions = esbuildOptionsOf(BUNDLING);

/** A built bundle. */
export interface BuiltBundle {
  name: string;
  file: string;
  /** Size of `index.mjs` (bytes, without the .map). */
  bytes: number;
  gzipBytes: number;
  /** Bytes in the output by package (`zod`, `@aws-sdk/client-s3`, `lib/…`). */
  byPackage: Array<[string, number]>;
}

function byPackage(metafile: Metafile): Array<[string, number]> {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined) ?? Object.values(metafile.outputs)[0]!;
  const totals = new Map<string, number>();
  for (const [file, input] of Object.entries(output.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = match ? match[1]! : file.split('/').slice(0, 2).join('/');
    totals.set(key, (totals.get(key) ?? 0) + input.bytesInOutput);
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/** Variations of the CDK options, to measure a proposed change before making it. */
export interface BundleVariation {
  /** Packages left out of the bundle (e.g. the SDK, as `bundleAwsSDK: false` would). */
  external?: string[];
  plugins?: Plugin[];
  /** Replaces the bundling's aliases (`{}` builds with the SDK's own default credential chain). */
  alias?: Record<string, string>;
  /** A linked `.map` (what `sourceMap: true` would ship). */
  sourcemap?: boolean;
}

/** Builds one bundle to `<outDir>/<name>/index.mjs`, from an entry file or from source text. */
export async function buildBundle(
  name: string,
  source: { entry: string } | { contents: string },
  outDir: string,
  variation: BundleVariation = {},
): Promise<BuiltBundle> {
  const dir = path.join(outDir, name);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'index.mjs');
  const result = await build({
    ...CDK_BUNDLE_OPTIONS,
    absWorkingDir: PROJECT_ROOT,
    ...('entry' in source
      ? { entryPoints: [path.join(PROJECT_ROOT, source.entry)] }
      : { stdin: { contents: source.contents, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: `${name}.ts` } }),
    outfile: file,
    metafile: true,
    // The deployed bundles have no map; the bench writes one beside index.mjs without
    // referencing it (index.mjs stays byte-identical), to map CPU profiles to sources.
    ...(CDK_BUNDLE_OPTIONS.sourcemap ? {} : { sourcemap: 'external' as const }),
    ...(variation.external ? { external: variation.external } : {}),
    ...(variation.plugins ? { plugins: variation.plugins } : {}),
    ...(variation.alias ? { alias: variation.alias } : {}),
    ...(variation.sourcemap ? { sourcemap: true } : {}),
  });
  return { name, file, bytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file)).length, byPackage: byPackage(result.metafile) };
}

/**
 * Environment of a cold start: the variables the stack gives every function
 * (`DEFAULT_ENVIRONMENT` of infra/constructs/service-function.ts), with dummy
 * resource names and credentials in the environment as Lambda provides them.
 * `sourceMaps` adds `NODE_OPTIONS=--enable-source-maps` (not deployed; a what-if).
 */
export function lambdaEnvironment(sourceMaps: boolean): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    TABLE_NAME: 'campaign-enrichment-bench',
    BUCKET_NAME: 'campaign-enrichment-bench',
    CURSOR_SECRET: 'bench-cursor-secret',
    STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:bench',
    ...DEFAULT_ENVIRONMENT,
    ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
  };
}

/**
 * Runs the import of `file` under `--cpu-prof` (100 µs sampling) in a fresh
 * process and returns the profile's path, for attributing init time.
 */
export async function importProfile(file: string, env: NodeJS.ProcessEnv, dir: string, name: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const script = `await import(${JSON.stringify(`file://${file}`)});`;
  await run(
    process.execPath,
    ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', dir, '--cpu-prof-name', name, '--input-type=module', '-e', script],
    { env, cwd: path.dirname(file) },
  );
  return path.join(dir, name);
}

/**
 * Milliseconds the import of `file` takes in a fresh Node process
 * (`process.execPath`, the pinned Node 24), measured inside that process.
 */
export async function importMs(file: string, env: NodeJS.ProcessEnv): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(`file://${file}`)}); console.log(performance.now() - t);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env, cwd: path.dirname(file) });
  const ms = Number(stdout.trim().split('\n').at(-1));
  if (!Number.isFinite(ms)) throw new Error(`Could not read the import time of ${file}: ${stdout}`);
  return ms;
}
