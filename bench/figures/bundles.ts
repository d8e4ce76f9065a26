/**
 * Figures "bundle size per function" and "cold init per function".
 *
 * Every function of the stack (API_ROUTES and WORKFLOW_TASKS) is bundled
 * with the CDK options (lib/bundle.ts) into bench/tmp/bundles. Size is the
 * minified `index.mjs` (gzip beside it). Cold init is the import of that file
 * in a fresh Node 24 process with the function's environment (including
 * credentials in the environment, as deployed), median of N runs,
 * interleaved across bundles, each run in an order drawn at random
 * ({@link shuffled}), so machine noise spreads evenly and no bundle always
 * follows the same one (the floor used to run last in every run). The floor is the
 * DynamoDB client and DocumentClient doing a GetItem, bundled with the SDK's
 * default credential chain (issue #18).
 *
 * To attribute the cost, the same is done for single-dependency bundles
 * (zod imported as `{ z }` and as `* as z`, the S3 stack, SFN, Powertools,
 * middy with the body parsers) and for CampaignsGet built with a change to
 * the bundling applied (or imported with Node's compile cache made at build
 * time); the per-package bytes come from esbuild's metafile and
 * a CPU profile of CampaignsGet's import shows where its init time goes.
 */
import path from 'node:path';
import { API_ROUTES, SUPPORT_FUNCTIONS } from '../../infra/routes';
import { WORKFLOW_TASKS } from '../../infra/workflow';
import {
  buildBundle,
  importMs,
  importProfile,
  lambdaEnvironment,
  PROJECT_ROOT,
  type BuiltBundle,
  type BundleVariation,
} from '../lib/bundle';
import type { Results } from '../lib/results';
import { median, percentileOfSorted, round, shuffled } from '../lib/stats';
import { readFileSync } from 'node:fs';
import { summarizeProfile, type CpuProfile } from '../lib/cpu-profile';

const KB = 1000;
/** Issue #18 budgets (KB = 1,000 bytes of index.mjs). */
const DYNAMODB_ONLY_API_KB = 320;
const WORKFLOW_KB = 260;
const S3_USER_KB = 540;
const LARGEST_KB = 540;
/** Issue #42 budget of the MCP function's bundle (KB = 1,000 bytes of index.mjs); test/infra/mcp-bundle.test.ts asserts it too. */
export const MCP_KB = 540;
/** Cold init over the SDK floor bundle's (DynamoDB client + DocumentClient), median against median. */
const INIT_BUDGET_RATIO = 0.95;

/**
 * The floor (issue #18): the DynamoDB client and DocumentClient doing a
 * GetItem, bundled with the SDK's own default credential chain, i.e. what a
 * function that does nothing but read one item costs when bundled naively.
 */
const FLOOR_SOURCE =
  "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb'; " +
  "const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({})); export const handler = () => ddb.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: { pk: 'a', sk: 'b' } }));";
const FLOOR_WHAT = 'DynamoDB client + DocumentClient GetItem, SDK default credential chain';
/**
 * The same read without DocumentClient: the low-level client's GetItem, the key marshalled and the item unmarshalled
 * by @aws-sdk/util-dynamodb (what DocumentClient does for us). Reported to tell whether the DynamoDB-only budget is
 * reachable at all with the SDK this service bundles; the product keeps DocumentClient.
 */
const LOW_LEVEL_FLOOR_SOURCE =
  "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb'; import { marshall, unmarshall } from '@aws-sdk/util-dynamodb'; " +
  'const ddb = new DynamoDBClient({}); export const handler = async () => { ' +
  "const { Item } = await ddb.send(new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: marshall({ pk: 'a', sk: 'b' }), ConsistentRead: true })); " +
  'return Item && unmarshall(Item); };';

