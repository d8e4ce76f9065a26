/**
 * Figure "account history" (issues #29, #43; docs/data-model.md "Recency and
 * CRM targets"): at 0, 100 k, 1 M and 10 M distinct accounts in an
 * organization's history, and with 1 M CRM targets,
 *
 * - a 1,000-account quote and launch: history bytes read per requested
 *   account (≤ 4 KB) beside the same bucket keys read bare, and the CPU-s
 *   change against the same request with no history (≤ 10 %);
 * - a 1,000- and a 100,000-account completion of accounts new to the
 *   history: write units per enriched account, amortized (≤ 1.0 for 1,000 at
 *   every size, ≤ 0.1 for 100,000 into 1 M): the completion's own delta
 *   items ÷ its accounts, plus the merge's units ÷ the accounts it merged
 *   (the merge measured in the same scenario: the 100,000-account completion
 *   brings the delta to its bound, HISTORY_DELTA_BOUND), beside their floor,
 *   the accounts' 8-byte hashes in 1 KB write units;
 * - the history's storage: bytes per distinct account (≤ 40) and dollars per
 *   million accounts per month (≤ $0.01), at the price list of bench/lib/cost.ts.
 *
 * The histories are laid out directly (lib/history/store.ts
 * `writeLaidOutHistory`: the buckets precomputed and written by
 * BatchWriteItem, the state the completions would leave), not through
 * completions: 10 M accounts take a minute or two, not hours. The entries
 * come from campaigns of 100,000 accounts completed a minute apart inside the
 * window. Before the quote and the launch, the delta is filled with new
 * accounts to HISTORY_DELTA_BOUND − (the launch + both completions), so the
 * 100,000-account completion brings it to the bound and merges it (the
 * scenario with no history gets its delta after the launch: it is the
 * floor); after the merge, the delta is filled to the bound − 1 (the most a
 * launch ever reads) and a quote is measured again. The launch's list is the same in every scenario: 500 accounts of
 * the history (recently enriched where there is one) and 500 fresh ones
 * (eligible; 100 of them CRM targets in the CRM scenario). The request-driven
 * cost per 1,000 enriched accounts is the `scale` module's (a 100,000-account
 * campaign, same run).
 */
import { nanoid } from 'nanoid';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { accountHistory, accountLists, embeddedWarehouse } from '../../lib/root';
import { ddb } from '../../lib/aws';
import {
  addressOf,
  bucketKeys,
  bucketOf,
  fingerprintOf,
  itemBytes,
  writeLaidOutHistory,
  HISTORY_BUCKET_LOAD,
  HISTORY_DELTA_BOUND,
  readHistoryDelta,
  createAccountHistoryStore,
  type AccountHistoryStore,
} from '../../lib/history/store';
import { organizations } from '../../lib/root';
import { keys } from '../../lib/db/table';
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { benchAccount, benchOrganization, importBenchAccounts } from '../lib/fixtures';
import { PRICES } from '../lib/cost';
import { round } from '../lib/stats';

/** Issue #29/#43 budget: a launch's (and a quote's) CPU-seconds change ≤ 10 % with the organization's history. */
const CHANGE_BUDGET_PCT = 10;
const QUOTE_RUNS = 5;
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

const n = (v: number) => Math.round(v).toLocaleString('en-US');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** What the history's writes of one `run` cost, in 1 KB write units (⌈item size / 1 KB⌉ of each item put or deleted). */
interface Writes {
  /** Delta items put, and their units. */
  deltaPuts: number;
  deltaUnits: number;
  /** Bucket PutItem calls (rewrites and split halves), of which split copies, and their units. */
  bucketPuts: number;
  splits: number;
  bucketUnits: number;
  /** Delta items deleted by a merge, and their units (DynamoDB bills a delete by the deleted item's size). */
  deltaDeletes: number;
  deleteUnits: number;
  /** Every unit above. */
  writeUnits: number;
}

