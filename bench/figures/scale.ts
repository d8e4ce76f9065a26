/**
 * Figures "launch evaluation", "enrichment workflow" and "export" at full
 * size: one campaign of N accounts (100,000 in a full run), each with C
 * contacts (10) in the embedded warehouse.
 *
 * 1. Setup: the warehouse import (`embeddedWarehouse().importAccounts`, in
 *    chunks) and an organization with N credits and a ceiling of N; the
 *    campaign is created through the API with the N IDs in one JSON body.
 * 2. Launch evaluation: the enrich call through the API, until its response.
 * 3. Workflow: from the enrich call until get answers `enriched` (polled),
 *    as accounts per second; FinishRecording (the recency marker), which runs after the status
 *    flips, is waited for and reported apart so it does not overlap export.
 * 4. Export: the CampaignsExport bundle (CDK options) invoked once in its
 *    own Node process, as Lambda runs it, until it returns the presigned
 *    URL; then the file is downloaded. Peak RSS is that process's VmHWM.
 *
 * Where the time goes: CPU seconds of this process and of DynamoDB Local
 * per phase, the phases of the workflow from its recorded SDK calls, and CPU
 * profiles (this process through the inspector; the export process through
 * --cpu-prof, mapped through the bundle's source map).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import type { Results } from '../lib/results';
import { busyMs, cpuBetween, cpuSnapshot, type BenchStack, type CallRecord, type Scope } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { benchOrganization, importBenchAccounts } from '../lib/fixtures';
import { buildBundle } from '../lib/bundle';
import { runExportLambda } from '../lib/children';
import { formatTop, formatTopFrames, profileInProcess, summarizeProfile, type CpuProfile } from '../lib/cpu-profile';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../lib/aws';
import * as keys from '../../lib/db/keys';
import { addressOf, bucketKeys, bucketOf, fingerprintOf, itemBytes } from '../../lib/history/store';
import { accountHistory } from '../../lib/root';
import { busyAlternation, round, type BusySlice } from '../lib/stats';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { s3 } from '../../lib/aws';
import { OBJECT_PREFIXES, objectKeys } from '../../lib/objects';
import { config } from '../../lib/config';
import { memoryOf } from '../../infra/memory';
import { MAP_CONCURRENCY, WORKFLOW_TASKS } from '../../infra/workflow';
import { BATCH_CONCURRENCY } from '../../lib/db/batch';
import {
  costLines,
  costTable,
  dollars,
  lambdaSeconds,
  PRICES,
  scaleLines,
  totalOf,
  vcpuShare,
  type LambdaUse,
  type Usage,
} from '../lib/cost';
import type { ExecutionMeter } from '../lib/meter';

/** Issue #13 budgets. */
const LAUNCH_BUDGET_S = 12;
/** Issue #13's evaluation calls, restated by issue #43 as "≤ 1,000 + the history reads": the warehouse reads' part. */
const EVALUATION_CALLS_BUDGET = 1_000;
const EXPORT_CPU_BUDGET_S = 4;
const EXPORT_RSS_BUDGET_MB = 200;
/**
 * Issue #43: the request-driven cost per 1,000 enriched accounts (launch, workflow, completion, result
 * storage for the access period), the history's storage NOT folded in (bench/README.md "Budgets restated").
 */
export const COST_BUDGET_PER_1000 = 0.00025;
/** Issue #43: the history's storage, per million distinct accounts per month ($), and per account (bytes). */
const HISTORY_STORAGE_BUDGET_PER_MILLION_MONTH = 0.01;
const HISTORY_BYTES_PER_ACCOUNT_BUDGET = 40;
/** Issue #29: the 100k launch against its own reads, bare. */
const LAUNCH_BARE_READS_X = 1.1;
/** Issue #29: FindContacts' warehouse read units per enriched account. */
const WAREHOUSE_RRU_PER_ACCOUNT_BUDGET = 1.0;
/** API functions must stay well inside API Gateway's 29 s: half of it, on Lambda at the configured memory. */
const API_LAMBDA_BUDGET_S = 14.5;
const WORKFLOW_BUDGET_PER_S = 5_000;
/** Issue #43: the workflow's accounts/s ÷ the rate its own reads reach bare (evaluation + FindContacts), at the run's size. */
const WORKFLOW_BARE_RATIO_BUDGET = 0.8;
const MB = 1e6;
const DAY_S = 86_400;
/** A month as S3 bills storage (GB-month): 30 days here. */
const MONTH_S = 30 * DAY_S;

const n = (v: number) => Math.round(v).toLocaleString('en-US');

/**
 * Bytes an organization's account history takes in the table (DynamoDB's item size: attribute names and
 * values, plus 100 bytes of overhead per item), every bucket read once (lib/history/store.ts).
 */
async function historyStoredBytes(tableName: string, organizationId: string): Promise<number> {
  const buckets = bucketKeys(organizationId, (await accountHistory().state(organizationId)).buckets);
  let bytes = 0;
  for (let i = 0; i < buckets.length; i += 100) {
    const { Responses } = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: buckets.slice(i, i + 100) } } }));
    for (const item of Responses?.[tableName] ?? []) bytes += itemBytes(item, 100);
  }
  return bytes;
}

/** Span (ms) from the first call's start to the last call's end. */
const span = (calls: readonly CallRecord[]) =>
  calls.length ? Math.max(...calls.map((c) => c.at + c.ms)) - Math.min(...calls.map((c) => c.at)) : 0;

/** `BatchGetItem warehouse: 2,000 calls, 12.3 s in flight` */
function callSummary(calls: readonly CallRecord[]): string {
  const groups = new Map<string, CallRecord[]>();
  for (const call of calls) {
    const key = `${call.service === 's3' ? 'S3 ' : ''}${call.command} ${call.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), call]);
  }
  return [...groups]
    .sort((a, b) => b[1].length - a[1].length)
    .map(
      ([key, list]) =>
        `${key} ×${n(list.length)} (busy ${round(busyMs(list) / 1000, 1)} s, mean ${round(list.reduce((s, c) => s + c.ms, 0) / list.length, 1)} ms)`,
    )
    .join('; ');
}

/**
 * Calls in the order they were made, with each run of consecutive calls of
 * the same command told once (`S3 PutObject ×201 (outcomes 100, batchAccounts
 * 100, eligibleList 1; 33.6–388.9 ms each)`), so hundreds of writes read as
 * one step instead of hundreds (RESULTS.md keeps its lines short).
 */
function callSequence(calls: readonly CallRecord[]): string {
  const name = (call: CallRecord) => `${call.service === 's3' ? 'S3 ' : ''}${call.command}`;
  const runs: CallRecord[][] = [];
  for (const call of calls) {
    const last = runs.at(-1);
    if (last && name(last[0]!) === name(call)) last.push(call);
    else runs.push([call]);
  }
  return runs
    .map((run) => {
      const first = run[0]!;
      if (run.length === 1) return `${name(first)}(${first.kind}) ${round(first.ms, 1)} ms`;
      const kinds = new Map<string, number>();
      for (const call of run) kinds.set(call.kind, (kinds.get(call.kind) ?? 0) + 1);
      const ms = run.map((call) => call.ms);
      return `${name(first)} ×${n(run.length)} (${[...kinds].map(([kind, count]) => `${kind} ${n(count)}`).join(', ')}; ${round(Math.min(...ms), 1)}–${round(Math.max(...ms), 1)} ms each)`;
    })
    .join(' → ');
}

/**
 * The read floor: how fast DynamoDB Local serves BatchGetItem of 100 keys for
 * a given key pattern here, through the same shared client, with none of the
 * product's logic around it. `calls` requests, `concurrency` in flight.
 */
async function batchGetRate(tableName: string, keyGroups: Array<Record<string, unknown>[]>, concurrency: number, projection?: string[]) {
  const names = projection ? Object.fromEntries(['pk', 'sk', ...projection].map((name, i) => [`#a${i}`, name])) : undefined;
  let next = 0;
  let items = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keyGroups.length) {
        const group = keyGroups[next++]!;
        const { Responses, UnprocessedKeys } = await ddb.send(
          new BatchGetCommand({
            RequestItems: {
              [tableName]: {
                Keys: group,
                ...(names ? { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } : {}),
              },
            },
          }),
        );
        if (Object.keys(UnprocessedKeys ?? {}).length > 0) throw new Error('DynamoDB Local left keys unprocessed');
        items += Responses?.[tableName]?.length ?? 0;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { callsPerS: keyGroups.length / seconds, keysPerS: (keyGroups.length * 100) / seconds, itemsPerS: items / seconds };
}

const groupsOf = (list: Record<string, unknown>[], size = 100) =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));