/** Single-dependency bundles that show where size and init time come from. */
const PROBES: Record<string, string> = {
  'floor with the deployed options (environment-only credentials)': FLOOR_SOURCE,
  'DynamoDB client only': "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; export const client = new DynamoDBClient({});",
  'zod/mini, import * as z':
    "import * as z from 'zod/mini'; export const schema = z.strictObject({ a: z.string().check(z.minLength(1)), n: z.optional(z.int()) }); schema.parse({ a: 'x' });",
  'zod, import { z }':
    "import { z } from 'zod'; export const schema = z.strictObject({ a: z.string().min(1), n: z.int().optional() }); schema.parse({ a: 'x' });",
  'zod, import * as z (as lib/ does)':
    "import * as z from 'zod'; export const schema = z.strictObject({ a: z.string().min(1), n: z.int().optional() }); schema.parse({ a: 'x' });",
  'S3 client + lib-storage + presigner':
    "import { S3Client } from '@aws-sdk/client-s3'; import { Upload } from '@aws-sdk/lib-storage'; import { getSignedUrl } from '@aws-sdk/s3-request-presigner'; export const s3 = new S3Client({}); export { Upload, getSignedUrl };",
  'SFN client': "import { SFNClient } from '@aws-sdk/client-sfn'; export const sfn = new SFNClient({});",
  'DynamoDB document client (as lib/aws.ts)':
    "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'; export const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));",
  'Powertools logger + metrics':
    "import { Logger } from '@aws-lambda-powertools/logger'; import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'; import { Metrics } from '@aws-lambda-powertools/metrics'; export const l = new Logger(); export const m = new Metrics({ namespace: 'x' }); export { injectLambdaContext };",
  'middy + 3 body parsers':
    "import middy from '@middy/core'; import a from '@middy/http-json-body-parser'; import b from '@middy/http-urlencode-body-parser'; import c from '@middy/http-multipart-body-parser'; export const h = middy().use(a()).use(b()).use(c()).handler(async () => 1);",
};

/** CampaignsGet built with a proposed change applied, to measure the change before making it. */
const VARIANTS: Record<string, BundleVariation & { sourceMaps?: true; compileCache?: true }> = {
  'CampaignsGet as built': {},
  'CampaignsGet with a linked source map and NODE_OPTIONS=--enable-source-maps': { sourceMaps: true, sourcemap: true },
  'CampaignsGet with none of the deployed aliases (SDK default credential chain, event streams, endpoint discovery, node:http, busboy entry as built)':
    {
      alias: {},
    },
  'CampaignsGet, AWS SDK from the runtime (bundleAwsSDK: false)': { external: ['@aws-sdk/*'] },
  'CampaignsGet, SDK credential providers and their nested clients left to the runtime': {
    external: ['@aws-sdk/credential-provider-*', '@aws-sdk/nested-clients', '@aws-sdk/nested-clients/*', '@aws-sdk/token-providers'],
  },
  // Node's module compile cache (V8 code cache on disk), made by one import at build time and shipped beside the
  // bundle. Its directory is keyed by Node version, CPU architecture and V8 flags: a cache made on the build machine
  // (x64, this Node) is only read by the same Node on the same architecture, which Lambda (arm64, its own Node 24
  // patch release) is not. Measured here as the best case: the same machine reads it.
  'CampaignsGet with a compile cache made at build time (NODE_COMPILE_CACHE, portable; read only by the same Node version and CPU architecture)':
    { compileCache: true },
};

/** Environment of an import that reads (and, at build time, writes) the compile cache beside `file`. */
function compileCacheEnvironment(env: NodeJS.ProcessEnv, file: string): NodeJS.ProcessEnv {
  return { ...env, NODE_COMPILE_CACHE: path.join(path.dirname(file), '.node-compile-cache'), NODE_COMPILE_CACHE_PORTABLE: '1' };
}

export interface BundleOptions {
  runs: number;
  probeRuns: number;
  outDir: string;
}

