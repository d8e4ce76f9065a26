/**
 * `npm run bench`: what users pay for, in time and money, measured on one
 * machine (issue "Benchmarks"). Writes `bench/results.json` and
 * `bench/RESULTS.md`: each figure beside its budget and, where one exists,
 * the floor measured in the same run; then the SVG charts next to them
 * (bench/lib/charts.ts, also `npm run bench:charts`).
 *
 *   npm run bench                      full run (100,000 accounts; about 25 minutes on 2 idle cores, bench/README.md)
 *   npm run bench -- --quick           smaller sizes, a smoke run (writes to bench/tmp/)
 *   npm run bench -- --only=latency    one or more figure modules (comma-separated; writes to bench/tmp/)
 *   npm run bench -- --out=DIR         where results.json and RESULTS.md go
 *   npm run bench -- --accounts=20000  another campaign size for the scale figures (writes to bench/tmp/)
 *   npm run bench -- --profile         also CPU-profile this process during launch and workflow (adds overhead)
 *
 * Modules: bundles (size + cold init), pipeline, round-trips, latency,
 * sustained, list-page, accounts-page (1,000 and 100,000 accounts in every
 * mode), scale (launch evaluation, workflow, export, stored bytes after
 * expiry, CPU per function and its time on Lambda, the cost model of
 * bench/lib/cost.ts), readiness (`npm start` on a data folder of 100,000
 * items until /health answers 200; its own child processes and data folder).
 *
 * The stack (DynamoDB Local, s3rver, local Step Functions, API server) runs
 * in this process, as in the tests; load generators and the export Lambda
 * run in child processes (bench/children) so they do not share the server's
 * event loop.
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Results, storedRun, writeJson, writeMarkdown, type RunInfo } from './lib/results';
import type { BenchStack } from './lib/stack';

const BENCH_DIR = import.meta.dirname;
const TMP_DIR = path.join(BENCH_DIR, 'tmp');
/** Scale figures of every non-quick run that measured them, by campaign size (the scale chart's points). */
const SCALE_POINTS_FILE = path.join(BENCH_DIR, 'scale-runs.json');

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'boolean', default: false },
    accounts: { type: 'string' },
    // The largest history of the history module (full run: 1,000,000; the 10,000,000 point alone takes ~20 min on 2 cores).
    'history-max': { type: 'string' },
  },
});

const MODULES = [
  'bundles',
  'pipeline',
  'round-trips',
  'latency',
  'sustained',
  'list-page',
  'accounts-page',
  'limits',
  'leases',
  'keys',
  'history',
  'scale',
  'privacy',
  'results',
  'test-mode',
  'readiness',
  'ops-cli',
  'mcp',
] as const;
type ModuleName = (typeof MODULES)[number];
const ALIASES: Record<string, ModuleName> = {
  'bundle-size': 'bundles',
  'cold-init': 'bundles',
  launch: 'scale',
  workflow: 'scale',
  export: 'scale',
  cost: 'scale',
  'function-time': 'scale',
  'launch-evaluation': 'scale',
  list: 'list-page',
  accounts: 'accounts-page',
  'account-history': 'history',
  load: 'sustained',
  test: 'test-mode',
  health: 'readiness',
  'rate-limit': 'limits',
  'hostile-files': 'limits',
  usage: 'leases',
  'rate-leases': 'leases',
  audit: 'keys',
  scopes: 'keys',
};
const only = values.only ? [...new Set(values.only.split(',').map((name) => ALIASES[name.trim()] ?? (name.trim() as ModuleName)))] : null;
for (const name of only ?? [])
  if (!MODULES.includes(name)) throw new Error(`Unknown figure "${name}"; one of ${[...MODULES, ...Object.keys(ALIASES)].join(', ')}`);
const selected = (name: ModuleName) => only === null || only.includes(name);

const quick = values.quick;
/** Sizes of the run: the in full mode, small ones for a smoke run. */
export const SIZES = quick
  ? {
      accounts: 3_000,
      contactsPerAccount: 10,
      listSmall: 100,
      listLarge: 1_000,
      listLapsed: 250,
      historyMax: 100_000,
      historyCrm: 100_000,
      historyLargeCompletion: 10_000,
      sustainedSeconds: 5,
      coldRuns: 3,
      probeRuns: 2,
      latencyRequestsC1: 60,
      latencyRequestsC16: 320,
      latencyRounds: 400,
      pipelineMs: 500,
      readinessItems: 10_000,
      floodSeconds: 3,
      limitSamples: 100,
      refusalCpuRuns: 100,
      hostileBytes: 10_000_000,
      mcpCalls: 60,
      privacyCampaigns: 10,
      privacyRows: 30_000,
      privacyExportRows: 30_000,
      privacyPageRuns: 10,
      resultsStreamLarge: 40_000,
      resultsPageRuns: 9,
    }
  : {
      accounts: 100_000,
      contactsPerAccount: 10,
      listSmall: 100,
      listLarge: 10_000,
      listLapsed: 2_500,
      historyMax: values['history-max'] ? Number(values['history-max']) : 1_000_000,
      historyCrm: 1_000_000,
      historyLargeCompletion: 100_000,
      sustainedSeconds: 30,
      coldRuns: 40,
      probeRuns: 5,
      latencyRequestsC1: 300,
      latencyRequestsC16: 480,
      latencyRounds: 1_000,
      pipelineMs: 1_500,
      readinessItems: 100_000,
      floodSeconds: 10,
      limitSamples: 300,
      refusalCpuRuns: 500,
      hostileBytes: 50_000_000,
      mcpCalls: 400,
      privacyCampaigns: 100,
      privacyRows: 1_000_000,
      privacyExportRows: 1_000_000,
      privacyPageRuns: 30,
      resultsStreamLarge: 100_000,
      resultsPageRuns: 21,
    };

