/**
 * Figure "account history" (issues #29, #43; docs/data-model.md "Recency and
 * CRM targets"): at 0, 100 k, 1 M and 10 M distinct accounts in an
 * organization's history, and with 1 M CRM targets,
 *
 * - a 1,000-account quote and launch: history bytes read per requested
 *   account (≤ 4 KB) beside the same bucket keys read bare, and the CPU-s
 *   change against the same request with no history (≤ 10 %) beside its
 *   floor, what the same keys read bare add to that request;
 * - a 1,000- and a 100,000-account completion of accounts new to the
 *   history: write units per enriched account (splits included; ≤ 1.0 for
 *   1,000 at every size, ≤ 0.1 for 100,000 into 1 M) beside their floor, one
 *   write per distinct bucket the accounts fall in;
 * - the history's storage: bytes per distinct account (≤ 40) and dollars per
 *   million accounts per month (≤ $0.01), at the price list of bench/lib/cost.ts.
 *
 * The histories are laid out directly (lib/history/store.ts
 * `writeLaidOutHistory`: the buckets precomputed and written by
 * BatchWriteItem, the state the completions would leave), not through
 * completions: 10 M accounts take a minute or two, not hours. The entries
 * come from campaigns of 100,000 accounts completed a minute apart inside the
 * window. The launch's list is the same in every scenario: 500 accounts of
 * the history (recently enriched where there is one) and 500 fresh ones
 * (eligible; 100 of them CRM targets in the CRM scenario). The request-driven
 * cost per 1,000 enriched accounts is the `scale` module's (a 100,000-account
 * campaign, same run).
 *
 * The CPU-s changes are timed in the quote and enrich functions' own
 * processes (bundled as deployed, warm: bench/children/lambda-worker.mjs),
 * not in this one, which holds the whole local stack and its garbage
 * (bench/README.md "The history CPU figures").
 */
import { nanoid } from 'nanoid';
import { collectGarbage } from '../lib/gc';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { accountHistory, embeddedWarehouse } from '../../lib/root';
import { ddb } from '../../lib/aws';
import {
  addressOf,
  bucketKeys,
  bucketOf,
  fingerprintOf,
  itemBytes,
  writeLaidOutHistory,
  EVALUATION_BUCKET_ATTRIBUTES,
  HISTORY_BUCKET_LOAD,
} from '../../lib/history/store';
import { organizations } from '../../lib/root';
import * as keys from '../../lib/db/keys';
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { benchAccount, benchOrganization, importBenchAccounts } from '../lib/fixtures';
import { PRICES } from '../lib/cost';
import { round, sortedRounded } from '../lib/stats';
import { profileInProcess, summarizeProfile, type ProfileSummary } from '../lib/cpu-profile';
import path from 'node:path';
import { buildBundle } from '../lib/bundle';
import { startLambdaWorker, type LambdaWorker, type WorkerInvocation } from '../lib/children';
import { enrichCampaignOperation } from '../../lib/campaigns/schema';
import { quoteCampaignOperation } from '../../lib/enrichment/schema';
import { functionIdOf } from '../../infra/routes';

/** Issue #29/#43 budget: a launch's (and a quote's) CPU-seconds change ≤ 10 % with the organization's history. */
const CHANGE_BUDGET_PCT = 10;
/** The window of the measured campaigns (days): every entry of the laid-out histories is inside it. */
const WINDOW_DAYS = 365;
/** Accounts per campaign of the laid-out histories (one enrichment time each, a minute apart). */
const SEED_CAMPAIGN = 100_000;

/** Issue #43 budgets. */
const READ_BYTES_PER_ACCOUNT_BUDGET = 4096;
const COMPLETION_WRU_PER_ACCOUNT_BUDGET = 1.0;
const LARGE_COMPLETION_WRU_PER_ACCOUNT_BUDGET = 0.1;
/** The history size the 100,000-account completion budget is stated at. */
const LARGE_COMPLETION_BUDGET_AT = 1_000_000;
const STORED_BYTES_PER_ACCOUNT_BUDGET = 40;
const STORAGE_DOLLARS_PER_MILLION_MONTH_BUDGET = 0.01;
const KB = 1024;
/** Quotes of each run's campaign in the quote's own process (the run's figure is their median). */
const CHILD_QUOTES_PER_RUN = 5;
/** Untimed launches (each after {@link CHILD_QUOTES_PER_RUN} quotes) in the functions' own processes before any is measured. */
const CHILD_WARM_UP_LAUNCHES = 4;
const QUOTE_ENTRY = 'functions/campaigns-quote.ts';
const ENRICH_ENTRY = 'functions/campaigns-enrich.ts';
const TMP_DIR = path.join(import.meta.dirname, '..', 'tmp');

const n = (v: number) => Math.round(v).toLocaleString('en-US');
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** Per-run figures as a row shows them: sorted, 1 digit, comma-separated. */
const sortedRuns = (values: readonly number[]) => sortedRounded(values, 1, ', ');
/** CPU of one run in the function's own process (ms): the whole process's and the main thread's alone. */
interface ChildCpu {
  all: number;
  main: number;
  /** Mark-compact collections in the function's process during the run's request(s) (quotes: summed over the run's). */
  major: number;
  /** The young generation's size (KB) before the request (quotes: the run's first); V8 shrinks it in a process that idles. */
  youngKB: number;
}
/** A worker invocation's answer, or an error naming the operation and the answer. */
const childOk = <T extends { statusCode: number; body: string }>(answer: T, operation: string): T => {
  if (answer.statusCode !== 200) throw new Error(`${operation} in its own process answered ${answer.statusCode}: ${answer.body}`);
  return answer;
};
/** A warm container of the function of `entry` (its bundle built with the CDK options) in a process of its own. */
async function startWorker(entry: string, operationPath: string): Promise<LambdaWorker> {
  const functionId = functionIdOf(entry);
  const bundle = await buildBundle(functionId, { entry }, path.join(TMP_DIR, 'bundles'));
  return startLambdaWorker({ bundle: bundle.file, functionId, path: operationPath });
}

