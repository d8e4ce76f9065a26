/**
 * Figures of keys the customer controls (issue #40; docs/authentication.md "Scopes" and "Usage", docs/audit.md):
 *
 * - round trips of get and describe with a scoped key, usage counting and `lastUsedAt` (budget: unchanged, 1): the
 *   handlers in-process with a limiter whose clock moves a minute and a window per call, so every measured call
 *   carries a lease write, the usage months' writes and the key's `lastUsedAt` write (the heaviest case), in waves
 *   of calls in flight together;
 * - DynamoDB write units per request of the limiter plus usage counting (≤ 1 WCU): one limiter as one container
 *   holds it, its clock injected, half the organization's limit spread over each window, every request naming one
 *   of 3 campaigns; the write units DynamoDB reported (ConsumedCapacity) for every write it made;
 * - warm p50 of get and describe with the scope stage ÷ the same pipeline without it (≤ 1.05, same run): both
 *   handlers built here from the same use case and dependencies (`withoutScopeStage` exists for this figure only),
 *   invoked in-process as the runtime does, interleaved in a random order each round, the key holding every scope
 *   listed explicitly (the check scans its list);
 * - a usage query over 92 days by key: read units per row at 3 and 30 keys (reads ∝ rows: ≤ 1.2 ×) and month
 *   items read per row (≤ 4), the usage months written as the limiter writes them;
 * - the write units an audited change costs: an audited `campaigns/update` (its transaction with the entry) against
 *   the entry alone and the change alone; and a refusal's entry (401/429: 4 WU, docs/audit.md).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Results } from '../lib/results';
import { waves, type BenchStack, type CallRecord } from '../lib/stack';
import { PATHS, postCounted } from '../lib/api';
import { smallFixture, benchOrganization } from '../lib/fixtures';
import { median, round, shuffled } from '../lib/stats';
import { asStandardLambdaEnvironment } from '../../infra/local/lambda-context';
import { preparedInvocations } from '../lib/in-process';
import { createApiHandler } from '../../lib/http/pipeline';
import { ApiKeyCache } from '../../lib/http/auth';
import { RequestLimiter } from '../../lib/http/rate-limit';
import { SCOPES } from '../../lib/http/scopes';
import { getCampaignOperation } from '../../lib/campaigns/schema';
import { describeOrganizationOperation } from '../../lib/organizations/schema';
import { orgUsageOperation } from '../../lib/organizations/schema';
import { newOrganizationId } from '../../lib/ids';
import { utcDay } from '../../lib/http/request-counts';
import { auditEntryPut } from '../../lib/audit/log';
import { config } from '../../lib/config';
import {
  apiKeys,
  campaigns,
  creditsRemaining,
  describeOrganization,
  getCampaign,
  keyUses,
  newRequestLimiter,
  organizations,
  requestDays,
  requestLimiter,
  usageMonths,
} from '../../lib/root';

/** The get and describe handlers as lib/root.ts wires them, on the given limiter, with or without the scope stage. */
function handlersOf(limiter: RequestLimiter, cache: ApiKeyCache, withoutScopeStage: boolean) {
  const dependencies = { findApiKey: (keyHash: string) => apiKeys().findByHash(keyHash), apiKeyCache: cache, requestLimiter: limiter };
  const stage = withoutScopeStage ? { withoutScopeStage: true as const } : {};
  return {
    get: createApiHandler(
      getCampaignOperation,
      (input, { organizationId, keyCheck }) => getCampaign({ campaigns: campaigns() }, organizationId, input.campaignId, keyCheck),
      dependencies,
      { keyCheck: 'in-read', headers: (campaign) => creditsRemaining(campaign.credits.remaining), ...stage },
    ),
    describe: createApiHandler(
      describeOrganizationOperation,
      (_input, { organizationId, keyCheck }) => describeOrganization(organizations(), organizationId, keyCheck),
      dependencies,
      { keyCheck: 'in-read', headers: (data) => creditsRemaining(data.credits.smb), ...stage },
    ),
  };
}