/** Functions of the stack: API routes, the MCP server (issue #42 budget: ≤ 540 KB, a class of its own) and workflow tasks. */
export const FUNCTIONS = [
  ...API_ROUTES.map((r) => ({ name: r.functionId, entry: r.entry, workflow: false })),
  { name: SUPPORT_FUNCTIONS.mcp.functionId, entry: SUPPORT_FUNCTIONS.mcp.entry, workflow: false, mcp: true },
  ...Object.values(WORKFLOW_TASKS).map((t) => ({ name: t.functionId, entry: t.entry, workflow: true })),
];

/**
 * A function's class for the size budget, from what its bundle holds (esbuild metafile): an API function with no
 * AWS client but DynamoDB's is "DynamoDB only"; one with any other client (S3, Step Functions, SQS) is held to the
 * largest-bundle budget.
 */
export function bundleClass(fn: { workflow: boolean; mcp?: boolean }, bundle: BuiltBundle): { label: string; limit: number } {
  if (fn.mcp) return { label: 'MCP server', limit: MCP_KB };
  const has = (pkg: string) => bundle.byPackage.some(([name, bytes]) => name === pkg && bytes > 0);
  if (fn.workflow)
    return has('@aws-sdk/client-s3') ? { label: 'workflow, S3 user', limit: S3_USER_KB } : { label: 'workflow', limit: WORKFLOW_KB };
  // Every AWS client in the bundle but DynamoDB's (a function that sends SQS messages is not DynamoDB-only either).
  const others = bundle.byPackage
    .map(([name, bytes]) => (bytes > 0 && name.startsWith(CLIENT_PREFIX) && name !== '@aws-sdk/client-dynamodb' ? name : undefined))
    .filter((name) => name !== undefined)
    .sort((a, b) => (CLIENT_LABELS[a] ? 0 : 1) - (CLIENT_LABELS[b] ? 0 : 1) || a.localeCompare(b))
    .map((name) => CLIENT_LABELS[name] ?? name.slice(CLIENT_PREFIX.length).toUpperCase());
  if (!others.length) return { label: 'API, DynamoDB only', limit: DYNAMODB_ONLY_API_KB };
  return { label: `API, ${others.join(' + ')} user`, limit: LARGEST_KB };
}

const CLIENT_PREFIX = '@aws-sdk/client-';
/** Names of the AWS clients in the class labels (any other: its package suffix in capitals, e.g. `SQS`). */
const CLIENT_LABELS: Record<string, string> = { '@aws-sdk/client-s3': 'S3', '@aws-sdk/client-sfn': 'Step Functions' };

const kb = (bytes: number) => bytes / KB;
/** What `bundle` carries beyond `floor`, by package, the largest first (KB). */
const beyondDeployedFloor = (bundle: BuiltBundle, floor: BuiltBundle) => {
  const floorPackages = new Map(floor.byPackage);
  return bundle.byPackage
    .map(([name, bytes]) => [name, bytes - (floorPackages.get(name) ?? 0)] as const)
    .filter(([, bytes]) => bytes >= 2_000)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([name, bytes]) => `${name} ${Math.round(kb(bytes))}`)
    .join(', ');
};

const topPackages = (bundle: BuiltBundle, n: number) =>
  bundle.byPackage
    .slice(0, n)
    .map(([name, bytes]) => `${name} ${Math.round(kb(bytes))}`)
    .join(', ');