/**
 * The floor of the CPU-s changes: a handler that reads the bucket keys of its request body (`{ tableName, keys }`) as the
 * evaluation reads them (lib/db/raw-read.ts `batchGetRaw`, strongly consistent, the evaluation's attributes) and does
 * nothing else, bundled like a function and timed in a process of its own as the quote and enrich functions are. What any
 * history laid out in these buckets costs the request before it looks one account up.
 */
const BARE_READ_SOURCE = `
import { ddb } from './lib/aws';
import { batchGetRaw } from './lib/db/raw-read';
import { EVALUATION_BUCKET_ATTRIBUTES } from './lib/history/store';
export const handler = async (event: { body: string; isBase64Encoded?: boolean }) => {
  const { tableName, keys } = JSON.parse(event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body);
  const items = await batchGetRaw(ddb, tableName, keys, EVALUATION_BUCKET_ATTRIBUTES, { consistentRead: true });
  return { statusCode: 200, body: JSON.stringify({ items: items.length }) };
};
`;
/** {@link BARE_READ_SOURCE} warm in a process of its own (the quote function's environment: neither function sets `NODE_OPTIONS`). */
async function startBareReadWorker(): Promise<LambdaWorker> {
  const functionId = functionIdOf(QUOTE_ENTRY);
  const bundle = await buildBundle('HistoryBareRead', { contents: BARE_READ_SOURCE }, path.join(TMP_DIR, 'bundles'));
  return startLambdaWorker({ bundle: bundle.file, functionId, path: quoteCampaignOperation.path });
}

/** What the history's writes of one `run` cost: PutItem calls, of which split copies, and write units. */
interface Writes {
  puts: number;
  /** Splits (N after − N before; each is one PutItem, the new bucket: the bucket split is not rewritten). */
  splits: number;
  /** ⌈item size / 1 KB⌉ of every PutItem's new item (what the write would bill if no larger item were replaced). */
  writeUnits: number;
  /**
   * The write units DynamoDB Local reported (ConsumedCapacity, which the bench asks for on every command): what
   * DynamoDB bills, since a PutItem that replaces an item bills the larger of the old and the new item. The budget's figure.
   */
  consumedWriteUnits: number;
}