const writeUnits = (calls: readonly CallRecord[]) => calls.reduce((total, call) => total + (call.wru ?? 0), 0);
const readUnits = (calls: readonly CallRecord[]) => calls.reduce((total, call) => total + (call.rru ?? 0), 0);
const dynamodbCalls = (calls: readonly CallRecord[]) => calls.filter((call) => call.service === 'dynamodb');

export async function runKeys(results: Results, stack: BenchStack, options: { rounds: number; windows: number }): Promise<void> {
  const group = 'keys, usage and audit';
  const fixture = await smallFixture(stack, 'keys');
  // Every scope, listed (not the all-scope key of before scopes): the check scans the list, the required scope last.
  const scopedKey = await apiKeys().create(fixture.organizationId, { scopes: [...SCOPES].reverse() });
  const bodies = { get: { campaignId: fixture.campaignId }, describe: {} };
  const paths = { get: PATHS.get, describe: PATHS.describe };
  const functionIds = { get: 'CampaignsGet', describe: 'OrgDescribe' };

  // ------------------------------------------- round trips, heaviest case
  await asStandardLambdaEnvironment(async () => {
    let now = Date.now();
    const limiter = newRequestLimiter({ now: () => now });
    const handlers = handlersOf(limiter, new ApiKeyCache(), false);
    const perOperation: Record<string, string> = {};
    let worst = 0;
    for (const name of ['get', 'describe'] as const) {
      const prepare = preparedInvocations(handlers[name], paths[name], scopedKey, bodies[name], functionIds[name]);
      await prepare()(); // the key's first request in this container reads its key item first (cold: not measured)
      const counted: number[] = [];
      let described = '';
      for (let i = 0; i < 5; i++) {
        now += 61_000; // a new minute and a new window: a lease write, the usage months' writes and lastUsedAt, all in this call
        const invocation = prepare();
        const { scope } = await stack.inScope(`keys ${name} ${i}`, invocation);
        const grouped = waves(dynamodbCalls(scope.calls));
        counted.push(grouped.length);
        described = grouped.map((wave) => wave.map((call) => `${call.command}`).join(' ∥ ')).join(' → ');
      }
      worst = Math.max(worst, ...counted);
      perOperation[name] = `${Math.max(...counted)} (${described})`;
    }
    results.add({
      group,
      name: 'round trips of get and describe with a scoped key, usage counting and lastUsedAt',
      value: worst,
      unit: 'sequential waves (most of 5 calls each)',
      budget: { op: '<=', limit: 1, text: 'unchanged: 1' },
      floor: { value: 1, unit: 'waves', what: 'the operation’s own read' },
      extra: perOperation,
      note: 'each measured call in a new minute and a new rate window (the limiter’s clock moved 61 s): it carries a lease write, the usage months’ writes and the key’s lastUsedAt write, beside its own read',
    });
  });

  // ------------------------------------------- write units per request
  {
    const organizationId = newOrganizationId();
    const policy = { limit: 200, windowSeconds: 10 };
    let now = Date.UTC(2031, 1, 1, 0, 0, 0);
    const limiter = new RequestLimiter({
      days: requestDays(),
      keyUses: keyUses(),
      usage: usageMonths(),
      policyOf: async () => policy,
      defaults: () => policy,
      now: () => now,
    });
    const perWindow = policy.limit / 2;
    let requests = 0;
    const { scope } = await stack.inScope('keys limiter and usage', async () => {
      for (let w = 0; w < options.windows; w++)
        for (let i = 0; i < perWindow; i++) {
          now = Date.UTC(2031, 1, 1, 0, 0, 0) + w * policy.windowSeconds * 1000 + Math.floor((i * policy.windowSeconds * 1000) / perWindow);
          await limiter.admit(organizationId, 'key_bench');
          limiter.countCampaign(organizationId, `camp_bench${i % 3}`);
          requests++;
        }
      await limiter.flush();
    });
    const writes = dynamodbCalls(scope.calls).filter((call) => /Update|Put|Write/.test(call.command));
    const wcu = writeUnits(writes);
    results.add({
      group,
      name: 'DynamoDB write units per request of the limiter plus usage counting',
      value: round(wcu / requests, 3),
      unit: 'WCU per request',
      budget: { op: '<=', limit: 1, text: '≤ 1 WCU (one write, as before)' },
      floor: { value: 1, unit: 'WCU', what: 'one counter write per request' },
      extra: {
        requests,
        writes: writes.length,
        'write units': round(wcu, 1),
        'largest write': `${Math.max(...writes.map((call) => call.wru ?? 0))} WCU`,
      },
      note: 'one limiter (one container), its clock injected, 100 requests spread over each 10 s window of a 200 limit, each naming one of 3 campaigns: lease writes (with the per-key day counts), the usage months (per key and per campaign), lastUsedAt; ConsumedCapacity as DynamoDB reported it',
    });
  }

  // ------------------------------------------- warm p50 with and without the scope stage
  await asStandardLambdaEnvironment(async () => {
    const limiter = requestLimiter();
    const cache = new ApiKeyCache();
    const withStage = handlersOf(limiter, cache, false);
    const withoutStage = handlersOf(limiter, cache, true);
    for (const name of ['get', 'describe'] as const) {
      const tasks = {
        with: preparedInvocations(withStage[name], paths[name], scopedKey, bodies[name], functionIds[name]),
        without: preparedInvocations(withoutStage[name], paths[name], scopedKey, bodies[name], functionIds[name]),
      };
      const times: Record<'with' | 'without', number[]> = { with: [], without: [] };
      for (let round_ = 0; round_ < 50 + options.rounds; round_++)
        for (const task of shuffled(['with', 'without'] as const)) {
          const invocation = tasks[task]();
          const started = performance.now();
          await invocation();
          if (round_ >= 50) times[task].push(performance.now() - started);
        }
      const p50With = median(times.with);
      const p50Without = median(times.without);
      results.add({
        group,
        name: `warm p50 of ${name} with the scope stage ÷ without it`,
        value: round(p50With / p50Without, 3),
        unit: '×',
        budget: { op: '<=', limit: 1.05, text: '≤ 1.05 × the same pipeline without scope checks' },
        floor: { value: round(p50Without, 3), unit: 'ms', what: 'p50 of the same handler without its scope stage, same rounds' },
        extra: { 'p50 with (ms)': round(p50With, 3), 'p50 without (ms)': round(p50Without, 3), rounds: options.rounds },
        note: 'both handlers built from the same use case and dependencies (createApiHandler; withoutScopeStage only here), invoked in-process as the runtime does, interleaved in a random order each round after 50 warm-up rounds; the key lists every scope, the required one last',
      });
    }
  });

  // ------------------------------------------- usage over 92 days by key
  {
    const perRow: Record<string, string> = {};
    const unitsPerRow: number[] = [];
    let itemsPerRow = 0;
    for (const keysUsed of [3, 30]) {
      const org = await benchOrganization(`Bench keys usage ${keysUsed} keys`);
      const start = Date.UTC(2026, 7, 1);
      const keyIds = Array.from({ length: keysUsed }, (_, k) => `key_${String(k).padStart(21, '0')}`);
      const days = Array.from({ length: 92 }, (_, d) => utcDay(start + d * 86_400_000));
      // As the limiter writes them: each key every day, in the day items (day rows) and the usage months (key rows).
      for (const day of days)
        await requestDays().write(org.organizationId, { day, counts: new Map(keyIds.map((id) => [id, 100] as const)), remove: [] });
      await usageMonths().add(
        org.organizationId,
        keyIds.flatMap((id) => days.map((day) => ({ kind: 'K' as const, id, day, n: 100 }))),
      );
      const answer = await postCounted(stack, orgUsageOperation.path, org.apiKey, { from: days[0], to: days.at(-1), groupBy: 'key' });
      if (answer.status !== 200) throw new Error(`org/usage answered ${answer.status}`);
      const rows = (answer.data as { rows: unknown[] }).rows.length;
      const calls = dynamodbCalls(answer.scope.calls);
      const queries = calls.filter((call) => call.command === 'Query');
      const rru = readUnits(calls);
      unitsPerRow.push(rru / rows);
      const monthItems = keysUsed * 4; // Aug, Sep, Oct, Nov 2026
      itemsPerRow = Math.max(itemsPerRow, monthItems / rows);
      perRow[`${keysUsed} keys`] =
        `${rows} rows, ${round(rru, 1)} RRU (${round(rru / rows, 2)} per row), ${calls.length} calls (${queries.length} Query)`;
    }
    results.add({
      group,
      name: 'usage over 92 days by key: read units per row, 30 keys ÷ 3 keys',
      value: round(unitsPerRow[1]! / unitsPerRow[0]!, 2),
      unit: '× (1: reads ∝ rows)',
      budget: { op: '<=', limit: 1.2, text: '≤ 1.2 (read units per row do not grow with the rows)' },
      floor: { value: round(unitsPerRow[0]!, 2), unit: 'RRU per row', what: 'the 3-key query' },
      extra: { ...perRow, 'month items per row': itemsPerRow },
      note: 'by key, org/usage reads the usage months (one item per key and calendar month, at most 4 for 92 days, one Query), not the 92 day items; plus the ledger’s entries in the range (none here) and the authentication reads',
    });
  }

  // ------------------------------------------- write units of an audited change
  {
    const update = await postCounted(stack, PATHS.update, fixture.apiKey, {
      campaignId: fixture.campaignId,
      name: `Renamed ${randomUUID()}`,
    });
    if (update.status !== 200) throw new Error(`campaigns/update answered ${update.status}`);
    const changeWrites = dynamodbCalls(update.scope.calls).filter((call) => /Write|Put|Update/.test(call.command));
    const entry = auditEntryPut(config.tableName, fixture.organizationId, {
      id: `aud_bench${randomUUID()}`,
      at: new Date().toISOString(),
      keyId: 'key_000000000000000000000',
      operation: 'updateCampaign',
      requestId: randomUUID(),
      idempotencyKey: null,
      status: 429,
      code: 'rate_limited',
      campaignId: fixture.campaignId,
      sourceIp: '203.0.113.7',
    });
    const { scope: entryScope } = await stack.inScope('keys audit entry', async () => {
      const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
      const { ddb } = await import('../../lib/aws');
      await ddb.send(new PutCommand(entry.Put));
    });
    const entryUnits = writeUnits(dynamodbCalls(entryScope.calls));
    const changeUnits = writeUnits(changeWrites);
    results.add({
      group,
      name: 'write units of an audited change (campaigns/update with its entry)',
      value: round(changeUnits, 1),
      unit: 'WCU',
      floor: {
        value: round(changeUnits - 2 * entryUnits, 1),
        unit: 'WCU',
        what: 'the same transaction without its entry (measured total − 2 × the entry)',
      },
      extra: {
        'entry alone (item + 3 index keys)': `${round(entryUnits, 1)} WCU`,
        'a refusal’s entry (401/429, BatchWriteItem)': `${round(entryUnits, 1)} WCU`,
        writes: changeWrites.map((call) => `${call.command} ${call.wru ?? '?'} WCU`).join(', '),
      },
      note: 'a transaction costs two write units per item written; the entry’s index keys are written to three indexes (by key, by operation, by both); the request’s own limiter writes are counted in the figure above',
    });
  }
}