/** Runs `fn`, under the in-process CPU profiler when `enabled`. */
async function maybeProfiled<T>(enabled: boolean, fn: () => Promise<T>): Promise<{ result: T; profile?: CpuProfile }> {
  return enabled ? profileInProcess(fn) : { result: await fn() };
}

const profileText = (profile: CpuProfile | undefined, n = 10) =>
  profile
    ? ` Profile of this process (self time): ${formatTop(summarizeProfile(profile), n)}.`
    : ' (Run with --profile for a CPU profile of this process.)';

/** Bytes and objects stored under a campaign's prefix (every object the workflow and launch keep for it). */
async function storedUnder(
  bucket: string,
  organizationId: string,
  campaignId: string,
): Promise<{ bytes: number; objects: number; accountListBytes: number }> {
  const prefix = `${OBJECT_PREFIXES.campaigns}${organizationId}/${campaignId}/`;
  // The campaign's own account list (create's input) lives with the campaign item; every other object is a result of an evaluation or attempt.
  const accountList = objectKeys.accountList(organizationId, campaignId);
  let bytes = 0;
  let objects = 0;
  let accountListBytes = 0;
  let token: string | undefined;
  do {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (object.Key === accountList) {
        accountListBytes += object.Size ?? 0;
        continue;
      }
      bytes += object.Size ?? 0;
      objects++;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { bytes, objects, accountListBytes };
}

/** S3 request classes of SDK calls: PUT, COPY, POST, LIST bill as `put`; GET, HEAD as `get`; DELETE is free. */
export function s3Classes(calls: readonly CallRecord[]) {
  let put = 0;
  let get = 0;
  for (const call of calls) {
    if (call.service !== 's3') continue;
    if (/^Delete/.test(call.command)) continue;
    if (/^(Put|Copy|CreateMultipart|UploadPart|CompleteMultipart|List)/.test(call.command)) put++;
    else get++;
  }
  return { put, get };
}

export const dynamoUnits = (calls: readonly CallRecord[]) => ({
  rru: calls.reduce((s, c) => s + (c.rru ?? 0), 0),
  wru: calls.reduce((s, c) => s + (c.wru ?? 0), 0),
});

const stateFunction = new Map<string, string>(Object.values(WORKFLOW_TASKS).map((t) => [t.state, t.functionId]));

/** Lambda use of an execution's task invocations (optionally only some states). */
export function taskLambdaUse(meter: ExecutionMeter, states?: (state: string) => boolean): LambdaUse[] {
  return [...meter.tasks]
    .filter(([state]) => !states || states(state))
    .map(([state, t]) => {
      const functionId = stateFunction.get(state) ?? state;
      return { functionId, memoryMb: memoryOf(functionId), invocations: t.count, cpuSeconds: t.cpuSeconds };
    });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A small campaign with the access period shortened (RESULTS_ACCESS_PERIOD_SECONDS,
 * read per invocation): enriched, exported once in-process, then left to run
 * to ExpireResults; what stays stored under its prefix is the figure.
 */
async function expiryScenario(stack: BenchStack, accounts: number) {
  const { organizationId, apiKey } = await benchOrganization('Bench expiry', accounts, accounts);
  const ids = await importBenchAccounts(`exp${Date.now().toString(36)}`, accounts, 2);
  const campaignId = expectOk(await post<{ id: string }>(stack, PATHS.create, apiKey, { name: 'Expiry', accountIds: ids }), 'create').id;
  const previous = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
  const accessS = 5;
  process.env.RESULTS_ACCESS_PERIOD_SECONDS = String(accessS);
  let completed: { bytes: number; objects: number };
  let workflowScope: Scope;
  try {
    expectOk(await post(stack, PATHS.enrich, apiKey, { campaignId }), 'enrich');
    workflowScope = stack.workflowScopes.at(-1)!;
    await until(
      'the expiry campaign to be enriched',
      async () => expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get').status !== 'enriching',
      120_000,
    );
  } finally {
    if (previous === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previous;
  }
  completed = await storedUnder(stack.bucketName, organizationId, campaignId);
  const exported = await postCounted(stack, PATHS.export, apiKey, { campaignId });
  const exportUnits = exported.status === 200 ? dynamoUnits(exported.scope.calls) : undefined;
  const meter = () => stack.executions.of(campaignId).at(-1);
  await until(
    'the expiry campaign to expire (ExpireResults)',
    async () => expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get').status === 'expired',
    120_000,
    250,
  );
  await until("the expiry campaign's execution to end", () => meter()?.ended === true, 60_000, 100);
  const left = await storedUnder(stack.bucketName, organizationId, campaignId);
  const execution = meter()!;
  const tailTransitions = execution.transitions - (execution.transitionsBeforeExpiryWait ?? execution.transitions);
  // After completion: the expiry wait and ExpireResults (and whatever it deletes or lists).
  const tailCalls = workflowScope.calls.filter((c) => c.at >= (execution.expiryWaitAt ?? Infinity));
  return { accounts, accessS, completed, left, execution, tailTransitions, tailCalls, exportUnits };
}

/** Keys read by BatchGetItem calls (each call records how many keys it asked for). */
const keysOf = (calls: readonly CallRecord[]) => calls.reduce((sum, c) => sum + (c.items ?? 0), 0);

/** What every step of the scale run reads: where to record, the stack, the options and the sizes. */
interface ScaleRun {
  results: Results;
  stack: BenchStack;
  options: { accounts: number; contactsPerAccount: number; tmpDir: string; profile: boolean };
}

/** The warehouse import and the organization (setup, not budgeted). */
async function setUp(s: ScaleRun) {
  const { options, results, stack } = s;
  const N = options.accounts;
  const C = options.contactsPerAccount;
  const ledgerFrom = stack.ledger.invocations.length;

  // 1. Setup.
  const setup = 'setup (not budgeted)';
  let snap = cpuSnapshot(stack);
  let t = performance.now();
  const ids = await importBenchAccounts(`acc${Date.now().toString(36)}`, N, C);
  const importS = (performance.now() - t) / 1000;
  let cpu = cpuBetween(snap, cpuSnapshot(stack));
  results.add({
    group: setup,
    name: `warehouse import, ${n(N)} accounts × ${C} contacts (${n(2 * N)} items)`,
    value: importS,
    unit: 's',
    extra: { 'items/s': n((2 * N) / importS), 'node cores': round(cpu.nodeCores, 2), 'DynamoDB Local cores': round(cpu.javaCores, 2) },
  });
  results.note(
    setup,
    'The warehouse is imported without its identifier index (bench/lib/fixtures.ts `importBenchAccounts`): only the vendor erasure reads it, ' +
      'and none of these figures measures that; the account and contacts items launch and FindContacts read are written as the product writes them.',
  );
  const { organizationId, apiKey } = await benchOrganization('Bench scale', N, N);
  return { ...s, N, C, ledgerFrom, setup, snap, t, ids, importS, cpu, organizationId, apiKey };
}

/** Stored result bytes past expiry: a small campaign run to ExpireResults with the access period shortened. */
async function expiryStep(s: Awaited<ReturnType<typeof setUp>>) {
  const { results, stack } = s;
  // Expiry: a small campaign run to ExpireResults with the access period shortened (also gives the workflow's tail after completion).
  const expiry = await expiryScenario(stack, 200);
  const storageGroup = 'stored result bytes';
  results.add({
    group: storageGroup,
    name: `result bytes left under the campaign's prefix after ExpireResults ran (${expiry.accounts}-account campaign, access period shortened to ${expiry.accessS} s)`,
    value: expiry.left.bytes,
    unit: 'bytes',
    budget: { op: '<=', limit: 0, text: '0 result bytes past expiry + 1 day' },
    extra: {
      'result objects': `${expiry.left.objects} left of ${expiry.completed.objects}`,
      'result bytes at completion': `${n(expiry.completed.bytes)} bytes`,
      "the campaign's account list (create's input, kept with the campaign item; not a result)": `${n(expiry.left.accountListBytes)} bytes`,
    },
  });
  results.note(
    storageGroup,
    `Method: RESULTS_ACCESS_PERIOD_SECONDS=${expiry.accessS} while the campaign was enriched (the step reads it per invocation), then get polled until \`expired\` and the local execution ended ` +
      `(ExpireResults ran); the campaign's prefix (${OBJECT_PREFIXES.campaigns}<org>/<campaign>/) listed before and after. An S3 lifecycle rule would act on AWS only (s3rver does not run lifecycle rules); ` +
      'objects removed by one do not show here.',
  );
  return { ...s, expiry, storageGroup };
}

/** The bare rates of the launch evaluation's and FindContacts' reads (keys/s): the same BatchGetItem patterns, nothing around them. */
async function readRates(
  tableName: string,
  sample: readonly string[],
  historyBuckets: Awaited<ReturnType<ReturnType<typeof accountHistory>['state']>>['buckets'],
  organizationId: string,
) {
  const statusRate = await batchGetRate(tableName, groupsOf(sample.map((id) => keys.warehouseAccount(id))), 32, ['accountId', 'status']);
  const factsRate = await batchGetRate(
    tableName,
    groupsOf(
      [...new Set(sample.map((id) => bucketOf(addressOf(fingerprintOf(id)), historyBuckets).bucket))].map((bucket) =>
        keys.accountHistoryBucket(organizationId, bucket),
      ),
    ),
    32,
    ['entries'],
  );
  // FindContacts reads the contacts items alone (the account fields ride in the batch objects), 16 calls in flight per batch
  // (lib/db/batch.ts BATCH_CONCURRENCY) × the Map's batches at once (infra/workflow.ts MAP_CONCURRENCY): its floor is
  // the same keys at the same concurrency, bare. (Until this stop it read account + contacts items, 64 in flight: half
  // its keys were the small account items, a floor no workflow reads.)
  const contactsRate = await batchGetRate(
    tableName,
    groupsOf(sample.slice(0, 20_000).map((id) => keys.warehouseContacts(id))),
    BATCH_CONCURRENCY * MAP_CONCURRENCY,
  );
  return { statusRate, factsRate, contactsRate };
}

/** The read floors of the launch evaluation and of FindContacts: the same BatchGetItem patterns, bare. */
async function readFloors(s: Awaited<ReturnType<typeof expiryStep>>) {
  const { N, ids, organizationId, results } = s;
  // The read floor of the launch evaluation and of FindContacts: the same BatchGetItem patterns, bare.
  const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(N / 20_000)) === 0).slice(0, 20_000);
  const historyBuckets = (await accountHistory().state(organizationId)).buckets;
  const { statusRate, factsRate, contactsRate } = await readRates(s.stack.tableName, sample, historyBuckets, organizationId);
  results.note(
    'launch evaluation',
    `Read floor, same run: bare BatchGetItem of 100 keys through the same shared client, 32 in flight — warehouse statuses (projection) ${n(statusRate.keysPerS)} keys/s, ` +
      `account-history bucket keys (lib/history/store.ts) ${n(factsRate.keysPerS)} keys/s. The floor of the figure is the evaluation's own keys (counted below) at these rates.`,
  );
  results.note(
    'enrichment workflow',
    `Read floor, same run: bare BatchGetItem of contacts items, FindContacts' own keys (100 keys, ${BATCH_CONCURRENCY * MAP_CONCURRENCY} in flight: ${BATCH_CONCURRENCY} per batch × ${MAP_CONCURRENCY} batches) ${n(contactsRate.keysPerS)} keys/s. The floor of the figure is the ` +
      "evaluation's and FindContacts' own keys (counted below) at the measured rates.",
  );
  return { ...s, sample, statusRate, historyBuckets, factsRate, contactsRate };
}

/** The campaign of N accounts, created through the API (setup). */
async function createCampaign(s: Awaited<ReturnType<typeof readFloors>>) {
  const { N, apiKey, ids, results, setup, stack } = s;
  const createBody = JSON.stringify({ name: `Scale ${n(N)}`, accountIds: ids });
  const created = await post<{ id: string; accounts: { requested: number } }>(stack, PATHS.create, apiKey, createBody);
  const campaignId = expectOk(created, 'create').id;
  if (created.data.accounts.requested !== N) throw new Error(`The campaign has ${created.data.accounts.requested} accounts, not ${N}`);
  results.add({
    group: setup,
    name: `create through the API, ${n(N)} IDs in one JSON body (${round(Buffer.byteLength(createBody) / MB, 2)} MB)`,
    value: created.ms / 1000,
    unit: 's',
  });
  return { ...s, createBody, created, campaignId };
}

/** The launch evaluation: the enrich call against its own reads bare, its DynamoDB calls, and why. */
async function launchStep(s: Awaited<ReturnType<typeof createCampaign>>) {
  const { N, apiKey, campaignId, factsRate, options, results, stack, statusRate } = s;
  let { cpu } = s;
  // 2. Launch evaluation.
  const launchGroup = 'launch evaluation';
  const recordedBefore = stack.recordedAccounts();
  const enrichStarted = performance.now();
  let enrichAnswered = 0;
  /**
   * Launches that passed the API deadline (docs/reliability.md "Deadlines": the evaluation stops, nothing is charged, the
   * answer is 500): on a loaded machine a 100,000-account evaluation can outlast it. The call is then made again (at
   * most twice more), so the module still measures a workflow; each refused try is reported beside the figure.
   */
  const refusedTries: string[] = [];
  const launchOnce = () =>
    maybeProfiled(options.profile, async () => {
      const before = cpuSnapshot(stack);
      const reply = await postCounted<{ status: string; accounts: { eligible: number } }>(stack, PATHS.enrich, apiKey, { campaignId });
      enrichAnswered = performance.now();
      cpu = cpuBetween(before, cpuSnapshot(stack));
      return reply;
    });
  let { result: enrich, profile: launchProfile } = await launchOnce();
  while (enrich.status === 500 && refusedTries.length < 2) {
    const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get');
    if (got.status !== 'draft') break;
    refusedTries.push(
      `${enrich.status} ${enrich.error?.code ?? ''} after ${round(enrich.ms / 1000, 1)} s (load ${round(loadavg()[0]!, 1)})`,
    );
    ({ result: enrich, profile: launchProfile } = await launchOnce());
  }
  // A launch answered with an error that still committed (its transaction was under way): wait for the campaign to
  // leave `draft` before measuring the workflow.
  let committedLate = false;
  if (enrich.status !== 200) {
    // A launch answered with an error never charges afterwards (docs/reliability.md "Deadlines"): a short wait tells.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get');
      if (got.status === 'enriching' || got.status === 'enriched') break;
      if (Date.now() > deadline)
        throw new Error(
          `enrich answered ${enrich.status} (${JSON.stringify(enrich.error)}) after ${round(enrich.ms / 1000, 1)} s and the campaign is still ${got.status} 30 s later` +
            (refusedTries.length ? `; tries before: ${refusedTries.join('; ')}` : ''),
        );
      await new Promise((r) => setTimeout(r, 250));
    }
    committedLate = true;
  } else {
    const launch = enrich.data;
    if (launch.status !== 'enriching' || launch.accounts.eligible !== N)
      throw new Error(`enrich answered ${launch.status} with ${launch.accounts.eligible} eligible, expected enriching with ${N}`);
  }
  const evaluation = enrich.scope.calls.filter(
    (c) => c.service === 'dynamodb' && c.command === 'BatchGetItem' && (c.kind === 'warehouse' || c.kind.startsWith('accountHistory')),
  );
  const others = enrich.scope.calls.filter((c) => !evaluation.includes(c));
  const statusKeys = keysOf(evaluation.filter((c) => c.kind === 'warehouse'));
  const historyKeys = keysOf(evaluation.filter((c) => c.kind !== 'warehouse'));
  /** Seconds the evaluation's reads need at the bare rates. */
  const evaluationFloorS = statusKeys / statusRate.keysPerS + historyKeys / factsRate.keysPerS;
  const commit = enrich.scope.calls.find((c) => c.command === 'TransactWriteItems');
  const committedS = commit ? (commit.at + commit.ms - enrichStarted) / 1000 : Number.NaN;
  results.add({
    group: launchGroup,
    name: `enrich call, ${n(N)}-account campaign, until response`,
    value: enrich.ms / 1000,
    unit: 's',
    budget: { op: '<=', limit: LAUNCH_BUDGET_S, text: `≤ ${LAUNCH_BUDGET_S} s (local)` },
    floor: { value: evaluationFloorS, unit: 's', what: 'the evaluation reads, bare, at the measured BatchGetItem rates' },
    extra: {
      answer: enrich.status === 200 ? '200 enriching' : `${enrich.status} ${enrich.error?.code ?? ''}`,
      ...(committedLate ? { 'launch committed (in the background)': `${round(committedS, 1)} s after the call` } : {}),
      ...(refusedTries.length ? { 'tries refused before this one (deadline, nothing charged)': refusedTries.join('; ') } : {}),
      'evaluation reads': `${n(evaluation.length)} BatchGetItem over ${round(span(evaluation) / 1000, 1)} s`,
      'node cores': round(cpu.nodeCores, 2),
      'DynamoDB Local cores': round(cpu.javaCores, 2),
    },
  });
  results.add({
    group: launchGroup,
    name: `enrich call, ${n(N)}-account campaign, against its own reads bare`,
    value: enrich.ms / 1000 / evaluationFloorS,
    unit: '×',
    budget: { op: '<=', limit: LAUNCH_BARE_READS_X, text: `≤ ${LAUNCH_BARE_READS_X} × its bare reads` },
    floor: {
      value: evaluationFloorS,
      unit: 's',
      what: 'the evaluation reads (warehouse accounts, history shards), bare, at the measured BatchGetItem rates',
    },
    extra: { 'history keys': n(historyKeys), 'warehouse keys': n(statusKeys) },
    note: 'issue #29: the launch reads its own accounts and the history shards they fall in (at most 4,096), nothing per prior campaign',
  });
  const enrichDynamo = enrich.scope.calls.filter((c) => c.service === 'dynamodb');
  const byCommand = new Map<string, number>();
  for (const c of enrichDynamo) byCommand.set(`${c.command}(${c.kind})`, (byCommand.get(`${c.command}(${c.kind})`) ?? 0) + 1);
  // Issue #13 counts the evaluation's calls (its "now" was 2,000–3,000: the per-account reads); issue #43 states the budget as
  // ≤ 1,000 + the history reads (the buckets the IDs fall in: one call even for an empty history, N = 1). The whole request's are reported beside it.
  const historyCalls = evaluation.filter((c) => c.kind !== 'warehouse').length;
  results.add({
    group: launchGroup,
    name: `DynamoDB calls to evaluate ${n(N)} accounts (the launch evaluation's reads)`,
    value: evaluation.length,
    unit: 'calls',
    budget: {
      op: '<=',
      limit: EVALUATION_CALLS_BUDGET + historyCalls,
      text: `≤ ${n(EVALUATION_CALLS_BUDGET)} + the history reads (${n(historyCalls)})`,
    },
    extra: {
      'keys read': n(statusKeys + historyKeys),
      'warehouse calls': n(evaluation.length - historyCalls),
      'history calls': n(historyCalls),
    },
    note: 'warehouse-status and account-history BatchGetItem calls of the enrich request, counted by the SDK middleware',
  });
  results.add({
    group: launchGroup,
    name: `DynamoDB calls of the whole enrich request, ${n(N)} accounts`,
    value: enrichDynamo.length,
    unit: 'calls',
    extra: {
      'by command': [...byCommand]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${n(v)}`)
        .join(', '),
      RRU: round(dynamoUnits(enrichDynamo).rru, 0),
      WRU: round(dynamoUnits(enrichDynamo).wru, 0),
    },
    note: 'every DynamoDB round trip of the launch (first read, lock, outcome manifest, evaluation, commit), reported only',
  });
  if (committedLate) {
    results.note(
      launchGroup,
      `The enrich handler hit the 29 s limit (middy's timeout, as on Lambda behind API Gateway) and answered ${enrich.status} ${enrich.error?.code ?? ''}. ` +
        `The local server keeps the use case running, so the launch committed ${round(committedS, 1)} s after the call and the workflow below ran; on AWS the ` +
        'process would be frozen after the response and the launch would not complete (the lock expires after 60 s).',
    );
  }
  results.note(
    launchGroup,
    `Cause: the evaluation reads ${n(statusKeys + historyKeys)} keys in ${n(evaluation.length)} BatchGetItem calls of up to 100 (warehouse status: ${round(statusKeys / N, 2)} keys/account; ` +
      `account history: ${round(historyKeys / N, 2)} shard keys/account), ${n(evaluation.length / Math.max(1e-9, span(evaluation) / 1000))} calls/s; ` +
      `at the bare rates above those reads alone need ≥ ${round(evaluationFloorS, 1)} s on this DynamoDB Local ` +
      `(${round(cpu.javaCores, 2)} cores busy during the call, this process ${round(cpu.nodeCores, 2)}).`,
  );
  results.note(launchGroup, `SDK calls of the enrich request: ${callSummary(enrich.scope.calls)}.`);
  results.note(launchGroup, `Outside the evaluation reads, in order: ${callSequence(others)}.`);
  results.note(
    launchGroup,
    `CPU during the call (${round(cpu.wallSeconds, 2)} s wall): this process ${round(cpu.nodeCpuSeconds, 2)} CPU-s (${round(cpu.nodeCores, 2)} cores), DynamoDB Local ${round(cpu.javaCpuSeconds, 2)} CPU-s (${round(cpu.javaCores, 2)} cores).${profileText(launchProfile)}`,
  );
  return {
    ...s,
    launchGroup,
    recordedBefore,
    enrichStarted,
    enrichAnswered,
    enrich,
    launchProfile,
    committedLate,
    evaluation,
    others,
    statusKeys,
    historyKeys,
    evaluationFloorS,
    commit,
    committedS,
    enrichDynamo,
    byCommand,
  };
}

/** The enrichment workflow until `enriched`, then the recording of the account history. */
async function workflowStep(s: Awaited<ReturnType<typeof launchStep>>) {
  const {
    N,
    apiKey,
    campaignId,
    committedLate,
    committedS,
    contactsRate,
    enrichAnswered,
    enrichStarted,
    evaluation,
    historyKeys,
    options,
    recordedBefore,
    results,
    stack,
    statusKeys,
  } = s;
  let { cpu } = s;
  // 3. Workflow until `enriched`.
  const workflowGroup = 'enrichment workflow';
  let polls = 0;
  let enrichedAt = 0;
  // Between two polls: this process's event-loop busy share and DynamoDB Local's cores (do they overlap or alternate?).
  const slices: BusySlice[] = [];
  const { profile: workflowProfile } = await maybeProfiled(options.profile, async () => {
    const before = cpuSnapshot(stack);
    let slice = { cpu: before, loop: performance.eventLoopUtilization() };
    const deadline = Date.now() + 20 * 60_000;
    for (;;) {
      const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId }), 'get');
      polls++;
      const now = { cpu: cpuSnapshot(stack), loop: performance.eventLoopUtilization() };
      const between = cpuBetween(slice.cpu, now.cpu);
      slices.push({
        seconds: between.wallSeconds,
        loop: performance.eventLoopUtilization(now.loop, slice.loop).utilization,
        javaCores: between.javaCores,
      });
      slice = now;
      if (got.status === 'enriched') {
        enrichedAt = performance.now();
        cpu = cpuBetween(before, cpuSnapshot(stack));
        return;
      }
      if (got.status !== 'enriching' || Date.now() > deadline)
        throw new Error(`The campaign is ${got.status} (${Math.round((Date.now() - deadline) / 1000 + 1200)} s after enrich)`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });
  if (workflowProfile) {
    // Kept for a closer look (e.g. by function and line) than the summary in RESULTS.md.
    mkdirSync(path.join(options.tmpDir, 'profiles'), { recursive: true });
    writeFileSync(path.join(options.tmpDir, 'profiles', 'workflow.cpuprofile'), JSON.stringify(workflowProfile));
  }
  const totalS = (enrichedAt - enrichStarted) / 1000;
  const workflowScope = stack.workflowScopes.at(-1)!;
  const findCalls = workflowScope.calls.filter((c) => c.at < enrichedAt);
  const warehouseReads = findCalls.filter((c) => c.kind === 'warehouse');
  const resultPuts = findCalls.filter((c) => c.service === 's3' && c.kind === 'results');
  const eligibleReads = findCalls.filter((c) => c.service === 's3' && (c.kind === 'eligibleList' || c.kind === 'batchAccounts'));
  // The floor's reads again once the workflow is done (FinishRecording included, so nothing of it runs meanwhile): the
  // faster of the two measurements is the floor, so the ratio never gains from a floor measured while the shared
  // machine was busier than during the workflow.
  const scaleExecution = () => stack.executions.of(campaignId).at(-1);
  await until(
    'the workflow to reach WaitForResultsExpiry',
    () => scaleExecution()?.expiryWaitAt !== undefined || scaleExecution()?.ended === true,
    10 * 60_000,
  );
  const { statusRate, factsRate } = s;
  const again = await readRates(stack.tableName, s.sample, s.historyBuckets, s.organizationId);
  const bare = {
    status: Math.max(statusRate.keysPerS, again.statusRate.keysPerS),
    facts: Math.max(factsRate.keysPerS, again.factsRate.keysPerS),
    contacts: Math.max(contactsRate.keysPerS, again.contactsRate.keysPerS),
  };
  /** Seconds the evaluation's and FindContacts' reads need at the faster bare rates. */
  const evaluationBareS = statusKeys / bare.status + historyKeys / bare.facts;
  const findFloorS = keysOf(warehouseReads) / bare.contacts;
  results.note(
    workflowGroup,
    `Read floor measured again after the workflow (the faster of the two is the floor): warehouse statuses ${n(again.statusRate.keysPerS)} keys/s ` +
      `(before ${n(statusRate.keysPerS)}), history bucket keys ${n(again.factsRate.keysPerS)} (before ${n(factsRate.keysPerS)}), contacts items ` +
      `${n(again.contactsRate.keysPerS)} (before ${n(contactsRate.keysPerS)}).`,
  );
  results.add({
    group: workflowGroup,
    name: `${n(N)} accounts, enrich call → get answers enriched`,
    value: N / totalS,
    unit: 'accounts/s',
    budget: { op: '>=', limit: WORKFLOW_BUDGET_PER_S, text: `≥ ${n(WORKFLOW_BUDGET_PER_S)} accounts/s` },
    floor: {
      value: N / (evaluationBareS + findFloorS),
      unit: 'accounts/s',
      what: 'evaluation + FindContacts reads alone, bare, at the measured rates',
    },
    extra: {
      total: `${round(totalS, 1)} s`,
      'after the enrich response': `${round((enrichedAt - enrichAnswered) / 1000, 1)} s`,
      ...(committedLate ? { 'after the launch committed': `${round((enrichedAt - enrichStarted) / 1000 - committedS, 1)} s` } : {}),
      'node cores': round(cpu.nodeCores, 2),
      'DynamoDB Local cores': round(cpu.javaCores, 2),
      's3rver cores': round(cpu.s3Cores, 2),
    },
  });

  const ceiling = N / (evaluationBareS + findFloorS);
  results.add({
    group: workflowGroup,
    name: `${n(N)} accounts: accounts/s ÷ the rate of its own reads bare`,
    value: N / totalS / ceiling,
    unit: '×',
    budget: { op: '>=', limit: WORKFLOW_BARE_RATIO_BUDGET, text: `≥ ${WORKFLOW_BARE_RATIO_BUDGET}` },
    floor: { value: ceiling, unit: 'accounts/s', what: 'evaluation + FindContacts reads alone, bare, at the measured rates' },
    extra: { 'accounts/s': n(N / totalS) },
  });
  results.note(
    workflowGroup,
    `Cause: enrich → enriched is bounded by DynamoDB Local's BatchGetItem rate: at the bare rates measured above, the evaluation's ${n(statusKeys + historyKeys)} and FindContacts' ` +
      `${n(keysOf(warehouseReads))} keys alone take ` +
      `${round(evaluationBareS + findFloorS, 1)} s, about ${n(ceiling)} accounts/s (an estimate: the bare reads ran at one concurrency, on a machine shared with other work); the workflow reached ${n(N / totalS)}. FindContacts' BatchGetItem calls averaged ` +
      `${round(warehouseReads.reduce((s, c) => s + c.ms, 0) / Math.max(1, warehouseReads.length), 0)} ms each with up to ${MAP_CONCURRENCY} batches × ${BATCH_CONCURRENCY} in flight.`,
  );

  // Warehouse read units of FindContacts per enriched account (issue #29): the launch carried the account fields in the batch objects.
  const warehouseRru = dynamoUnits(warehouseReads).rru;
  results.add({
    group: workflowGroup,
    name: `warehouse read units per enriched account (FindContacts, ${n(N)} accounts)`,
    value: warehouseRru / N,
    unit: 'RRU',
    budget: { op: '<=', limit: WAREHOUSE_RRU_PER_ACCOUNT_BUDGET, text: `≤ ${WAREHOUSE_RRU_PER_ACCOUNT_BUDGET} RRU` },
    extra: {
      'keys read': n(keysOf(warehouseReads)),
      RRU: n(warehouseRru),
      'launch warehouse RRU per account': round(dynamoUnits(evaluation.filter((c) => c.kind === 'warehouse')).rru / N, 2),
    },
    note: 'ConsumedCapacity of the warehouse BatchGetItem calls of the workflow until enriched: the contacts items only (the account items were read once, at launch)',
  });

  // FinishRecording (the account history: one rewrite per shard the eligible accounts fall in) runs after the status flips:
  // completion is done when the execution enters WaitForResultsExpiry.
  const recordCalls = workflowScope.calls.filter((c) => c.kind.startsWith('accountHistory'));
  const shardWrites = recordCalls.filter((c) => c.kind === 'accountHistory:write');
  const recordUnits = dynamoUnits(recordCalls);
  results.add({
    group: workflowGroup,
    name: `FinishRecording after enriched: the account history (${n(shardWrites.length)} shard PutItem for ${n(N)} accounts)`,
    value: span(recordCalls) / 1000,
    unit: 's',
    extra: {
      'WRU per account': round(recordUnits.wru / N, 3),
      'RRU per account': round(recordUnits.rru / N, 3),
      calls: n(recordCalls.length),
      'per-account records': n(stack.recordedAccounts() - recordedBefore),
    },
    note: 'reported only; issue #29: below one write per account (per-account items cost 1 WRU each)',
  });
  results.note(
    workflowGroup,
    `Phases (from the workflow's recorded SDK calls): FindContacts ${round(span([...warehouseReads, ...resultPuts, ...eligibleReads]) / 1000, 1)} s ` +
      `(${n(warehouseReads.length)} warehouse BatchGetItem, ${n(resultPuts.length)} result parts written to S3, ${n(eligibleReads.length)} reads of account-ID objects (each batch its own) ` +
      `for ${round(busyMs(eligibleReads) / 1000, 1)} s in flight); CompleteEnrichment ${round(span(findCalls.filter((c) => c.command === 'TransactWriteItems' || c.kind === 'campaign')) / 1000, 2)} s; ` +
      `FinishRecording (after enriched) ${round(span(recordCalls) / 1000, 2)} s. ${n(polls)} polls of get every 250 ms.`,
  );
  results.note(workflowGroup, `SDK calls of the workflow until enriched: ${callSummary(findCalls)}.`);
  // Where the write units of the workflow go, per call (the sequence's transactions carry the campaign's guard, the head,
  // the range and the event: a transaction bills 2 units per KB of each item, the guard's item included).
  const writesByKind = new Map<string, { calls: number; wru: number; items: number }>();
  for (const call of workflowScope.calls.filter((c) => (c.wru ?? 0) > 0)) {
    const key = `${call.command} ${call.kind}`;
    const entry = writesByKind.get(key) ?? { calls: 0, wru: 0, items: 0 };
    entry.calls++;
    entry.wru += call.wru ?? 0;
    entry.items += call.items ?? 0;
    writesByKind.set(key, entry);
  }
  results.note(
    workflowGroup,
    `Write units of the workflow until WaitForResultsExpiry, per call: ${[...writesByKind]
      .sort((a, b) => b[1].wru - a[1].wru)
      .map(
        ([key, w]) =>
          `${key} ×${n(w.calls)} ${round(w.wru / w.calls, 1)} WRU each (${round(w.items / w.calls, 1)} items), ${round((w.wru / N) * 1000, 1)} per 1,000 accounts`,
      )
      .join('; ')}.`,
  );
  results.note(
    workflowGroup,
    `CPU from the enrich response to enriched (${round(cpu.wallSeconds, 1)} s wall): this process (API server, workflow runner and task handlers) ${round(cpu.nodeCpuSeconds, 1)} CPU-s = ${round(cpu.nodeCores, 2)} cores; DynamoDB Local ${round(cpu.javaCpuSeconds, 1)} CPU-s = ${round(cpu.javaCores, 2)} cores; s3rver (its own process) ${round(cpu.s3CpuSeconds, 1)} CPU-s = ${round(cpu.s3Cores, 2)} cores.${profileText(workflowProfile, 12)}`,
  );
  const shared = busyAlternation(slices);
  results.note(
    workflowGroup,
    `Event loop of this process against DynamoDB Local over the same window, in ${n(slices.length)} slices between polls: the loop busy ` +
      `${Math.round(shared.loopBusy * 100)} % of the time; ${Math.round(shared.loopIdle.share * 100)} % of the window in slices where it was ` +
      `under half busy (DynamoDB Local ${round(shared.loopIdle.javaCores, 2)} cores meanwhile), ${Math.round(shared.loopSaturated.share * 100)} % ` +
      `where it was over 90 % busy (DynamoDB Local ${round(shared.loopSaturated.javaCores, 2)} cores meanwhile). Much of the window in the first class with DynamoDB Local busy, and in the second with it ` +
      'idle, means the two alternate: the Map batches running in step, all reading the warehouse at once, then all encoding and ' +
      `writing their parts at once (bench/README.md "Where the workflow's wall time goes").`,
  );
  return {
    ...s,
    workflowGroup,
    polls,
    enrichedAt,
    workflowProfile,
    totalS,
    workflowScope,
    findCalls,
    warehouseReads,
    resultPuts,
    eligibleReads,
    findFloorS,
    ceiling,
    warehouseRru,
    scaleExecution,
    recordCalls,
    shardWrites,
    recordUnits,
  };
}

/**
 * The counted DynamoDB units and S3 requests of the launch and of the workflow, priced per what they touched
 * (`CallRecord.kind`: warehouse, copyIndex, sequence, outcomes …), largest first: which parts of the request-driven
 * cost dominate. Storage, Lambda and Step Functions are the cost table's own lines.
 */
function costByComponent(launch: readonly CallRecord[], workflow: readonly CallRecord[], scale: number): string {
  const byKey = new Map<string, number>();
  const add = (phase: string, calls: readonly CallRecord[]) => {
    for (const c of calls) {
      const key = `${phase} ${c.service === 's3' ? 'S3 ' : ''}${c.kind}`;
      const { put, get } = s3Classes([c]);
      const cost =
        put * PRICES.s3PutClass + get * PRICES.s3GetClass + (c.rru ?? 0) * PRICES.dynamodbRru + (c.wru ?? 0) * PRICES.dynamodbWru;
      byKey.set(key, (byKey.get(key) ?? 0) + cost * scale);
    }
  };
  add('launch', launch);
  add('workflow', workflow);
  return [...byKey]
    .filter(([, d]) => d > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([key, d]) => `${key} ${dollars(d)}`)
    .join('; ');
}

/** S3 bytes the workflow read, and the cost of launch + workflow + completion (counted). */
async function costStep(s: Awaited<ReturnType<typeof workflowStep>>) {
  const { N, apiKey, campaignId, cpu, enrich, expiry, ids, organizationId, results, scaleExecution, stack, workflowGroup, workflowScope } =
    s;
  // S3 bytes the workflow read, and the cost of launch + workflow + completion (counted).
  const execution = scaleExecution()!;
  const completionCalls = workflowScope.calls.filter((c) => c.at < (execution.expiryWaitAt ?? Infinity));
  const s3Reads = completionCalls.filter((c) => c.service === 's3' && c.command === 'GetObject');
  const s3ReadBytes = s3Reads.reduce((sum, c) => sum + (c.bytes ?? 0), 0);
  const listBytes = Buffer.byteLength(ids.join('\n'));
  // Reported, not budgeted: the batch objects carry the launch's account fields on purpose, the reason is stated
  // once, in bench/README.md "Budgets restated"; budgeted instead are the warehouse read units and the cost.
  results.add({
    group: workflowGroup,
    name: `S3 bytes read by the workflow, ${n(N)}-account campaign`,
    value: s3ReadBytes / MB,
    unit: 'MB',
    extra: {
      GetObject: n(s3Reads.length),
      'per GetObject': `${round(s3ReadBytes / Math.max(1, s3Reads.length) / 1000, 1)} KB`,
      'list bytes': `${n(listBytes)} (IDs joined by newlines); × the list ${round(s3ReadBytes / Math.max(1, listBytes), 1)}`,
    },
    note:
      'reported only, its reason in bench/README.md "Budgets restated" (the batch objects carry the account fields); ' +
      'GetObject response bytes (Content-Length) counted by the middleware on the S3 client of this process, which runs the workflow tasks, from StartExecution to WaitForResultsExpiry',
  });

  const costGroup = 'cost';
  const storedAtCompletion = await storedUnder(stack.bucketName, organizationId, campaignId);
  const leftFraction = expiry.completed.bytes > 0 ? expiry.left.bytes / expiry.completed.bytes : 0;
  const accessMonths = config.resultsAccessPeriodSeconds / MONTH_S;
  const enrichFunction = 'CampaignsEnrich';
  const launchCalls = [...enrich.scope.calls, ...completionCalls, ...expiry.tailCalls];
  const launchS3 = s3Classes(launchCalls);
  // The account history this campaign left: its organization's buckets. Stated on its own (per million
  // distinct accounts per month), never folded into the request-driven cost (bench/README.md).
  const historyBytes = await historyStoredBytes(stack.tableName, organizationId);
  const historyAccounts = (await accountHistory().state(organizationId)).entries;
  const launchUsage: Usage = {
    dynamodb: { ...dynamoUnits(launchCalls) },
    s3: {
      putClass: launchS3.put,
      getClass: launchS3.get,
      // Stored during the access period; what ExpireResults leaves (the small campaign's fraction) for a year after it.
      storedByteMonths: storedAtCompletion.bytes * accessMonths + storedAtCompletion.bytes * leftFraction * 12,
      transferOutBytes: 0,
    },
    stepFunctions: { transitions: (execution.transitionsBeforeExpiryWait ?? execution.transitions) + expiry.tailTransitions },
    lambda: [
      {
        functionId: enrichFunction,
        memoryMb: memoryOf(enrichFunction),
        invocations: 1,
        cpuSeconds: enrich.scope.cpuSeconds ?? cpu.nodeCpuSeconds,
      },
      ...taskLambdaUse(execution),
      ...taskLambdaUse(expiry.execution, (state) => state === WORKFLOW_TASKS.expire.state),
    ],
    apiGateway: { requests: 1 },
  };
  const launchLines = costLines(launchUsage);
  // Per enriched account (docs/launch.md: accounts with results are charged), not per requested one.
  const finalCampaign = expectOk(
    await post<{ results: { totalAccounts: number } | null }>(stack, PATHS.get, apiKey, { campaignId }),
    'get',
  );
  const enrichedAccounts = finalCampaign.results?.totalAccounts || N;
  const per1000 = scaleLines(launchLines, 1000 / enrichedAccounts);
  const per1000Total = totalOf(per1000);
  const largest = [...per1000].sort((a, b) => b.dollars - a.dollars).slice(0, 3);
  results.add({
    group: costGroup,
    name: 'per 1,000 accounts enriched, request-driven (launch + workflow + completion + results for the access period; history storage apart)',
    value: per1000Total,
    unit: '$',
    budget: { op: '<=', limit: COST_BUDGET_PER_1000, text: `≤ $${COST_BUDGET_PER_1000}` },
    extra: Object.fromEntries(
      largest.map((line) => [line.item, `${dollars(line.dollars)} (${Math.round((line.dollars / per1000Total) * 100)} %)`]),
    ),
    note: `${PRICES.asOf}; the ${n(N)}-account campaign's counted usage × 1,000 / ${n(enrichedAccounts)} enriched`,
  });
  const bytesPerAccount = historyAccounts > 0 ? historyBytes / historyAccounts : 0;
  results.add({
    group: costGroup,
    name: 'account history storage: bytes per distinct account (DynamoDB item sizes + 100 B per item)',
    value: bytesPerAccount,
    unit: 'bytes',
    budget: { op: '<=', limit: HISTORY_BYTES_PER_ACCOUNT_BUDGET, text: `≤ ${HISTORY_BYTES_PER_ACCOUNT_BUDGET} bytes` },
    note: `${n(historyBytes)} bytes for ${n(historyAccounts)} accounts (lib/history/store.ts buckets)`,
  });
  results.add({
    group: costGroup,
    name: 'account history storage per million distinct accounts per month',
    value: (bytesPerAccount * 1e6 * PRICES.dynamodbGbMonth) / 1e9,
    unit: '$',
    budget: { op: '<=', limit: HISTORY_STORAGE_BUDGET_PER_MILLION_MONTH, text: `≤ $${HISTORY_STORAGE_BUDGET_PER_MILLION_MONTH}` },
    note: `${PRICES.asOf}; DynamoDB Standard storage $${PRICES.dynamodbGbMonth} per GB-month`,
  });
  results.note(costGroup, `Per 1,000 accounts enriched, from the ${n(N)}-account campaign (${PRICES.asOf}; prices in bench/lib/cost.ts):`);
  for (const row of costTable(per1000)) results.note(costGroup, row);
  results.note(
    costGroup,
    `By component, per 1,000 accounts enriched: ${costByComponent(enrich.scope.calls, [...completionCalls, ...expiry.tailCalls], 1000 / enrichedAccounts)}.`,
  );
  results.note(
    costGroup,
    `Counted: DynamoDB RRU/WRU = ConsumedCapacity of every request of the enrich call and of the workflow until WaitForResultsExpiry (the bench asks for ReturnConsumedCapacity=TOTAL; ` +
      `DynamoDB Local computes the units from item sizes), plus the calls of ExpireResults measured on the expiry campaign; S3 requests by class from the SDK middleware of the same calls; ` +
      `Step Functions transitions = states entered + retries in the local runner's event log (${n(execution.transitionsBeforeExpiryWait ?? execution.transitions)} until WaitForResultsExpiry + ` +
      `${expiry.tailTransitions} after it, measured on the expiry campaign); Lambda = the enrich call and every task invocation, GB-s = measured CPU-s ÷ vCPU share of the function's memory ` +
      `(infra/memory.ts) × memory, CPU-bound (waits on DynamoDB/S3 are not billed here; locally they are DynamoDB Local's); storage = ${n(storedAtCompletion.bytes)} bytes under the campaign's prefix at completion ` +
      `× the ${round(accessMonths, 2)}-month access period, plus the share the expiry campaign kept after ExpireResults (${round(leftFraction * 100, 1)} %) × 12 months (it is never deleted). ` +
      "The account history's storage is stated apart (per million distinct accounts per month), never folded in. Not included: create (the list upload), get polls, other DynamoDB storage, CloudWatch logs.",
  );
  return {
    ...s,
    execution,
    completionCalls,
    s3Reads,
    s3ReadBytes,
    listBytes,
    costGroup,
    storedAtCompletion,
    leftFraction,
    accessMonths,
    enrichFunction,
    launchCalls,
    launchS3,
    historyBytes,
    historyAccounts,
    launchUsage,
    launchLines,
    finalCampaign,
    enrichedAccounts,
    per1000,
    per1000Total,
    largest,
    bytesPerAccount,
  };
}

/** The per-account outcomes of the completed campaign (the export must carry the same counts). */
async function outcomesStep(s: Awaited<ReturnType<typeof costStep>>) {
  const { N, apiKey, campaignId, stack } = s;
  // The per-account outcomes (docs/launch.md#per-account-outcomes) of the completed campaign: the export below must carry the same counts.
  const outcomesReply = await post<{
    summary: Record<'invalid' | 'recently_enriched' | 'crm_excluded' | 'pending' | 'found' | 'not_found', number>;
  }>(stack, PATHS.accounts, apiKey, { campaignId, limit: 1 });
  const outcomeSummary = expectOk(outcomesReply, 'accounts').summary;
  if (outcomeSummary.pending !== 0 || outcomeSummary.found + outcomeSummary.not_found !== N) {
    throw new Error(
      `The per-account outcomes of the completed campaign are ${JSON.stringify(outcomeSummary)}; expected ${N} found or not_found, none pending`,
    );
  }
  return { ...s, outcomesReply, outcomeSummary };
}

/** The export, in the bundled Lambda's own process: time, memory, CPU, S3 calls. */
async function exportStep(s: Awaited<ReturnType<typeof outcomesStep>>) {
  const { C, N, apiKey, campaignId, expiry, options, outcomeSummary, results, stack } = s;
  let { cpu, snap, t } = s;
  // 4. Export, in the bundled Lambda's own process.
  const exportGroup = 'export';
  const bundle = path.join(options.tmpDir, 'bundles', 'CampaignsExport', 'index.mjs');
  // Built every run: a bundle left in tmp/ by an earlier run may be of older code.
  await buildBundle('CampaignsExport', { entry: 'functions/campaigns-export.ts' }, path.join(options.tmpDir, 'bundles'));
  const profileDir = path.join(options.tmpDir, 'profiles');
  rmSync(path.join(profileDir, 'export.cpuprofile'), { force: true });
  mkdirSync(profileDir, { recursive: true });
  snap = cpuSnapshot(stack);
  const s3Before = stack.s3Requests.length;
  // As deployed (no profiler, no source maps: the CPU-seconds and RSS budgets are the function's); `--profile` adds the CPU profile.
  const child = await runExportLambda({
    bundle,
    apiKey,
    campaignId,
    ...(options.profile ? { profile: { dir: profileDir, name: 'export.cpuprofile' } } : {}),
  });
  cpu = cpuBetween(snap, cpuSnapshot(stack));
  // s3rver runs in a process of its own and reports what it served over IPC: wait for the last of the call's requests.
  await stack.s3RequestsReported();
  const exportS3 = stack.s3Requests.slice(s3Before);
  const { outcome } = child;
  const envelope = JSON.parse(outcome.body) as {
    data: { url: string; rows: { accounts: number; contacts: number } } | null;
    error: { code: string } | null;
  };
  // An export that outlives the 29 s API limit answers 500 (middy's timeout): report it as measured, with the handler's log.
  let delivered: { rows: { accounts: number; contacts: number }; bytes: number; downloadS: number } | undefined;
  if (outcome.statusCode === 200 && envelope.data) {
    const { url, rows } = envelope.data;
    t = performance.now();
    const download = await fetch(url);
    if (!download.ok || !download.body) throw new Error(`Downloading the export answered ${download.status}`);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    const downloadS = (performance.now() - t) / 1000;
    if (rows.accounts !== N || rows.contacts !== N * C || lines !== N * C + 1) {
      throw new Error(
        `The export has ${rows.accounts} accounts, ${rows.contacts} contact rows and ${lines} lines; expected ${N}, ${N * C} and ${N * C + 1}`,
      );
    }
    // Every account the outcomes call found or not_found is in the file, and accounts with a contact row are the `found` ones (every account here has C contacts).
    if (rows.accounts !== outcomeSummary.found + outcomeSummary.not_found || outcomeSummary.found !== N) {
      throw new Error(`The export's ${rows.accounts} accounts do not match the per-account outcomes ${JSON.stringify(outcomeSummary)}`);
    }
    delivered = { rows, bytes, downloadS };
  } else {
    const logged = /"message":"([^"]*)"[^\n]*?"error":\{"name":"([^"]*)"[^\n]*?"message":"([^"]*)"/.exec(child.stderr + child.stdout);
    results.note(
      exportGroup,
      `The export handler answered ${outcome.statusCode} ${envelope.error?.code ?? ''} after ${round(outcome.handlerMs / 1000, 1)} s` +
        (logged ? ` (its log: "${logged[1]}", ${logged[2]}: ${logged[3]})` : '') +
        ': on Lambda behind API Gateway the call fails at 29 s the same way. No file to download; the figures below are until that answer.',
    );
  }
  const toMB = (mib: number) => (mib * 2 ** 20) / MB;
  results.add({
    group: exportGroup,
    name: `${n(N)} accounts × ${C} contacts → presigned URL`,
    value: outcome.handlerMs / 1000,
    unit: 's',
    note: 'local wall time, reported only (the budgets are the CPU-seconds and the time on Lambda below)',
    extra: delivered
      ? {
          rows: `${n(delivered.rows.contacts)} contact rows, ${n(delivered.rows.accounts)} accounts`,
          file: `${round(delivered.bytes / MB, 1)} MB`,
          download: `${round(delivered.downloadS, 1)} s`,
          'bundle import': `${round(outcome.importMs, 0)} ms`,
        }
      : { answer: `${outcome.statusCode} ${envelope.error?.code ?? ''}`, 'bundle import': `${round(outcome.importMs, 0)} ms` },
  });
  results.add({
    group: exportGroup,
    name: `${n(N)} accounts × ${C} contacts: peak RSS of the export process`,
    value: toMB(outcome.peakRssMiB),
    unit: 'MB',
    budget: { op: '<=', limit: EXPORT_RSS_BUDGET_MB, text: `≤ ${EXPORT_RSS_BUDGET_MB} MB` },
    floor: { value: toMB(outcome.rssAfterImportMiB), unit: 'MB', what: 'RSS after the bundle import, before the call' },
    extra: {
      'largest 50 ms sample': `${round(toMB(outcome.peakSampledMiB), 0)} MB`,
      'at that sample': `heap ${round(toMB(outcome.atPeakMiB.heapUsed), 0)} of ${round(toMB(outcome.atPeakMiB.heapTotal), 0)} MB, external ${round(toMB(outcome.atPeakMiB.external), 0)} MB (array buffers ${round(toMB(outcome.atPeakMiB.arrayBuffers), 0)} MB)`,
    },
  });
  const exportCpuS = outcome.cpuMs / 1000;
  results.add({
    group: exportGroup,
    name: `${n(N)} accounts × ${C} contacts (${n(N * C)} rows): CPU-seconds of the export process's call`,
    value: exportCpuS,
    unit: 'CPU-s',
    budget: { op: '<=', limit: EXPORT_CPU_BUDGET_S, text: `≤ ${EXPORT_CPU_BUDGET_S} (1M rows)` },
    extra: { 'per 1M rows': `${round((exportCpuS / (N * C)) * 1e6, 2)} CPU-s` },
    note: 'process.cpuUsage() around the handler call in bench/children/export-lambda.mjs (user + system, all threads)',
  });
  const exportFunction = 'CampaignsExport';
  results.add({
    group: 'function time on Lambda',
    name: `${exportFunction}, ${n(N * C)} rows, at ${memoryOf(exportFunction)} MB`,
    value: lambdaSeconds(exportCpuS, memoryOf(exportFunction)),
    unit: 's',
    budget: { op: '<=', limit: API_LAMBDA_BUDGET_S, text: `≤ ${API_LAMBDA_BUDGET_S} s (half of API Gateway's 29 s)` },
    extra: { 'CPU-s': round(exportCpuS, 2), 'vCPU share': round(vcpuShare(memoryOf(exportFunction)), 2) },
  });
  {
    const rows = N * C;
    const put = exportS3.filter((r) => r.billing === 'put').length;
    const get = exportS3.filter((r) => r.billing === 'get').length;
    const fileBytes = delivered?.bytes ?? exportS3.filter((r) => r.method === 'PUT').reduce((sum, r) => sum + r.bytesIn, 0);
    const exportUsage: Usage = {
      dynamodb: expiry.exportUnits ?? { rru: 0, wru: 0 },
      // The file stays 1 day (the exports/ lifecycle rule) and is downloaded once (1 GET, its bytes out to the internet).
      s3: { putClass: put, getClass: get + 1, storedByteMonths: fileBytes * (DAY_S / MONTH_S), transferOutBytes: fileBytes },
      stepFunctions: { transitions: 0 },
      lambda: [{ functionId: exportFunction, memoryMb: memoryOf(exportFunction), invocations: 1, cpuSeconds: exportCpuS }],
      apiGateway: { requests: 1 },
    };
    const per100k = scaleLines(costLines(exportUsage), 100_000 / rows);
    const total = totalOf(per100k);
    const withoutTransfer = total - (per100k.find((line) => line.item.startsWith('data transfer'))?.dollars ?? 0);
    results.add({
      group: 'cost',
      name: 'per 100k-row export (the export call, its S3 traffic, the file for 1 day, one download)',
      value: total,
      unit: '$',
      extra: { 'without the download transfer': dollars(withoutTransfer) },
      note: `${PRICES.asOf}; the ${n(rows)}-row export's counted usage × 100,000 / ${n(rows)}`,
    });
    results.note('cost', `Per 100k-row export, from the ${n(rows)}-row export (${PRICES.asOf}):`);
    for (const row of costTable(per100k)) results.note('cost', row);
    results.note(
      'cost',
      `Counted: S3 requests as s3rver served them during the export process's call (${put} PUT/POST/LIST class, ${get} GET/HEAD class; the export runs in a child process, so they are counted at the server, ` +
        `by Node's http diagnostics channel in s3rver's process, which reports each to this one), plus the client's one download; DynamoDB units of an in-process export of the expiry campaign (the export reads the same items whatever the size); ` +
        "Lambda GB-s = the export process's CPU-s ÷ vCPU share × memory.",
    );
  }
  const profileFile = path.join(profileDir, 'export.cpuprofile');
  const exportSummary = existsSync(profileFile)
    ? summarizeProfile(JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile, { [`file://${bundle}`]: `${bundle}.map` })
    : undefined;
  const exportProfile = exportSummary
    ? `${formatTop(exportSummary, 12)}. Heaviest source lines: ${formatTopFrames(exportSummary, 10)}`
    : 'not profiled (run with --profile)';
  results.note(
    exportGroup,
    `The export Lambda's process used ${round(outcome.cpuMs / 1000, 1)} CPU-s in its ${round(outcome.handlerMs / 1000, 1)} s call; meanwhile s3rver's process (receiving the multipart upload) ` +
      `used ${round(cpu.s3CpuSeconds, 1)} CPU-s, this process ${round(cpu.nodeCpuSeconds, 1)} CPU-s and DynamoDB Local ${round(cpu.javaCpuSeconds, 1)} CPU-s. Profile of the export process (self time, mapped to sources through the bundle's source map; includes the import): ${exportProfile}.`,
  );
  results.note(
    exportGroup,
    `Cause (time): the export process is CPU-bound: ${round(outcome.cpuMs / 1000, 1)} CPU-s in a ${round(outcome.handlerMs / 1000, 1)} s call` +
      (exportSummary ? `; by self time: ${formatTop(exportSummary, 4).split(' — ')[0]}` : '') +
      `; for the rest of the wall time it waited, for a core or for s3rver to take the upload (s3rver, in its own process, used ${round(cpu.s3CpuSeconds, 1)} CPU-s meanwhile, on 2 cores shared with other work)` +
      `. Cause (memory): at the largest sample the V8 heap held ${round(toMB(outcome.atPeakMiB.heapUsed), 0)} MB used of ${round(toMB(outcome.atPeakMiB.heapTotal), 0)} MB ` +
      `and buffers outside the heap ${round(toMB(outcome.atPeakMiB.external), 0)} MB, over ${round(toMB(outcome.rssAfterImportMiB), 0)} MB after the import (npm run bench:export prints RSS once a second: flat after the first seconds).`,
  );
  results.note(
    exportGroup,
    `The export process: \`node bench/children/export-lambda.mjs\` as deployed (NODE_OPTIONS of infra/memory.ts, no profiler unless --profile, no source maps), importing ${path.relative(process.cwd(), bundle)} and invoking its handler once; RSS after import ${round(toMB(outcome.rssAfterImportMiB), 0)} MB, peak (VmHWM) ${round(toMB(outcome.peakRssMiB), 0)} MB.`,
  );
  return {
    ...s,
    exportGroup,
    bundle,
    profileDir,
    s3Before,
    child,
    exportS3,
    outcome,
    envelope,
    delivered,
    toMB,
    exportCpuS,
    exportFunction,
    profileFile,
    exportSummary,
    exportProfile,
  };
}