/** Counts the history's writes made by `run` (an SDK middleware on the shared client). */
async function historyWrites(run: () => Promise<unknown>): Promise<Writes> {
  const writes: Writes = { puts: 0, splits: 0, writeUnits: 0, consumedWriteUnits: 0 };
  const name = `bench-history-writes-${nanoid(6)}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Item?: Record<string, unknown> };
      const put =
        (context.commandName === 'PutCommand' || context.commandName === 'PutItemCommand') && String(input.Item?.pk).includes('#HBUCKET#');
      if (put) {
        writes.puts++;
        writes.writeUnits += Math.ceil(itemBytes(input.Item!) / KB);
      }
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce((s, c) => s + (c.CapacityUnits ?? 0), 0);
      if (put) writes.consumedWriteUnits += units;

      return result;
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    ddb.middlewareStack.remove(name);
  }
  if (writes.puts > 0 && writes.consumedWriteUnits === 0) throw new Error('history writes: DynamoDB Local reported no consumed capacity');
  return writes;
}

/** The distinct buckets `accountIds` fall in with N buckets (the floor: one write, or one read, per bucket). */
const bucketsOf = (accountIds: readonly string[], buckets: number) =>
  new Set(accountIds.map((id) => bucketOf(addressOf(fingerprintOf(id)), buckets).bucket));

/** Reads items by key (BatchGetItem, 100 a call, 16 in flight, unprocessed keys again) and visits each. */
async function readItems(
  tableName: string,
  keys: readonly Record<string, unknown>[],
  consistent: boolean,
  visit: (item: Record<string, unknown>) => void,
): Promise<void> {
  const groups: Record<string, unknown>[][] = [];
  for (let i = 0; i < keys.length; i += 100) groups.push(keys.slice(i, i + 100));
  const worker = async () => {
    for (let group = groups.shift(); group; group = groups.shift()) {
      let pending = group;
      while (pending.length > 0) {
        const { Responses, UnprocessedKeys } = await ddb.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ...(consistent ? { ConsistentRead: true } : {}) } } }),
        );
        for (const item of Responses?.[tableName] ?? []) visit(item);
        pending = (UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/**
 * Reads bucket keys bare (consistent, as the launch reads them), counted as the requests' calls are (bench/lib/stack.ts
 * scope): response bytes, wall ms, items found.
 */
async function readBare(stack: BenchStack, keys: { pk: string; sk: string }[]): Promise<{ bytes: number; ms: number; items: number }> {
  const started = performance.now();
  let items = 0;
  const { scope } = await stack.inScope('history bare read', () => readItems(stack.tableName, keys, true, () => items++));
  return { bytes: scope.calls.reduce((sum, c) => sum + (c.bytes ?? 0), 0), ms: performance.now() - started, items };
}

/** Bytes the organization's history takes in the table (item sizes + 100 B per item), its items, entries and largest item. */
async function historyStorage(
  tableName: string,
  organizationId: string,
): Promise<{ bytes: number; items: number; accounts: number; maxItem: number }> {
  const state = await accountHistory().state(organizationId);
  let bytes = 0;
  let items = 0;
  let maxItem = 0;
  await readItems(tableName, bucketKeys(organizationId, state.buckets), false, (item) => {
    bytes += itemBytes(item, 100);
    maxItem = Math.max(maxItem, itemBytes(item));
    items++;
  });
  return { bytes, items, accounts: state.entries, maxItem };
}

/** What one request read. */
interface Reads {
  /** CPU-s of the request's share of the bench process (bench/lib/meter.ts), reported beside the child's figure. */
  cpuSeconds: number;
  bytes: number;
  calls: number;
  historyCalls: number;
  historyBytes: number;
}

const readsOf = (calls: readonly CallRecord[], cpuSeconds: number): Reads => {
  const history = calls.filter((c) => c.kind.startsWith('accountHistory'));
  const bytes = (list: readonly CallRecord[]) => list.reduce((sum, c) => sum + (c.bytes ?? 0), 0);
  return { cpuSeconds, bytes: bytes(calls), calls: calls.length, historyCalls: history.length, historyBytes: bytes(history) };
};

/** Polls get until the campaign reads `enriched` (300 s at most). */
async function untilEnriched(stack: BenchStack, apiKey: string, campaignId: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get').status !== 'enriched') {
    if (Date.now() > deadline) throw new Error(`Campaign ${campaignId} did not reach enriched within 300 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until the launched campaign reads `enriched` and its history recording is done (FinishRecording runs after the
 * status flips: the organization's `pendingRecency` cleared), so neither is charged to what follows (300 s at most).
 */
async function untilRecorded(stack: BenchStack, on: { organizationId: string; apiKey: string }, campaignId: string): Promise<void> {
  await untilEnriched(stack, on.apiKey, campaignId);
  for (const deadline = Date.now() + 300_000; (await organizations().get(on.organizationId))?.pendingRecency !== undefined;) {
    if (Date.now() > deadline) throw new Error(`Campaign ${campaignId}'s history was not recorded within 300 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One scenario: an organization whose history holds `accounts` enriched accounts, or `crmTargets` CRM targets. */
interface Scenario {
  label: string;
  accounts: number;
  crmTargets: number;
}

export async function runHistory(
  results: Results,
  stack: BenchStack,
  options: {
    /** Distinct enriched accounts in the history, one scenario each (the first should be 0: the floor). */
    historySizes: number[];
    /** CRM targets of the CRM scenario (0: none). */
    crmTargets: number;
    launchAccounts: number;
    /**
     * Launches per scenario, each on a fresh campaign and in turn with a launch of the same list in a fresh organization
     * with no history (its floor); the figure is median over median.
     */
    launchRuns: number;
    /** Accounts of the large completion. */
    largeCompletion: number;
    /**
     * CPU-profile this process during every measured quote and launch (adds overhead, so the CPU-s figures of such a run are
     * not the record): per scenario, the source lines whose self time differs most between its own requests and their floors.
     */
    profile?: boolean;
  },
): Promise<void> {
  const group = 'account history';
  const p = `h${nanoid(6).replace(/[^a-zA-Z0-9]/g, 'x')}`;
  const universeId = (i: number) => `${p}_u${i}`;
  const half = Math.floor(options.launchAccounts / 2);
  // 500 accounts every non-empty history holds (recently enriched there), 500 fresh ones. Each measured launch gets fresh ones
  // of its own (a launch records its eligible accounts, so the next launch's list would otherwise find them enriched); the
  // CRM scenario, whose history does not hold the first 500, gets its own of those too.
  const known = Array.from({ length: half }, (_, j) => universeId(j));
  const runs = Math.max(1, options.launchRuns);
  const freshRuns: string[][] = [];
  const crmKnownRuns: string[][] = [];
  // The launches in the enrich function's own process (the CPU figure) get lists of their own, alike.
  const childFreshRuns: string[][] = [];
  const childCrmKnownRuns: string[][] = [];
  for (let run = 0; run < runs; run++) {
    freshRuns.push(await importBenchAccounts(`${p}f${run}`, options.launchAccounts - half, 10));
    childFreshRuns.push(await importBenchAccounts(`${p}g${run}`, options.launchAccounts - half, 10));
    if (options.crmTargets > 0) {
      crmKnownRuns.push(await importBenchAccounts(`${p}k${run}`, half, 10));
      childCrmKnownRuns.push(await importBenchAccounts(`${p}j${run}`, half, 10));
    }
  }
  const fresh = freshRuns[0]!;
  await embeddedWarehouse().importAccounts(known.map((id, j) => benchAccount(id, j, 10)));
  const accountIds = [...known, ...fresh];

  const scenarios: Scenario[] = [
    ...options.historySizes.map((accounts) => ({ label: `${n(accounts)} accounts in the history`, accounts, crmTargets: 0 })),
    ...(options.crmTargets > 0 ? [{ label: `${n(options.crmTargets)} CRM targets`, accounts: 0, crmTargets: options.crmTargets }] : []),
  ];
  // The CPU figures: the quote and enrich functions bundled as deployed, each warm in a Node process of its own where only
  // the function lives (bench/children/lambda-worker.mjs), against the same DynamoDB Local and Step Functions endpoint.
  const workers: { quote: LambdaWorker; enrich: LambdaWorker; bareRead: LambdaWorker } = {
    quote: await startWorker(QUOTE_ENTRY, quoteCampaignOperation.path),
    enrich: await startWorker(ENRICH_ENTRY, enrichCampaignOperation.path),
    bareRead: await startBareReadWorker(),
  };
  // (Closed at the end; if the bench fails first, they end with it: a worker exits when its IPC channel closes.)
  // Untimed first: the first requests of a handler do one-off work (module loading, JIT) the floor must not carry.
  {
    const warm = await benchOrganization('Bench history warm-up');
    for (let run = 0; run < 2; run++) {
      const campaignId = expectOk(
        await post<{ id: string }>(stack, PATHS.create, warm.apiKey, { name: 'Warm-up', accountIds, excludeEnrichedWithinDays: null }),
        'create',
      ).id;
      expectOk(await post(stack, PATHS.quote, warm.apiKey, { campaignId }), 'quote');
      expectOk(await post(stack, PATHS.enrich, warm.apiKey, { campaignId }), 'enrich');
      await untilEnriched(stack, warm.apiKey, campaignId);
    }
    // The functions' own processes: until their optimizing compiler has settled on the paths measured (a history read
    // with recency: after the first launch the warm-up organization has a history; each launch's list half fresh).
    const childWarm = await benchOrganization('Bench history warm-up, child');
    for (let run = 0; run < CHILD_WARM_UP_LAUNCHES; run++) {
      const list = [...known, ...(await importBenchAccounts(`${p}w${run}`, options.launchAccounts - half, 10))];
      const campaignId = expectOk(
        await post<{ id: string }>(stack, PATHS.create, childWarm.apiKey, {
          name: 'Warm-up',
          accountIds: list,
          excludeEnrichedWithinDays: WINDOW_DAYS,
        }),
        'create',
      ).id;
      for (let i = 0; i < CHILD_QUOTES_PER_RUN; i++) childOk(await workers.quote.invoke(childWarm.apiKey, { campaignId }), 'quote');
      childOk(await workers.enrich.invoke(childWarm.apiKey, { campaignId }), 'enrich');
      await untilRecorded(stack, childWarm, campaignId);
    }
  }
  const measured: {
    scenario: Scenario;
    quote: Reads;
    /** The no-history organization's quote, run in turn with this scenario's (the CPU floor in the same conditions). */
    quoteFloor: Reads;
    /** Median of this scenario's launches (none in the first scenario). */
    launch: Reads | undefined;
    /** Median of the launches of the same lists in fresh organizations with no history, run in turn with these. */
    launchFloor: Reads;
    /**
     * CPU per run in the function's own process: own and floor (quotes: each run's median of {@link CHILD_QUOTES_PER_RUN});
     * `bareRead`: the scenario's bucket keys read bare in a process of their own ({@link BARE_READ_SOURCE}), each run's
     * median of {@link CHILD_QUOTES_PER_RUN}.
     */
    child: { quote: ChildCpu[]; quoteFloor: ChildCpu[]; launch: ChildCpu[]; launchFloor: ChildCpu[]; bareRead: ChildCpu[] };
    bare: { bytes: number; ms: number; items: number };
    seedS: number;
    buckets: number;
    excluded: unknown;
    small: { writes: Writes; floor: number; accounts: number };
    large: { writes: Writes; floor: number; accounts: number; seconds: number };
    storage: { bytes: number; items: number; accounts: number; maxItem: number };
  }[] = [];
  /** Self time (ms) by source line, summed over the profiled requests of one kind (`launch <label>`, `quote <label>`). */
  const profiles = new Map<string, { runs: number; byFrame: Map<string, number> }>();
  const profiled = async <T>(kind: string, fn: () => Promise<T>): Promise<T> => {
    if (!options.profile) return fn();
    const { result, profile } = await profileInProcess(fn);
    const summary: ProfileSummary = summarizeProfile(profile);
    let sum = profiles.get(kind);
    if (!sum) profiles.set(kind, (sum = { runs: 0, byFrame: new Map() }));
    sum.runs++;
    for (const [frame, ms] of summary.byFrame) sum.byFrame.set(frame, (sum.byFrame.get(frame) ?? 0) + ms);
    return result;
  };
  /** The lines whose mean self time per request differs most between `own` and `floor`, e.g. `lib/x.ts:12 f +3.1 ms`. */
  const profileDifference = (own: string, floor: string, count = 12): string => {
    const a = profiles.get(own);
    const b = profiles.get(floor);
    if (!a || !b) return '';
    const frames = new Set([...a.byFrame.keys(), ...b.byFrame.keys()]);
    const mean = (sum: typeof a, frame: string) => (sum.byFrame.get(frame) ?? 0) / sum.runs;
    // The profiler's own frames (node:inspector, which serializes the profile at its stop) and idle time are left out.
    const counted = (frame: string) => !frame.startsWith('(idle)') && !frame.startsWith('(program)') && !frame.startsWith('node:inspector');
    const busy = (sum: typeof a) => [...sum.byFrame].filter(([frame]) => counted(frame)).reduce((t, [, ms]) => t + ms, 0) / sum.runs;
    const rows = [...frames]
      .filter(counted)
      .map((frame): [string, number] => [frame, mean(a, frame) - mean(b, frame)])
      .sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]))
      .slice(0, count);
    return (
      `busy ${round(busy(a), 1)} ms against ${round(busy(b), 1)} ms per request (${a.runs} and ${b.runs} profiled); by line: ` +
      rows.map(([frame, ms]) => `${frame} ${ms >= 0 ? '+' : ''}${round(ms, 1)} ms`).join(', ')
    );
  };
  const createCampaign = async (apiKey: string, ids: readonly string[], label: string) =>
    expectOk(
      await post<{ id: string }>(stack, PATHS.create, apiKey, {
        name: `History ${label}`,
        accountIds: ids,
        excludeEnrichedWithinDays: WINDOW_DAYS,
      }),
      'create',
    ).id;
  /**
   * One measured launch of `ids` on a fresh campaign of `on`, after a full garbage collection; returns once its workflow and
   * its history recording (FinishRecording runs after the status flips) are done, so neither is charged to what follows.
   */
  const launchOnce = async (on: { organizationId: string; apiKey: string }, ids: readonly string[], label: string): Promise<Reads> => {
    const campaignId = await createCampaign(on.apiKey, ids, label);
    await collectGarbage();
    const launched = await profiled(`launch ${label}`, () =>
      postCounted<{ status: string }>(stack, PATHS.enrich, on.apiKey, { campaignId }),
    );
    expectOk(launched, 'enrich');
    const reads = readsOf(launched.scope.calls, launched.scope.cpuSeconds ?? Number.NaN);
    await untilRecorded(stack, on, campaignId);
    return reads;
  };
  /**
   * One launch of `ids` on a fresh campaign of `on` in the enrich function's own process (its CPU there, ms), waited for as
   * {@link launchOnce} waits.
   */
  const childLaunchOnce = async (
    on: { organizationId: string; apiKey: string },
    ids: readonly string[],
    label: string,
  ): Promise<ChildCpu> => {
    const campaignId = await createCampaign(on.apiKey, ids, label);
    const answer = childOk(await workers.enrich.invoke(on.apiKey, { campaignId }), 'enrich');
    await untilRecorded(stack, on, campaignId);
    return { all: answer.cpuMs, main: answer.mainThreadCpuMs, major: answer.majorCollections, youngKB: answer.youngGenerationKB };
  };
  /** {@link CHILD_QUOTES_PER_RUN} calls of `worker` with `body`: their median CPU (ms). */
  const childMedian = async (worker: LambdaWorker, apiKey: string, body: unknown, operation: string): Promise<ChildCpu> => {
    const spent: WorkerInvocation[] = [];
    for (let i = 0; i < CHILD_QUOTES_PER_RUN; i++) spent.push(childOk(await worker.invoke(apiKey, body), operation));
    return {
      all: median(spent.map((s) => s.cpuMs)),
      main: median(spent.map((s) => s.mainThreadCpuMs)),
      major: spent.reduce((sum, s) => sum + s.majorCollections, 0),
      youngKB: spent[0]!.youngGenerationKB,
    };
  };
  for (const scenario of scenarios) {
    const { organizationId, apiKey } = await benchOrganization(`Bench history ${scenario.label}`);
    const seeded = performance.now();
    const now = Date.now();
    const campaigns = Math.ceil(scenario.accounts / SEED_CAMPAIGN);
    if (scenario.accounts > 0) {
      // Campaign k enriched accounts [k × 100,000, (k + 1) × 100,000) at now − (campaigns − k) minutes.
      await writeLaidOutHistory({
        client: ddb,
        tableName: stack.tableName,
        organizationId,
        count: scenario.accounts,
        entryAt: (i) => ({
          accountId: universeId(i),
          enrichedAtMs: now - (campaigns - Math.floor(i / SEED_CAMPAIGN)) * 60_000,
          crmTarget: false,
        }),
      });
    } else if (scenario.crmTargets > 0) {
      // 100 of every run's fresh accounts (each run quotes and launches its own list).
      const targets = [...freshRuns, ...childFreshRuns].flatMap((ids) => ids.slice(0, 100));
      await writeLaidOutHistory({
        client: ddb,
        tableName: stack.tableName,
        organizationId,
        count: scenario.crmTargets,
        entryAt: (i) => ({ accountId: i < targets.length ? targets[i]! : `${p}_crm${i}`, enrichedAtMs: 0, crmTarget: true }),
      });
    }
    const seedS = (performance.now() - seeded) / 1000;
    const { buckets } = await accountHistory().state(organizationId);
    // The floor of the history reads: the same bucket keys, read bare.
    const bareKeys = [...bucketsOf(accountIds, buckets)].map((bucket) => keys.accountHistoryBucket(organizationId, bucket));
    const bare = await readBare(stack, bareKeys);
    /** The same keys read bare in a process of their own: the floor of the CPU-s changes ({@link BARE_READ_SOURCE}). */
    const bareReadInChild = () =>
      childMedian(workers.bareRead, apiKey, { tableName: stack.tableName, keys: bareKeys }, 'bare history read');
    // Untimed first, as the functions were warmed: its first reads of these keys compile the paths measured.
    for (let i = 0; i < 2; i++) await bareReadInChild();

    /** One measured quote of `ids` on a fresh campaign of `on`, after a full garbage collection. */
    const quoteOnce = async (on: { apiKey: string }, ids: readonly string[], label: string) => {
      const campaignId = await createCampaign(on.apiKey, ids, label);
      await collectGarbage();
      const reply = await profiled(`quote ${label}`, () =>
        postCounted<{ accounts: { excluded: unknown } }>(stack, PATHS.quote, on.apiKey, { campaignId }),
      );
      return {
        excluded: expectOk(reply, 'quote').accounts.excluded,
        reads: readsOf(reply.scope.calls, reply.scope.cpuSeconds ?? Number.NaN),
        // The same campaign quoted again in the quote function's own process (a quote writes nothing).
        childMs: await childMedian(workers.quote, on.apiKey, { campaignId }, 'quote'),
      };
    };
    // Quotes and launches: this scenario's and, in turn (the order alternating), the same list's in a fresh organization with
    // no history, each on a fresh campaign; a run quotes first, then launches a second campaign of the same list (a quote
    // records nothing, so the launch meets the same history). The first scenario (no history) has only the latter: they
    // are its floor.
    const quotes: Reads[] = [];
    const floorQuotes: Reads[] = [];
    const launches: Reads[] = [];
    const floorLaunches: Reads[] = [];
    const child: (typeof measured)[number]['child'] = { quote: [], quoteFloor: [], launch: [], launchFloor: [], bareRead: [] };
    let excluded: unknown;
    const floorLabel = `no history, beside ${scenario.label}`;
    for (let run = 0; run < runs; run++) {
      const crm = scenario.accounts === 0 && scenario.crmTargets > 0;
      const list = [...(crm ? crmKnownRuns[run]! : known), ...freshRuns[run]!];
      // The child's launch: a list alike of its own (the launch above recorded this run's fresh accounts).
      const childList = [...(crm ? childCrmKnownRuns[run]! : known), ...childFreshRuns[run]!];
      const floorRun = async () => {
        const floorOrganization = await benchOrganization(`Bench history floor ${run}`);
        const quoted = await quoteOnce(floorOrganization, list, floorLabel);
        floorQuotes.push(quoted.reads);
        child.quoteFloor.push(quoted.childMs);
        if (measured.length === 0) excluded = quoted.excluded;
        floorLaunches.push(await launchOnce(floorOrganization, list, floorLabel));
        // Another fresh organization: the launch above recorded its eligible accounts in the first one's history.
        child.launchFloor.push(await childLaunchOnce(await benchOrganization(`Bench history floor ${run}, child`), childList, floorLabel));
      };
      const ownRun = async () => {
        if (measured.length === 0) return;
        const quoted = await quoteOnce({ apiKey }, list, scenario.label);
        quotes.push(quoted.reads);
        child.quote.push(quoted.childMs);
        excluded = quoted.excluded;
        launches.push(await launchOnce({ organizationId, apiKey }, list, scenario.label));
        child.launch.push(await childLaunchOnce({ organizationId, apiKey }, childList, scenario.label));
        child.bareRead.push(await bareReadInChild());
      };
      for (const next of run % 2 === 0 ? [floorRun, ownRun] : [ownRun, floorRun]) await next();
    }
    const medianOf = (reads: Reads[]) => ({ ...reads.at(-1)!, cpuSeconds: median(reads.map((r) => r.cpuSeconds)) });
    const quoteFloor = medianOf(floorQuotes);
    const quote = quotes.length > 0 ? medianOf(quotes) : quoteFloor;
    const launch = launches.length > 0 ? medianOf(launches) : undefined;
    const launchFloor = medianOf(floorLaunches);
    // Completions of accounts new to this history, counted at the store (what FinishRecording runs).
    const completion = async (count: number, tag: string) => {
      const ids = Array.from({ length: count }, (_, i) => `${p}_${tag}${i}`);
      const { buckets: before } = await accountHistory().state(organizationId);
      const floor = bucketsOf(ids, before).size;
      const started = performance.now();
      const writes = await historyWrites(() => accountHistory().recordEnrichment(organizationId, ids, new Date().toISOString()));
      writes.splits = (await accountHistory().state(organizationId)).buckets - before;
      return { writes, floor, accounts: count, seconds: (performance.now() - started) / 1000 };
    };
    const small = await completion(options.launchAccounts, 'c');
    const large = await completion(options.largeCompletion, 'l');
    const storage = await historyStorage(stack.tableName, organizationId);
    if (options.profile && measured.length > 0)
      for (const operation of ['quote', 'launch']) {
        const text = profileDifference(`${operation} ${scenario.label}`, `${operation} ${floorLabel}`);
        console.log(`  profile, ${operation}, ${scenario.label} against no history: ${text}`);
        results.note(
          group,
          `Profile (--profile), ${n(options.launchAccounts)}-account ${operation}, ${scenario.label}, against its floor: ${text}.`,
        );
      }
    measured.push({ scenario, quote, quoteFloor, launch, launchFloor, child, bare, seedS, buckets, excluded, small, large, storage });
    console.log(
      `  ${scenario.label}: seeded in ${round(seedS, 1)} s (${n(buckets)} buckets); completions ${round(small.writes.consumedWriteUnits / small.accounts, 3)} and ` +
        `${round(large.writes.consumedWriteUnits / large.accounts, 3)} WRU per account (${round(large.seconds, 1)} s)`,
    );
  }

  const floorScenario = measured[0]!;
  const change = (value: number, floor: number) => (floor > 0 ? ((value - floor) / floor) * 100 : value > 0 ? Infinity : 0);
  for (const m of measured) {
    const { scenario, launch, quote, bare, small, large, storage } = m;
    for (const [operation, reads] of [
      ['launch', launch ?? m.launchFloor],
      ['quote', quote],
    ] as const) {
      results.add({
        group,
        name: `${n(options.launchAccounts)}-account ${operation}, ${scenario.label}: history bytes read per requested account`,
        value: reads.historyBytes / options.launchAccounts,
        unit: 'bytes',
        budget: { op: '<=', limit: READ_BYTES_PER_ACCOUNT_BUDGET, text: `≤ ${READ_BYTES_PER_ACCOUNT_BUDGET} (one 4 KB read unit)` },
        floor: {
          value: bare.bytes / options.launchAccounts,
          unit: 'bytes',
          what: `the same ${n(bare.items)} bucket items read bare (one consistent BatchGetItem per 100 keys, ${round(bare.ms, 0)} ms)`,
        },
        extra: { 'history calls': n(reads.historyCalls), 'history bytes': n(reads.historyBytes), buckets: n(m.buckets) },
      });
    }
    for (const [label, completion, budget] of [
      [`${n(small.accounts)}-account completion`, small, COMPLETION_WRU_PER_ACCOUNT_BUDGET],
      [
        `${n(large.accounts)}-account completion`,
        large,
        scenario.accounts === LARGE_COMPLETION_BUDGET_AT && large.accounts >= 100_000 ? LARGE_COMPLETION_WRU_PER_ACCOUNT_BUDGET : undefined,
      ],
    ] as const) {
      const w = completion.writes;
      results.add({
        group,
        name: `${label}, ${scenario.label}: write units per enriched account (splits included)`,
        // What DynamoDB bills (a replaced item bills the larger of its old and new size), not the new items' sizes alone.
        value: w.consumedWriteUnits / completion.accounts,
        unit: 'WRU',
        ...(budget === undefined
          ? {
              note: `reported only: the ${n(100_000)}-account budget (≤ ${LARGE_COMPLETION_WRU_PER_ACCOUNT_BUDGET}) is stated at ${n(LARGE_COMPLETION_BUDGET_AT)} accounts`,
            }
          : { budget: { op: '<=' as const, limit: budget, text: `≤ ${budget}` } }),
        floor: {
          value: completion.floor / completion.accounts,
          unit: 'WRU',
          what: `one 1 KB write per distinct bucket the accounts fall in (${n(completion.floor)})`,
        },
        extra: {
          'bucket PutItem': n(w.puts),
          splits: `${n(w.splits)} (1 PutItem each: the new bucket)`,
          'write units billed (DynamoDB Local, the figure)': n(w.consumedWriteUnits),
          'of the new items alone': n(w.writeUnits),
          ...(completion === large ? { seconds: round(large.seconds, 1) } : {}),
        },
      });
    }
    if (storage.accounts > 0) {
      const perAccount = storage.bytes / storage.accounts;
      results.add({
        group,
        name: `history storage, ${scenario.label}: bytes per distinct account`,
        value: perAccount,
        unit: 'bytes',
        budget: { op: '<=', limit: STORED_BYTES_PER_ACCOUNT_BUDGET, text: `≤ ${STORED_BYTES_PER_ACCOUNT_BUDGET}` },
        extra: {
          bytes: n(storage.bytes),
          accounts: n(storage.accounts),
          items: n(storage.items),
          'largest item': `${n(storage.maxItem)} B`,
        },
      });
      results.add({
        group,
        name: `history storage, ${scenario.label}: $ per million distinct accounts per month`,
        value: (perAccount * 1e6 * PRICES.dynamodbGbMonth) / 1e9,
        unit: '$',
        budget: {
          op: '<=',
          limit: STORAGE_DOLLARS_PER_MILLION_MONTH_BUDGET,
          text: `≤ $${STORAGE_DOLLARS_PER_MILLION_MONTH_BUDGET}`,
        },
        note: `${PRICES.asOf}: DynamoDB Standard storage $${PRICES.dynamodbGbMonth} per GB-month`,
      });
    }
    if (m === floorScenario) {
      for (const [operation, reads, childMs] of [
        ['quote', quote, m.child.quoteFloor],
        ['launch', m.launchFloor, m.child.launchFloor],
      ] as const)
        results.add({
          group,
          name: `${n(options.launchAccounts)}-account ${operation}, no history (the floor)`,
          value: median(childMs.map((c) => c.all)) / 1000,
          unit: 'CPU-s',
          extra: {
            'per run (CPU ms, sorted)': sortedRuns(childMs.map((c) => c.all)),
            'main thread alone, per run (CPU ms, sorted)': sortedRuns(childMs.map((c) => c.main)),
            'in the bench process (CPU-s)': round(reads.cpuSeconds, 3),
            'bytes read': n(reads.bytes),
            calls: n(reads.calls),
          },
          note: 'reported only: the floor of the CPU-s changes below; the function in its own process',
        });
      continue;
    }
    for (const [operation, reads, floor, own, ownFloor, floorWhat] of [
      [
        'quote',
        quote,
        m.quoteFloor,
        m.child.quote,
        m.child.quoteFloor,
        `the same list quoted in a fresh organization with no history, in the quote function's own process (median over ${runs} runs of the median of ${CHILD_QUOTES_PER_RUN} quotes, run in turn with these)`,
      ],
      [
        'launch',
        launch ?? m.launchFloor,
        m.launchFloor,
        m.child.launch,
        m.child.launchFloor,
        `the same list launched in a fresh organization with no history, in the enrich function's own process (median of ${runs}, run in turn with these)`,
      ],
    ] as const) {
      const all = (cpu: readonly ChildCpu[]) => cpu.map((c) => c.all);
      const perRun = own.map((cpu, i) => change(cpu.all, ownFloor[i]!.all));
      const perRunMain = own.map((cpu, i) => change(cpu.main, ownFloor[i]!.main));
      results.add({
        group,
        name: `${n(options.launchAccounts)}-account ${operation}, ${scenario.label}: CPU-s change`,
        value: change(median(all(own)), median(all(ownFloor))),
        unit: '%',
        budget: { op: '<=', limit: CHANGE_BUDGET_PCT, text: `≤ ${CHANGE_BUDGET_PCT} %` },
        // The floor: what the same bucket keys, read bare, add to the request with no history (issue #43: "each beside its
        // floor in the same run (the same keys read bare)").
        floor: {
          value: (median(all(m.child.bareRead)) / median(all(ownFloor))) * 100,
          unit: '%',
          what: `the same ${n(bare.items)} bucket items read bare in a process of their own (${n(Math.ceil(bare.items / 100))} BatchGetItem, answers parsed once: ${round(median(all(m.child.bareRead)), 1)} CPU ms) against the request with no history`,
        },
        extra: {
          'CPU-s': round(median(all(own)) / 1000, 4),
          'with no history (CPU-s)': `${round(median(all(ownFloor)) / 1000, 4)}: ${floorWhat}`,
          'bare read per run (CPU ms, sorted)': sortedRuns(all(m.child.bareRead)),
          'change per run, own against its floor (sorted, %)': sortedRuns(perRun),
          'own / floor per run (CPU ms)': own.map((cpu, i) => `${round(cpu.all, 1)}/${round(ownFloor[i]!.all, 1)}`).join(', '),
          'main thread alone: change (%) of the medians; per run (sorted)': `${round(
            change(median(own.map((c) => c.main)), median(ownFloor.map((c) => c.main))),
            1,
          )}; ${sortedRuns(perRunMain)}`,
          'in the bench process: change (%)': round(change(reads.cpuSeconds, floor.cpuSeconds), 1),
          // The launch's change beyond the quote's is mostly these (bench/README.md "Why the launch's change is larger than the quote's").
          'mark-compact collections, own/floor per run': own.map((cpu, i) => `${cpu.major}/${ownFloor[i]!.major}`).join(', '),
          'young generation before, own/floor per run (KB)': own.map((cpu, i) => `${n(cpu.youngKB)}/${n(ownFloor[i]!.youngKB)}`).join(', '),
          'bytes read': n(reads.bytes),
          calls: n(reads.calls),
          'history calls': n(reads.historyCalls),
          'history bytes': n(reads.historyBytes),
          excluded: JSON.stringify(m.excluded),
          'history laid out in': `${round(m.seedS, 1)} s`,
        },
        note: `the bundled function warm in its own process; runs' changes from ${round(Math.min(...perRun), 1)} % to ${round(Math.max(...perRun), 1)} %`,
      });
    }
  }
  results.note(
    group,
    `Method: one organization per scenario, its history laid out directly (writeLaidOutHistory: ${n(HISTORY_BUCKET_LOAD)} entries a bucket, BatchWriteItem of the precomputed buckets) ` +
      `from campaigns of ${n(SEED_CAMPAIGN)} accounts completed a minute apart inside the ${WINDOW_DAYS}-day window; the CRM scenario's entries are CRM targets. ` +
      `The ${n(options.launchAccounts)}-account list: ${n(half)} accounts of the history and ${n(options.launchAccounts - half)} fresh ones (100 of them CRM targets in the CRM scenario). ` +
      `CPU-s: the quote and enrich functions bundled as deployed, each warm in a Node process of its own (bench/children/lambda-worker.mjs; bench/README.md "The history CPU figures"), each invocation after a full garbage collection there; per run ${CHILD_QUOTES_PER_RUN} quotes of one fresh campaign (their median) and one launch of another (its list: 500 fresh accounts of its own), in turn with the same done in a fresh organization with no history (the order alternating; the floor's launch in an organization of its own), each launch waited for until its workflow and its history recording are done; the figure is median over the ${runs} runs, each run's own change beside it. The same requests timed in the bench process (the handler's share, bench/lib/meter.ts) are reported beside it, and give the bytes and calls. Bytes: Content-Length of every DynamoDB response of the request. ` +
      `Completions: recordEnrichment (what FinishRecording runs) of accounts new to the history, after the launches' own recordings (${n(runs)} × ${n(options.launchAccounts - half)} fresh accounts; none in the first scenario, whose launches run in other organizations); write units = the units DynamoDB Local reported for every bucket PutItem ` +
      `(splits included; ConsumedCapacity, which bills a replaced item at the larger of its old and new size, as DynamoDB does), ⌈new item size / 1 KB⌉ beside them. Storage: every bucket item's size + 100 B.`,
  );
  results.note(
    group,
    `Prices (${PRICES.asOf}, bench/lib/cost.ts): DynamoDB on-demand $${round(PRICES.dynamodbWru * 1e6, 3)} per million write units, $${round(PRICES.dynamodbRru * 1e6, 3)} per million read units, ` +
      `$${PRICES.dynamodbGbMonth} per GB-month stored. The request-driven cost per 1,000 enriched accounts (a 100,000-account campaign) is the cost group's figure of the scale module; ` +
      `the history's storage is stated here, per million distinct accounts per month, never folded into it (bench/README.md).`,
  );
  workers.quote.close();
  workers.enrich.close();
}
