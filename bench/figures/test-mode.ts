/**
 * Figure module "test mode" (docs/test-mode.md; issue #32): what test traffic
 * costs us. A test key's campaign of N accounts (9 in 10 `test_found_`, 1 in
 * 10 `test_nocontacts_`) is created, launched and run to `enriched` through
 * the API and the local workflow, as a customer's integration test would:
 *
 * - enrich call → get answers `enriched`, in seconds ("test enrichments
 *   finish within seconds whatever their size");
 * - warehouse and account-history reads (DynamoDB warehouse items, recency
 *   markers, CRM lists): none, the built-in warehouse reads nothing;
 * - the counted bill per 1,000 test accounts (launch + workflow until
 *   WaitForResultsExpiry), priced as the scale module prices live traffic
 *   (bench/lib/cost.ts), against the same budget.
 */
import { apiKeys, organizations } from '../../lib/root';
import { memoryOf } from '../../infra/memory';
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { benchOrganization } from '../lib/fixtures';
import { costLines, costTable, dollars, PRICES, scaleLines, totalOf, type Usage } from '../lib/cost';
import { round } from '../lib/stats';
import { COST_BUDGET_PER_1000, dynamoUnits, s3Classes, taskLambdaUse } from './scale';

/** Enrich → enriched of a test campaign of up to 100,000 accounts, on this machine (seconds). */
const TEST_RUN_BUDGET_S = 30;

const n = (v: number) => Math.round(v).toLocaleString('en-US');

/** Runs the module; `accounts` is the campaign size (≤ 100,000). */
export async function runTestMode(results: Results, stack: BenchStack, options: { accounts: number }): Promise<void> {
  const group = 'test mode';
  const N = Math.min(options.accounts, 100_000);
  const live = await benchOrganization('Bench test mode', 0);
  const testKey = await apiKeys().create((await organizations().testTwin(live.organizationId)).id);
  const ids = Array.from({ length: N }, (_, i) => (i % 10 === 9 ? `test_nocontacts_${i}` : `test_found_${i}`));
  const campaignId = expectOk(
    await post<{ id: string }>(stack, PATHS.create, testKey, JSON.stringify({ name: `Test mode ${n(N)}`, accountIds: ids })),
    'create',
  ).id;

  const started = performance.now();
  const enrich = await postCounted<{ status: string }>(stack, PATHS.enrich, testKey, { campaignId });
  if (enrich.status !== 200) throw new Error(`enrich answered ${enrich.status} ${JSON.stringify(enrich.error)}`);
  let enrichedAt = 0;
  for (const deadline = Date.now() + 10 * 60_000; ;) {
    const got = expectOk(await post<{ status: string }>(stack, PATHS.get, testKey, { campaignId }), 'get');
    if (got.status === 'enriched') {
      enrichedAt = performance.now();
      break;
    }
    if (got.status !== 'enriching' || Date.now() > deadline) throw new Error(`The test campaign is ${got.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const execution = () => stack.executions.of(campaignId).at(-1);
  for (const deadline = Date.now() + 5 * 60_000; execution()?.expiryWaitAt === undefined && !execution()?.ended;) {
    if (Date.now() > deadline) throw new Error('The test campaign never reached WaitForResultsExpiry');
    await new Promise((r) => setTimeout(r, 100));
  }
  const meter = execution()!;
  const workflowCalls = stack.workflowScopes.at(-1)!.calls.filter((c) => c.at < (meter.expiryWaitAt ?? Infinity));
  const calls: CallRecord[] = [...enrich.scope.calls, ...workflowCalls];

  results.add({
    group,
    name: `${n(N)} test accounts, enrich call → get answers enriched`,
    value: (enrichedAt - started) / 1000,
    unit: 's',
    budget: { op: '<=', limit: TEST_RUN_BUDGET_S, text: `≤ ${TEST_RUN_BUDGET_S} s (local)` },
    extra: { 'enrich response': `${round(enrich.ms / 1000, 2)} s`, 'accounts/s': n(N / ((enrichedAt - started) / 1000)) },
    note: 'the same state machine and batch size as live; the test warehouse is computed from the IDs',
  });
  const sourceReads = calls.filter(
    (c) => c.kind === 'warehouse' || c.kind.startsWith('accountHistory') || c.kind === 'recency' || c.kind === 'crm',
  );
  results.add({
    group,
    name: 'warehouse and account-history reads of the test run',
    value: sourceReads.length,
    unit: 'calls',
    budget: { op: '<=', limit: 0, text: '0 (built in, no storage)' },
    note: 'DynamoDB calls on warehouse or account-history items and S3 calls on recency markers or CRM lists, from the enrich call to WaitForResultsExpiry',
  });

  const s3 = s3Classes(calls);
  const usage: Usage = {
    dynamodb: dynamoUnits(calls),
    // Result parts are stored for the test access period (1 hour by default): storage is negligible and left out.
    s3: { putClass: s3.put, getClass: s3.get, storedByteMonths: 0, transferOutBytes: 0 },
    stepFunctions: { transitions: meter.transitionsBeforeExpiryWait ?? meter.transitions },
    lambda: [
      { functionId: 'CampaignsEnrich', memoryMb: memoryOf('CampaignsEnrich'), invocations: 1, cpuSeconds: enrich.scope.cpuSeconds ?? 0 },
      ...taskLambdaUse(meter),
    ],
    apiGateway: { requests: 1 },
  };
  const per1000 = scaleLines(costLines(usage), 1000 / N);
  const total = totalOf(per1000);
  const largest = [...per1000].sort((a, b) => b.dollars - a.dollars).slice(0, 3);
  results.add({
    group,
    name: 'cost per 1,000 test accounts enriched (launch + workflow)',
    value: total,
    unit: '$',
    budget: { op: '<=', limit: COST_BUDGET_PER_1000, text: `≤ $${COST_BUDGET_PER_1000} (the live budget)` },
    extra: Object.fromEntries(
      largest.map((line) => [line.item, `${dollars(line.dollars)} (${Math.round((line.dollars / Math.max(total, 1e-12)) * 100)} %)`]),
    ),
    note: `${PRICES.asOf}; counted as the scale module counts a live campaign, less the warehouse and history reads and the 30-day storage`,
  });
  results.note(group, `Per 1,000 test accounts enriched, from the ${n(N)}-account test campaign (${PRICES.asOf}):`);
  for (const row of costTable(per1000)) results.note(group, row);
  results.note(
    group,
    `Test traffic needs no resource of its own: the same functions, table and bucket. Its cost is the launch, the workflow's result parts and outcomes, ` +
      `and Step Functions transitions (${n(usage.stepFunctions.transitions)} for ${n(N)} accounts); DynamoDB ${round(usage.dynamodb.rru, 0)} RRU / ${round(usage.dynamodb.wru, 0)} WRU, ` +
      `S3 ${n(s3.put)} PUT-class / ${n(s3.get)} GET-class requests for the whole run.`,
  );
}