/** CPU-seconds per invocation of each function kind at this scale, on Lambda at the configured memory. */
async function functionTimeStep(s: Awaited<ReturnType<typeof exportStep>>) {
  const { C, N, exportCpuS, exportFunction, ledgerFrom, results, stack } = s;
  // CPU-seconds per invocation of each function kind at this scale, and what they mean on Lambda at the configured memory (docs/deploy.md "Memory").
  const fnGroup = 'function time on Lambda';
  const invocations = stack.ledger.invocations.slice(ledgerFrom);
  const kinds = [...new Set(invocations.map((i) => i.kind))];
  results.note(
    fnGroup,
    `CPU-seconds per invocation during this module (${n(N)}-account campaign; processor-sharing attribution of this process's CPU to the invocations in flight, bench/lib/meter.ts — an upper bound, as the local HTTP server and Step Functions runner share the process; s3rver runs in its own), and the seconds on Lambda at the configured memory = CPU-s ÷ (memory ÷ ${1769} MB):`,
  );
  results.note(fnGroup, '| function | memory MB | invocations | CPU-s mean | CPU-s max | Lambda s max at memory | GB-s total |');
  results.note(fnGroup, '|---|---:|---:|---:|---:|---:|---:|');
  const rowsOf = [
    ...kinds.map((kind) => ({ kind, cpus: invocations.filter((i) => i.kind === kind).map((i) => i.cpuSeconds) })),
    { kind: `${exportFunction} (its own process, ${n(N * C)} rows)`, cpus: [exportCpuS] },
  ];
  for (const { kind, cpus } of rowsOf) {
    const memory = memoryOf(kind.split(' ')[0]!);
    const max = Math.max(...cpus);
    const total = cpus.reduce((a, b) => a + b, 0);
    results.note(
      fnGroup,
      `| ${kind} | ${memory} | ${n(cpus.length)} | ${round(total / cpus.length, 4)} | ${round(max, 3)} | ${round(lambdaSeconds(max, memory), 2)} | ${round(lambdaSeconds(total, memory) * (memory / 1024), 2)} |`,
    );
  }
  for (const kind of ['CampaignsEnrich', 'CampaignsCreate']) {
    const cpus = invocations.filter((i) => i.kind === kind).map((i) => i.cpuSeconds);
    if (cpus.length === 0) continue;
    const max = Math.max(...cpus);
    results.add({
      group: fnGroup,
      name: `${kind}, ${n(N)}-account campaign, at ${memoryOf(kind)} MB`,
      value: lambdaSeconds(max, memoryOf(kind)),
      unit: 's',
      budget: { op: '<=', limit: API_LAMBDA_BUDGET_S, text: `≤ ${API_LAMBDA_BUDGET_S} s (half of API Gateway's 29 s)` },
      extra: { 'CPU-s': round(max, 2), 'vCPU share': round(vcpuShare(memoryOf(kind)), 2) },
    });
  }
  return { ...s, fnGroup, invocations, kinds, rowsOf };
}

/**
 * The scale figures (bench/README.md, module `scale`): one campaign of
 * `options.accounts` accounts × `options.contactsPerAccount` contacts through
 * create, launch, workflow, completion, export; each step records its
 * figures in `results`, in this order.
 */
export async function runScale(
  results: Results,
  stack: BenchStack,
  options: { accounts: number; contactsPerAccount: number; tmpDir: string; profile: boolean },
): Promise<void> {
  const run: ScaleRun = { results, stack, options };
  const setup = await setUp(run);
  const expired = await expiryStep(setup);
  const floors = await readFloors(expired);
  const created = await createCampaign(floors);
  const launched = await launchStep(created);
  const enriched = await workflowStep(launched);
  const costed = await costStep(enriched);
  const outcomes = await outcomesStep(costed);
  const exported = await exportStep(outcomes);
  await functionTimeStep(exported);
}