if (values.accounts) SIZES.accounts = Number(values.accounts);

const outDir = path.resolve(values.out ?? (quick || only || values.accounts ? TMP_DIR : BENCH_DIR));
mkdirSync(TMP_DIR, { recursive: true });
mkdirSync(outDir, { recursive: true });

if (Number(process.versions.node.split('.')[0]) < 24) {
  console.warn(
    `Warning: running on Node ${process.version}; the functions run on Node 24. Use \`npm run bench\` so the pinned Node 24 is used.`,
  );
}

// Before the stack's modules load: importing bench/lib/stack.ts builds the product's logger (lib/observability.ts), which reads its level
// once; set later (in startBenchStack) it came too late and every request logged its closing line at INFO.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';

const results = new Results();
const started = performance.now();
const startedAt = new Date().toISOString();
let stack: BenchStack | undefined;

async function timed(name: string, fn: () => Promise<void>): Promise<void> {
  const t = performance.now();
  const before = loadavg()[0]!;
  console.log(`\n▶ ${name} (load ${before.toFixed(2)})`);
  try {
    await fn();
  } catch (error) {
    console.error(`✗ ${name} failed:`, error);
    results.note(name, `The module failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  } finally {
    results.durations[name] = (performance.now() - t) / 1000;
    results.load[name] = { before, after: loadavg()[0]! };
    console.log(`  (${name}: ${Math.round(results.durations[name])} s)`);
  }
}

try {
  const needsStack = MODULES.some((m) => m !== 'bundles' && m !== 'readiness' && m !== 'ops-cli' && selected(m));
  if (needsStack || selected('scale')) {
    const { startBenchStack } = await import('./lib/stack');
    const t = performance.now();
    stack = await startBenchStack();
    results.durations['stack start'] = (performance.now() - t) / 1000;
    console.log(
      `Stack up in ${Math.round(performance.now() - t)} ms: API ${stack.apiUrl}, DynamoDB Local ${stack.dynamodbEndpoint} (pid ${stack.dynamodbPid}), S3 ${stack.s3Endpoint}`,
    );
  }

  if (selected('bundles') || selected('scale')) {
    const { runBundles } = await import('./figures/bundles');
    if (selected('bundles')) {
      await timed('bundles', async () => {
        await runBundles(results, { runs: SIZES.coldRuns, probeRuns: SIZES.probeRuns, outDir: TMP_DIR });
      });
    }
  }
  if (selected('ops-cli')) {
    const { runOpsCli } = await import('./figures/ops-cli');
    await timed('ops-cli', () => runOpsCli(results, { runs: quick ? 3 : 9 }));
  }
  if (selected('pipeline')) {
    const { runPipeline } = await import('./figures/pipeline');
    await timed('pipeline', () => runPipeline(results, stack!, { timeMs: SIZES.pipelineMs }));
  }
  if (selected('round-trips')) {
    const { runRoundTrips } = await import('./figures/round-trips');
    await timed('round-trips', () => runRoundTrips(results, stack!));
  }
  if (selected('latency')) {
    const { runLatency } = await import('./figures/latency');
    await timed('latency', () =>
      runLatency(results, stack!, {
        requestsC1: SIZES.latencyRequestsC1,
        requestsC16: SIZES.latencyRequestsC16,
        rounds: SIZES.latencyRounds,
      }),
    );
  }
  if (selected('sustained')) {
    const { runSustained } = await import('./figures/sustained');
    await timed('sustained', () => runSustained(results, stack!, { seconds: SIZES.sustainedSeconds }));
  }
  if (selected('list-page')) {
    const { runListPage } = await import('./figures/list-page');
    await timed('list-page', () =>
      runListPage(results, stack!, { small: SIZES.listSmall, large: SIZES.listLarge, lapsed: SIZES.listLapsed }),
    );
  }
  if (selected('accounts-page')) {
    const { runAccountsPage } = await import('./figures/accounts-page');
    // Both sizes even in a quick run: the campaigns are written through the stores, not enriched (seconds, not minutes).
    await timed('accounts-page', () => runAccountsPage(results, stack!, { sizes: [1_000, 100_000] }));
  }
  if (selected('limits')) {
    const { runLimits } = await import('./figures/limits');
    await timed('limits', () =>
      runLimits(results, stack!, {
        floodSeconds: SIZES.floodSeconds,
        samples: SIZES.limitSamples,
        cpuRuns: SIZES.refusalCpuRuns,
        hostileBytes: SIZES.hostileBytes,
      }),
    );
  }
  if (selected('leases')) {
    const { runLeases } = await import('./figures/leases');
    await timed('leases', () => runLeases(results, stack!, { windows: quick ? 2 : 6 }));
  }
  if (selected('keys')) {
    const { runKeys } = await import('./figures/keys');
    await timed('keys', () => runKeys(results, stack!, { rounds: quick ? 200 : 1000, windows: quick ? 2 : 6 }));
  }
  if (selected('history')) {
    const { runHistory } = await import('./figures/history');
    await timed('history', () =>
      runHistory(results, stack!, {
        // Distinct accounts in the history (0: the floor), then the CRM scenario; completions of 1,000 and of the large size.
        historySizes: quick
          ? [0, SIZES.historyMax / 100, SIZES.historyMax / 10, SIZES.historyMax]
          : [0, 100_000, 1_000_000, 10_000_000].filter((size) => size <= SIZES.historyMax),
        crmTargets: SIZES.historyCrm,
        launchAccounts: 1_000,
        launchRuns: quick ? 3 : 5,
        largeCompletion: SIZES.historyLargeCompletion,
        profile: values.profile,
      }),
    );
  }
  if (selected('scale')) {
    const { runScale } = await import('./figures/scale');
    await timed('scale', () =>
      runScale(results, stack!, {
        accounts: SIZES.accounts,
        contactsPerAccount: SIZES.contactsPerAccount,
        tmpDir: TMP_DIR,
        profile: values.profile,
      }),
    );
  }
  if (selected('privacy')) {
    const { runPrivacy } = await import('./figures/privacy');
    await timed('privacy', () =>
      runPrivacy(results, stack!, {
        campaigns: SIZES.privacyCampaigns,
        rows: SIZES.privacyRows,
        exportRows: SIZES.privacyExportRows,
        pageRuns: SIZES.privacyPageRuns,
      }),
    );
  }
  if (selected('results')) {
    const { runResults } = await import('./figures/results');
    await timed('results', () =>
      runResults(results, stack!, {
        launchAccounts: SIZES.accounts,
        streamLarge: SIZES.resultsStreamLarge,
        pageRuns: SIZES.resultsPageRuns,
        quick,
      }),
    );
  }
  if (selected('test-mode')) {
    const { runTestMode } = await import('./figures/test-mode');
    await timed('test-mode', () => runTestMode(results, stack!, { accounts: SIZES.accounts }));
  }
  if (selected('mcp')) {
    const { runMcp } = await import('./figures/mcp');
    await timed('mcp', () => runMcp(results, stack!, { calls: SIZES.mcpCalls, outDir: TMP_DIR }));
  }
  if (selected('readiness')) {
    const { runReadiness } = await import('./figures/readiness');
    // Its own child processes and data folder: 100,000 items in a full run (filling them takes minutes), 10,000 in a quick one.
    await timed('readiness', () => runReadiness(results, { items: SIZES.readinessItems, tmpDir: TMP_DIR }));
  }
} finally {
  await stack?.stop().catch((error: unknown) => console.error('Stopping the stack failed:', error));
  const run: RunInfo = {
    mode: quick ? 'quick' : 'full',
    only,
    startedAt,
    totalSeconds: (performance.now() - started) / 1000,
    sizes: { ...SIZES },
  };
  const jsonFile = path.join(outDir, 'results.json');
  const mdFile = path.join(outDir, 'RESULTS.md');
  const stored = storedRun(results, run);
  writeJson(jsonFile, stored);
  writeMarkdown(mdFile, stored);
  const missed = results.figures.filter((f) => f.pass === false).length;
  console.log(
    `\nWrote ${path.relative(process.cwd(), jsonFile)} and ${path.relative(process.cwd(), mdFile)} in ${Math.round(run.totalSeconds)} s; ${missed} budget(s) missed.`,
  );
  try {
    // The charts (SVG next to RESULTS.md, embedded in it), as `npm run bench:charts` draws them.
    const { writeCharts } = await import('./lib/charts');
    const charts = await writeCharts({ dir: outDir, scalePointsFile: SCALE_POINTS_FILE });
    console.log(`Charts: ${charts.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
  } catch (error) {
    console.error('Drawing the charts failed:', error);
    process.exitCode = 1;
  }
}

// Figures that miss a budget are reported, not failed: the exit code only says whether the harness itself worked.
process.exit(process.exitCode ?? 0);