export async function runBundles(results: Results, options: BundleOptions): Promise<Map<string, BuiltBundle>> {
  const group = 'bundle size';
  const outDir = path.join(options.outDir, 'bundles');
  const built = new Map<string, BuiltBundle>();
  for (const fn of FUNCTIONS) built.set(fn.name, await buildBundle(fn.name, { entry: fn.entry }, outDir));
  const probes = new Map<string, BuiltBundle>();
  let i = 0;
  for (const [label, contents] of Object.entries(PROBES)) probes.set(label, await buildBundle(`probe-${i++}`, { contents }, outDir));
  const floor = await buildBundle('floor', { contents: FLOOR_SOURCE }, outDir, { alias: {} });
  // The floor's four corners: with and without DocumentClient, with the SDK's default credential chain and with the deployed options.
  const floors = {
    documentDeployed: probes.get('floor with the deployed options (environment-only credentials)')!,
    lowLevelDefault: await buildBundle('floor-low-level', { contents: LOW_LEVEL_FLOOR_SOURCE }, outDir, { alias: {} }),
    lowLevelDeployed: await buildBundle('floor-low-level-deployed', { contents: LOW_LEVEL_FLOOR_SOURCE }, outDir),
  };
  const variants = new Map<string, BuiltBundle>();
  i = 0;
  for (const [label, variation] of Object.entries(VARIANTS)) {
    const variant = await buildBundle(`variant-${i++}`, { entry: 'functions/campaigns-get.ts' }, outDir, variation);
    // The build step that would make the cache: one import with the cache enabled (Node writes it at exit).
    if (variation.compileCache) await importMs(variant.file, compileCacheEnvironment(lambdaEnvironment(false), variant.file));
    variants.set(label, variant);
  }

  for (const fn of FUNCTIONS) {
    const bundle = built.get(fn.name)!;
    const cls = bundleClass(fn, bundle);
    results.add({
      group,
      name: `${fn.name} (${cls.label})`,
      value: kb(bundle.bytes),
      unit: 'KB',
      budget: { op: '<=', limit: cls.limit, text: `≤ ${cls.limit} KB (${cls.label})` },
      floor: { value: kb(floor.bytes), unit: 'KB', what: FLOOR_WHAT },
      extra: { 'over the floor': `${round(kb(bundle.bytes) / kb(floor.bytes), 2)}×`, gzip: `${round(kb(bundle.gzipBytes), 1)} KB` },
    });
  }
  const largest = FUNCTIONS.map((f) => built.get(f.name)!).sort((a, b) => b.bytes - a.bytes)[0]!;
  results.add({
    group,
    name: `largest bundle (${largest.name})`,
    value: kb(largest.bytes),
    unit: 'KB',
    budget: { op: '<=', limit: LARGEST_KB, text: `≤ ${LARGEST_KB} KB` },
    floor: { value: kb(floor.bytes), unit: 'KB', what: FLOOR_WHAT },
  });
  // Is the DynamoDB-only budget reachable? The SDK floor measured four ways (reported, not budgeted).
  const floorRows: Array<[string, BuiltBundle]> = [
    ['DynamoDB client + DocumentClient GetItem, SDK default credential chain (the floor)', floor],
    ['DynamoDB client + util-dynamodb GetItem, no DocumentClient, SDK default credential chain', floors.lowLevelDefault],
    ['DynamoDB client + DocumentClient GetItem, deployed options (environment-only credentials)', floors.documentDeployed],
    ['DynamoDB client + util-dynamodb GetItem, no DocumentClient, deployed options', floors.lowLevelDeployed],
  ];
  for (const [label, b] of floorRows)
    results.add({
      group: 'SDK floor',
      name: label,
      value: kb(b.bytes),
      unit: 'KB',
      extra: {
        'of the DynamoDB-only budget': `${Math.round((kb(b.bytes) / DYNAMODB_ONLY_API_KB) * 100)} %`,
        gzip: `${round(kb(b.gzipBytes), 1)} KB`,
      },
    });
  const dynamoOnly = FUNCTIONS.map((f) => built.get(f.name)!).filter(
    (b) =>
      bundleClass(
        FUNCTIONS.find((f) => f.name === b.name)!,
        b,
      ).limit === DYNAMODB_ONLY_API_KB,
  );
  const deployedFloorKb = kb(floors.documentDeployed.bytes);
  results.note(
    'SDK floor',
    `Whether ${DYNAMODB_ONLY_API_KB} KB is reachable: DocumentClient itself costs ${Math.round(kb(floor.bytes) - kb(floors.lowLevelDefault.bytes))} KB over the low-level client with util-dynamodb ` +
      `(default chain), ${Math.round(deployedFloorKb - kb(floors.lowLevelDeployed.bytes))} KB with the deployed options; the credential chain is what separates the floor from the deployed bundles ` +
      `(${Math.round(kb(floor.bytes))} KB against ${Math.round(deployedFloorKb)} KB). The deployed functions are built with the deployed options, so their SDK floor is ${Math.round(deployedFloorKb)} KB ` +
      `and ${Math.round(DYNAMODB_ONLY_API_KB - deployedFloorKb)} KB of the budget is left for the service's own code and libraries` +
      (dynamoOnly.length
        ? `; the DynamoDB-only functions carry ${Math.round(Math.min(...dynamoOnly.map((b) => kb(b.bytes))) - deployedFloorKb)}–${Math.round(Math.max(...dynamoOnly.map((b) => kb(b.bytes))) - deployedFloorKb)} KB beyond it ` +
          `(largest packages beyond the deployed floor in CampaignsGet: ${beyondDeployedFloor(built.get('CampaignsGet') ?? dynamoOnly[0]!, floors.documentDeployed)}).`
        : '.'),
  );
  results.note(
    group,
    'Classes, from each bundle\'s esbuild metafile: "API, DynamoDB only" = an API function whose bundle holds no AWS client but @aws-sdk/client-dynamodb ' +
      `(≤ ${DYNAMODB_ONLY_API_KB} KB); "workflow" = a workflow task without the S3 client (≤ ${WORKFLOW_KB} KB), "workflow, S3 user" with it (≤ ${S3_USER_KB} KB); ` +
      `other API functions (users of S3, Step Functions or SQS) are held to the largest-bundle budget (≤ ${LARGEST_KB} KB).`,
  );
  results.note(
    group,
    `esbuild ${CDK_VERSION_NOTE}; 1 KB = 1,000 bytes; size of index.mjs without its .map. Bundles are in bench/tmp/bundles/<function>/index.mjs.`,
  );
  results.note(group, 'Largest packages in each bundle (KB of minified output, from the esbuild metafile):');
  results.note(group, '| function | KB | gzip KB | largest packages (KB) |');
  results.note(group, '|---|---:|---:|---|');
  for (const fn of FUNCTIONS) {
    const b = built.get(fn.name)!;
    results.note(group, `| ${fn.name} | ${Math.round(kb(b.bytes))} | ${Math.round(kb(b.gzipBytes))} | ${topPackages(b, 8)} |`);
  }
  const floorKb = kb(floor.bytes);
  const floorPackages = new Map(floor.byPackage);
  const beyondFloor = (b: BuiltBundle) =>
    b.byPackage
      .map(([name, bytes]) => [name, bytes - (floorPackages.get(name) ?? 0)] as const)
      .filter(([, bytes]) => bytes >= 5_000)
      .slice(0, 5)
      .map(([name, bytes]) => `${name} ${Math.round(kb(bytes))}`)
      .join(', ');
  const over = FUNCTIONS.filter((f) => kb(built.get(f.name)!.bytes) > bundleClass(f, built.get(f.name)!).limit).map((f) =>
    built.get(f.name)!,
  );
  results.note(
    group,
    `Cause: the floor (${FLOOR_WHAT}) is ${Math.round(floorKb)} KB (${Math.round((floorKb / DYNAMODB_ONLY_API_KB) * 100)} % of the DynamoDB-only budget): the SDK's core ` +
      `(@smithy/core, @aws-sdk/core, and @aws-sdk/nested-clients for the default credential chain) comes with any client unless the credential provider is narrowed (the deployed bundles use the environment-only provider). ` +
      (over.length
        ? `Over the budget, what each function carries beyond the floor (KB): ${over.map((b) => `${b.name} +${Math.round(kb(b.bytes) - floorKb)} (${beyondFloor(b)})`).join('; ')}.`
        : 'Every function fits.'),
  );
  results.note(group, 'Single-dependency bundles built with the same options (what each dependency costs on its own):');
  results.note(group, '| bundle | KB | gzip KB | largest packages (KB) |');
  results.note(group, '|---|---:|---:|---|');
  for (const [label, b] of probes)
    results.note(group, `| ${label} | ${Math.round(kb(b.bytes))} | ${Math.round(kb(b.gzipBytes))} | ${topPackages(b, 5)} |`);
  results.note(group, 'CampaignsGet with a suggested change applied at build time (lib/ untouched):');
  results.note(group, '| variant | KB | gzip KB | largest packages (KB) |');
  results.note(group, '|---|---:|---:|---|');
  for (const [label, b] of variants)
    results.note(group, `| ${label} | ${Math.round(kb(b.bytes))} | ${Math.round(kb(b.gzipBytes))} | ${topPackages(b, 5)} |`);

  // Cold init: interleaved runs, one process at a time, each run in an order drawn at random (no bundle always follows the same one).
  const initGroup = 'cold init';
  const deployed = lambdaEnvironment(false);
  const withMaps = lambdaEnvironment(true);
  const samples = new Map<string, number[]>();
  const probeSamples = new Map<string, number[]>();
  const variantSamples = new Map<string, number[]>();
  const record = (into: Map<string, number[]>, key: string, ms: number) => into.set(key, [...(into.get(key) ?? []), ms]);
  const imports = [
    ...[...FUNCTIONS.map((f) => ({ key: f.name, file: built.get(f.name)!.file })), { key: 'floor', file: floor.file }].map((t) => ({
      run: async () => record(samples, t.key, await importMs(t.file, deployed)),
      runs: options.runs,
    })),
    ...[...probes].map(([label, probe]) => ({
      run: async () => record(probeSamples, label, await importMs(probe.file, deployed)),
      runs: options.probeRuns,
    })),
    ...[...variants].map(([label, variant]) => {
      const variation = VARIANTS[label];
      const environment = variation?.sourceMaps
        ? withMaps
        : variation?.compileCache
          ? compileCacheEnvironment(deployed, variant.file)
          : deployed;
      return { run: async () => record(variantSamples, label, await importMs(variant.file, environment)), runs: options.probeRuns };
    }),
  ];
  // Each import takes part in the first `runs` runs (functions and floor: options.runs; probes and variants: options.probeRuns).
  for (let run = 0; imports.some((i) => run < i.runs); run++) {
    for (const due of shuffled(imports.filter((i) => run < i.runs))) await due.run();
  }
  const floorMs = median(samples.get('floor')!);
  for (const fn of FUNCTIONS) {
    const list = samples.get(fn.name)!;
    results.add({
      group: initGroup,
      name: `${fn.name}: cold init / SDK floor`,
      value: median(list) / floorMs,
      unit: '×',
      budget: { op: '<=', limit: INIT_BUDGET_RATIO, text: `≤ ${INIT_BUDGET_RATIO}×` },
      floor: { value: floorMs, unit: 'ms', what: `${FLOOR_WHAT}, median import` },
      extra: {
        median: `${round(median(list), 1)} ms`,
        min: `${round(Math.min(...list), 1)} ms`,
        p90: `${round(
          percentileOfSorted(
            [...list].sort((a, b) => a - b),
            90,
          ),
          1,
        )} ms`,
      },
    });
  }
  results.note(
    initGroup,
    `Median of ${options.runs} imports per bundle, each in a fresh \`${process.execPath} --input-type=module -e "await import(bundle)"\` (${process.version}), timed inside the process around the import; environment as deployed (no NODE_OPTIONS, POWERTOOLS_*, credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, dummy TABLE_NAME/BUCKET_NAME/CURSOR_SECRET/STATE_MACHINE_ARN). Runs are interleaved across bundles, each run in an order drawn at random. Floor median ${round(floorMs, 1)} ms.`,
  );
  const medians = FUNCTIONS.map((f) => median(samples.get(f.name)!));
  results.note(
    initGroup,
    `The SDK floor (DynamoDB client + DocumentClient with the default credential chain, ${Math.round(floorKb)} KB) imports in ${round(floorMs, 1)} ms on this machine (budget: each function ≤ ${INIT_BUDGET_RATIO}× that); ` +
      `the functions take ${round(Math.min(...medians), 0)} to ${round(Math.max(...medians), 0)} ms (${round(Math.min(...medians) - floorMs, 0)} to ${round(Math.max(...medians) - floorMs, 0)} ms beyond the floor), ` +
      'growing with bundle size: V8 compiles the whole module and evaluates every bundled module at import (profile below).',
  );
  results.note(
    initGroup,
    `Import time of single-dependency bundles (median of ${options.probeRuns}, environment as deployed), i.e. what each dependency adds to init on its own:`,
  );
  results.note(initGroup, '| bundle | KB | import ms |');
  results.note(initGroup, '|---|---:|---:|');
  for (const [label, b] of probes)
    results.note(initGroup, `| ${label} | ${Math.round(kb(b.bytes))} | ${round(median(probeSamples.get(label) ?? [Number.NaN]), 1)} |`);
  results.note(
    initGroup,
    `CampaignsGet with a suggested change applied at build time (median of ${options.probeRuns}; environment as deployed unless the row says otherwise; an external SDK loads from node_modules as the Lambda runtime loads its own):`,
  );
  results.note(initGroup, '| variant | KB | import ms |');
  results.note(initGroup, '|---|---:|---:|');
  for (const [label, b] of variants)
    results.note(initGroup, `| ${label} | ${Math.round(kb(b.bytes))} | ${round(median(variantSamples.get(label) ?? [Number.NaN]), 1)} |`);

  // Where CampaignsGet's init time goes: CPU profiles of its import, mapped through the bundle's source map.
  const getBundle = built.get('CampaignsGet');
  if (getBundle) {
    const totals = new Map<string, number>();
    const frames = new Map<string, number>();
    let total = 0;
    const profiles = Math.min(5, options.runs);
    for (let i = 0; i < profiles; i++) {
      const file = await importProfile(
        getBundle.file,
        deployed,
        path.join(options.outDir, 'profiles'),
        `init-CampaignsGet-${i}.cpuprofile`,
      );
      const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, {
        [`file://${getBundle.file}`]: `${getBundle.file}.map`,
      });
      for (const [owner, ms] of summary.byOwner) {
        if (owner === '(idle)') continue;
        totals.set(owner, (totals.get(owner) ?? 0) + ms / profiles);
        total += ms / profiles;
      }
      for (const [frame, ms] of summary.byFrame) if (frame !== '(idle)') frames.set(frame, (frames.get(frame) ?? 0) + ms / profiles);
    }
    const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 12);
    results.note(
      initGroup,
      `Where CampaignsGet's import time goes (--cpu-prof at 100 µs, mean of ${profiles} imports, self time mapped to sources through the bundle's source map; ` +
        `"(program)" is V8 parsing/compiling outside JS frames): ${top.map(([owner, ms]) => `${owner} ${round(ms, 1)} ms (${Math.round((ms / total) * 100)} %)`).join(', ')} — ${round(total, 1)} ms busy. ` +
        `Heaviest frames: ${[...frames]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 10)
          .map(([frame, ms]) => `${frame} ${round(ms, 1)} ms`)
          .join(', ')}.`,
    );
  }
  return built;
}

const CDK_VERSION_NOTE = `options of infra/constructs/service-function.ts (BUNDLING: ESM, node24, minify, no keepNames, no source map, createRequire banner, mainFields module/main, SDK bundled, @aws-sdk/credential-provider-node aliased to lib/lambda/env-credentials.ts), run from ${PROJECT_ROOT}`;