/** The organization's delta items (one consistent Query of their partition): key → size in bytes. */
async function deltaSizes(tableName: string, organizationId: string): Promise<Map<string, number>> {
  return new Map((await readHistoryDelta(ddb, tableName, organizationId)).map((item) => [String(item.sk), itemBytes(item)]));
}

/**
 * Counts the history's writes made by `run` (an SDK middleware on the shared client). A delete's units come from the
 * size of the item it deletes: the delta's items as they were before `run`, and those `run` put.
 */
async function historyWrites(tableName: string, organizationId: string, run: () => Promise<unknown>): Promise<Writes> {
  const writes: Writes = {
    deltaPuts: 0,
    deltaUnits: 0,
    bucketPuts: 0,
    splits: 0,
    bucketUnits: 0,
    deltaDeletes: 0,
    deleteUnits: 0,
    writeUnits: 0,
  };
  const sizes = await deltaSizes(tableName, organizationId);
  const deltaPk = keys.accountHistoryDelta(organizationId, '').pk;
  const name = `bench-history-writes-${nanoid(6)}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = args.input as { Item?: Record<string, unknown>; Key?: Record<string, unknown> };
      if ((context.commandName === 'PutCommand' || context.commandName === 'PutItemCommand') && input.Item) {
        const units = Math.ceil(itemBytes(input.Item) / KB);
        if (input.Item.pk === deltaPk) {
          writes.deltaPuts++;
          writes.deltaUnits += units;
          sizes.set(String(input.Item.sk), itemBytes(input.Item));
        } else if (String(input.Item.pk).includes('#HBUCKET#')) {
          writes.bucketPuts++;
          if (input.Item.splitOf !== undefined) writes.splits++;
          writes.bucketUnits += units;
        }
      }
      if ((context.commandName === 'DeleteCommand' || context.commandName === 'DeleteItemCommand') && input.Key?.pk === deltaPk) {
        writes.deltaDeletes++;
        writes.deleteUnits += Math.ceil((sizes.get(String(input.Key.sk)) ?? KB) / KB);
      }
      return result;
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    ddb.middlewareStack.remove(name);
  }
  writes.writeUnits = writes.deltaUnits + writes.bucketUnits + writes.deleteUnits;
  return writes;
}

/** Appends `count` new accounts (IDs `prefix` + i) to the organization's delta, enriched at `at`, in calls of at most 50,000. */
async function fillDelta(history: AccountHistoryStore, organizationId: string, prefix: string, count: number, at: string): Promise<void> {
  for (let from = 0; from < count; from += 50_000)
    await history.recordEnrichment(
      organizationId,
      Array.from({ length: Math.min(50_000, count - from) }, (_, i) => `${prefix}${from + i}`),
      at,
    );
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
 * Reads the delta (one consistent Query) then bucket keys bare (consistent, as the launch reads them), counted as the requests' calls are (bench/lib/stack.ts
 * scope): response bytes, wall ms, items found.
 */
async function readBare(
  stack: BenchStack,
  organizationId: string,
  keys: { pk: string; sk: string }[],
): Promise<{ bytes: number; ms: number; items: number }> {
  const started = performance.now();
  let items = 0;
  const { scope } = await stack.inScope('history bare read', async () => {
    items += (await deltaSizes(stack.tableName, organizationId)).size;
    await readItems(stack.tableName, keys, true, () => items++);
  });
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
  for (const size of (await deltaSizes(tableName, organizationId)).values()) {
    bytes += size + 100;
    maxItem = Math.max(maxItem, size);
    items++;
  }
  return { bytes, items, accounts: state.entries, maxItem };
}

/** What one request read. */
interface Reads {
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

/** One measured completion: its writes (a merge's included), accounts, seconds, accounts it merged (0: none), N after it. */
interface Completion {
  writes: Writes;
  accounts: number;
  seconds: number;
  merged: number;
  buckets: number;
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
    /** Accounts of the large completion. */
    largeCompletion: number;
    /**
     * The delta's bound for the bench's own fills and completions (default HISTORY_DELTA_BOUND; quick runs lower it
     * to stay short: their merge shares are then larger and their delta reads smaller than the product's).
     */
    deltaBound?: number;
  },
): Promise<void> {
  const group = 'account history';
  // The store the stack runs, with the bench's delta bound (the launch's own recording runs in the stack, at the product's bound).
  const history = createAccountHistoryStore({
    client: ddb,
    tableName: stack.tableName,
    accountLists: accountLists(),
    ...(options.deltaBound === undefined ? {} : { deltaBound: options.deltaBound }),
  });
  const p = `h${nanoid(6).replace(/[^a-zA-Z0-9]/g, 'x')}`;
  const universeId = (i: number) => `${p}_u${i}`;
  const half = Math.floor(options.launchAccounts / 2);
  // 500 accounts every non-empty history holds (recently enriched there), 500 fresh ones.
  const known = Array.from({ length: half }, (_, j) => universeId(j));
  const fresh = await importBenchAccounts(`${p}f`, options.launchAccounts - half, 10);
  await embeddedWarehouse().importAccounts(known.map((id, j) => benchAccount(id, j, 10)));
  const accountIds = [...known, ...fresh];

  const scenarios: Scenario[] = [
    ...options.historySizes.map((accounts) => ({ label: `${n(accounts)} accounts in the history`, accounts, crmTargets: 0 })),
    ...(options.crmTargets > 0 ? [{ label: `${n(options.crmTargets)} CRM targets`, accounts: 0, crmTargets: options.crmTargets }] : []),
  ];
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
  }
  const measured: {
    scenario: Scenario;
    quote: Reads;
    launch: Reads;
    bare: { bytes: number; ms: number; items: number };
    seedS: number;
    buckets: number;
    deltaEntries: number;
    excluded: unknown;
    small: Completion;
    large: Completion;
    merge: { units: number; accounts: number; writes: Writes };
    storage: { bytes: number; items: number; accounts: number; maxItem: number };
    fullDelta: Reads;
  }[] = [];
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
      const targets = fresh.slice(0, 100);
      await writeLaidOutHistory({
        client: ddb,
        tableName: stack.tableName,
        organizationId,
        count: scenario.crmTargets,
        entryAt: (i) => ({ accountId: i < targets.length ? targets[i]! : `${p}_crm${i}`, enrichedAtMs: 0, crmTarget: true }),
      });
    }
    const seedS = (performance.now() - seeded) / 1000;
    const bound = options.deltaBound ?? HISTORY_DELTA_BOUND;
    const at = new Date(now - 30_000).toISOString();
    // The delta before the launch: new accounts up to the bound less the launch and both completions (none in the floor scenario).
    const deltaSeed = bound - options.launchAccounts - options.launchAccounts - options.largeCompletion;
    const isFloor = scenario.accounts === 0 && scenario.crmTargets === 0;
    if (!isFloor) await fillDelta(history, organizationId, `${p}_d${measured.length}_`, deltaSeed, at);
    const { buckets, deltaEntries } = await accountHistory().state(organizationId);
    // The floor of the history reads: the same delta and bucket keys, read bare.
    const bare = await readBare(
      stack,
      organizationId,
      [...bucketsOf(accountIds, buckets)].map((bucket) => keys.accountHistoryBucket(organizationId, bucket)),
    );

    const create = async () =>
      expectOk(
        await post<{ id: string }>(stack, PATHS.create, apiKey, {
          name: `History ${scenario.label}`,
          accountIds,
          excludeEnrichedWithinDays: WINDOW_DAYS,
        }),
        'create',
      ).id;
    const quoteCampaign = await create();
    const quoteReads = async (runs: number) => {
      const quotes: Reads[] = [];
      let excluded: unknown;
      for (let run = 0; run < runs; run++) {
        const reply = await postCounted<{ accounts: { excluded: unknown } }>(stack, PATHS.quote, apiKey, { campaignId: quoteCampaign });
        excluded = expectOk(reply, 'quote').accounts.excluded;
        quotes.push(readsOf(reply.scope.calls, reply.scope.cpuSeconds ?? Number.NaN));
      }
      return { reads: { ...quotes.at(-1)!, cpuSeconds: median(quotes.map((q) => q.cpuSeconds)) }, excluded };
    };
    const { reads: quote, excluded } = await quoteReads(QUOTE_RUNS);

    const launchCampaign = await create();
    const launched = await postCounted<{ status: string }>(stack, PATHS.enrich, apiKey, { campaignId: launchCampaign });
    expectOk(launched, 'enrich');
    const launch = readsOf(launched.scope.calls, launched.scope.cpuSeconds ?? Number.NaN);
    // The launch's workflow ends before the completions below are counted.
    await untilEnriched(stack, apiKey, launchCampaign);
    // FinishRecording runs after the status flips: its history writes end before the completions below are counted.
    for (const deadline = Date.now() + 300_000; (await organizations().get(organizationId))?.pendingRecency !== undefined;) {
      if (Date.now() > deadline) throw new Error(`Campaign ${launchCampaign}'s history was not recorded within 300 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Topped up (the launch recorded only its eligible accounts; the floor scenario had none yet): the two completions bring it to the bound.
    await fillDelta(
      history,
      organizationId,
      `${p}_t${measured.length}_`,
      bound - options.launchAccounts - options.largeCompletion - (await history.state(organizationId)).deltaEntries,
      at,
    );
    // Completions of accounts new to this history, counted at the store (what FinishRecording runs).
    const completion = async (count: number, tag: string) => {
      const ids = Array.from({ length: count }, (_, i) => `${p}_${tag}${i}`);
      const before = await history.state(organizationId);
      const started = performance.now();
      const writes = await historyWrites(stack.tableName, organizationId, () =>
        history.recordEnrichment(organizationId, ids, new Date().toISOString()),
      );
      const after = await history.state(organizationId);
      return {
        writes,
        accounts: count,
        seconds: (performance.now() - started) / 1000,
        merged: after.deltaEntries < before.deltaEntries + count ? before.deltaEntries + count - after.deltaEntries : 0,
        buckets: after.buckets,
      };
    };
    const small = await completion(options.launchAccounts, 'c');
    const large = await completion(options.largeCompletion, 'l');
    if (large.merged === 0)
      throw new Error(`The ${n(options.largeCompletion)}-account completion did not bring the delta to its bound (${n(bound)})`);
    const merge = { units: large.writes.bucketUnits + large.writes.deleteUnits, accounts: large.merged, writes: large.writes };
    const storage = await historyStorage(stack.tableName, organizationId);
    // The most a launch ever reads: the delta one entry short of its bound.
    await fillDelta(
      history,
      organizationId,
      `${p}_w${measured.length}_`,
      bound - 1 - (await history.state(organizationId)).deltaEntries,
      at,
    );
    const fullDelta = (await quoteReads(3)).reads;
    measured.push({ scenario, quote, launch, bare, seedS, buckets, deltaEntries, excluded, small, large, merge, storage, fullDelta });
    console.log(
      `  ${scenario.label}: seeded in ${round(seedS, 1)} s (${n(buckets)} buckets, delta ${n(deltaEntries)}); own delta writes ` +
        `${round(small.writes.deltaUnits / small.accounts, 4)} and ${round(large.writes.deltaUnits / large.accounts, 4)} WRU per account; ` +
        `merge of ${n(merge.accounts)}: ${n(merge.units)} WRU (${round(merge.units / merge.accounts, 4)} per account, ${round(large.seconds, 1)} s)`,
    );
  }

  const floorScenario = measured[0]!;
  const change = (value: number, floor: number) => (floor > 0 ? ((value - floor) / floor) * 100 : value > 0 ? Infinity : 0);
  for (const m of measured) {
    const { scenario, launch, quote, bare, small, large, storage } = m;
    for (const [operation, reads] of [
      ['launch', launch],
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
        extra: {
          'history calls': n(reads.historyCalls),
          'history bytes': n(reads.historyBytes),
          buckets: n(m.buckets),
          'delta entries': n(m.deltaEntries),
        },
      });
    }
    results.add({
      group,
      name: `${n(options.launchAccounts)}-account quote, ${scenario.label}, the delta at its bound − 1 (${n((options.deltaBound ?? HISTORY_DELTA_BOUND) - 1)} entries): history bytes read per requested account`,
      value: m.fullDelta.historyBytes / options.launchAccounts,
      unit: 'bytes',
      budget: { op: '<=', limit: READ_BYTES_PER_ACCOUNT_BUDGET, text: `≤ ${READ_BYTES_PER_ACCOUNT_BUDGET} (the most a launch reads)` },
      extra: {
        'history calls': n(m.fullDelta.historyCalls),
        'history bytes': n(m.fullDelta.historyBytes),
        'CPU-s': round(m.fullDelta.cpuSeconds, 3),
        'CPU-s change': `${round(change(m.fullDelta.cpuSeconds, floorScenario.quote.cpuSeconds), 1)} %`,
      },
    });
    const mergeShare = m.merge.units / m.merge.accounts;
    results.add({
      group,
      name: `merge of the delta at its bound, ${scenario.label}: write units per account merged`,
      value: mergeShare,
      unit: 'WRU',
      note: 'reported only: the share of a merge in each completion figure below',
      extra: {
        'accounts merged': n(m.merge.accounts),
        'bucket PutItem': n(m.merge.writes.bucketPuts),
        'split copies': n(m.merge.writes.splits),
        'bucket units': n(m.merge.writes.bucketUnits),
        'delta items deleted': n(m.merge.writes.deltaDeletes),
        'delete units': n(m.merge.writes.deleteUnits),
        'buckets after': n(large.buckets),
        seconds: round(large.seconds, 1),
      },
    });
    for (const [label, completion, budget] of [
      [`${n(small.accounts)}-account completion`, small, COMPLETION_WRU_PER_ACCOUNT_BUDGET],
      [
        `${n(large.accounts)}-account completion`,
        large,
        scenario.accounts === LARGE_COMPLETION_BUDGET_AT && large.accounts >= 100_000 ? LARGE_COMPLETION_WRU_PER_ACCOUNT_BUDGET : undefined,
      ],
    ] as const) {
      const w = completion.writes;
      // The floor: the accounts' 8-byte hashes, in 1 KB units.
      const floorUnits = Math.ceil((completion.accounts * 8) / KB);
      results.add({
        group,
        name: `${label}, ${scenario.label}: write units per enriched account (amortized: own delta items + its share of a merge)`,
        value: w.deltaUnits / completion.accounts + mergeShare,
        unit: 'WRU',
        ...(budget === undefined
          ? {
              note: `reported only: the ${n(100_000)}-account budget (≤ ${LARGE_COMPLETION_WRU_PER_ACCOUNT_BUDGET}) is stated at ${n(LARGE_COMPLETION_BUDGET_AT)} accounts`,
            }
          : { budget: { op: '<=' as const, limit: budget, text: `≤ ${budget}` } }),
        floor: {
          value: floorUnits / completion.accounts,
          unit: 'WRU',
          what: `the accounts' 8-byte hashes in 1 KB write units (${n(floorUnits)})`,
        },
        extra: {
          'delta items': n(w.deltaPuts),
          'delta units': n(w.deltaUnits),
          'merge share': round(mergeShare, 4),
          'this call, all units': n(w.writeUnits),
          ...(completion.merged > 0 ? { 'merged here': n(completion.merged) } : {}),
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
      for (const [operation, reads] of [
        ['quote', quote],
        ['launch', launch],
      ] as const)
        results.add({
          group,
          name: `${n(options.launchAccounts)}-account ${operation}, no history (the floor)`,
          value: reads.cpuSeconds,
          unit: 'CPU-s',
          extra: { 'bytes read': n(reads.bytes), calls: n(reads.calls) },
          note: 'reported only: the floor of the CPU-s changes below',
        });
      continue;
    }
    for (const [operation, reads, floor] of [
      ['quote', quote, floorScenario.quote],
      ['launch', launch, floorScenario.launch],
    ] as const) {
      results.add({
        group,
        name: `${n(options.launchAccounts)}-account ${operation}, ${scenario.label}: CPU-s change`,
        value: change(reads.cpuSeconds, floor.cpuSeconds),
        unit: '%',
        budget: { op: '<=', limit: CHANGE_BUDGET_PCT, text: `≤ ${CHANGE_BUDGET_PCT} %` },
        floor: { value: floor.cpuSeconds, unit: 'CPU-s', what: 'the same request with no history' },
        extra: {
          'CPU-s': round(reads.cpuSeconds, 3),
          'bytes read': n(reads.bytes),
          calls: n(reads.calls),
          'history calls': n(reads.historyCalls),
          'history bytes': n(reads.historyBytes),
          excluded: JSON.stringify(m.excluded),
          'history laid out in': `${round(m.seedS, 1)} s`,
        },
      });
    }
  }
  results.note(
    group,
    `Method: one organization per scenario, its history laid out directly (writeLaidOutHistory: ${n(HISTORY_BUCKET_LOAD)} entries a bucket, BatchWriteItem of the precomputed buckets) ` +
      `from campaigns of ${n(SEED_CAMPAIGN)} accounts completed a minute apart inside the ${WINDOW_DAYS}-day window; the CRM scenario's entries are CRM targets. ` +
      `The ${n(options.launchAccounts)}-account list: ${n(half)} accounts of the history and ${n(options.launchAccounts - half)} fresh ones (100 of them CRM targets in the CRM scenario). ` +
      `CPU-s: the handler's share of this process (bench/lib/meter.ts), median of ${QUOTE_RUNS} quotes, one launch. Bytes: Content-Length of every DynamoDB response of the request. ` +
      `The delta: new accounts appended before the quote and launch (none in the scenario with no history, the floor) up to its bound (${n(options.deltaBound ?? HISTORY_DELTA_BOUND)}${options.deltaBound === undefined ? '' : `, lowered for this run; the product's is ${n(HISTORY_DELTA_BOUND)}`}) less the launch and both completions, ` +
      `so the ${n(options.largeCompletion)}-account completion brings it to its bound and merges it; after the merge it is filled to the bound − 1 and a quote measured again (the most a launch reads). ` +
      `Completions: recordEnrichment (what FinishRecording runs) of accounts new to the history, after the launch's own recording; write units = ⌈item size / 1 KB⌉ of every item put ` +
      `(delta items, bucket rewrites and split halves) or deleted (delta items a merge removes: DynamoDB bills a delete by the item's size). A completion's figure is amortized: ` +
      `its own delta items ÷ its accounts + the merge's units ÷ the accounts it merged. Storage: every bucket and delta item's size + 100 B, after the merge.`,
  );
  results.note(
    group,
    `Prices (${PRICES.asOf}, bench/lib/cost.ts): DynamoDB on-demand $${round(PRICES.dynamodbWru * 1e6, 3)} per million write units, $${round(PRICES.dynamodbRru * 1e6, 3)} per million read units, ` +
      `$${PRICES.dynamodbGbMonth} per GB-month stored. The request-driven cost per 1,000 enriched accounts (a 100,000-account campaign) is the cost group's figure of the scale module; ` +
      `the history's storage is stated here, per million distinct accounts per month, never folded into it (bench/README.md).`,
  );
}
