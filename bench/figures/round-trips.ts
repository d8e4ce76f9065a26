/**
 * Figure "DynamoDB round trips per operation": the SDK calls one HTTP
 * request makes, counted by a middleware on the shared clients (each attempt
 * counts, so a retry would show). Every operation first authenticates with
 * one GetItem of the API key; it is reported apart ("auth 1 + op N") and the
 * budget applies to N. For enrich the launch evaluation's batched reads of
 * warehouse statuses and account history are reported apart too, as the
 * issue excludes them, and so is the write of the evaluation's per-account
 * outcomes (one PutItem of the outcome manifest, docs/launch.md#per-account-outcomes; made while
 * the organization is read, so it adds no latency).
 */
import type { Results } from '../lib/results';
import { waves, type BenchStack, type CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { importBenchAccounts, smallFixture } from '../lib/fixtures';

const isEvaluationRead = (call: CallRecord) =>
  call.service === 'dynamodb' && call.command === 'BatchGetItem' && (call.kind === 'warehouse' || call.kind.startsWith('accountHistory'));

/** `BatchGetItem(campaign) → UpdateItem(campaign) → …` (calls in flight together joined by ` ∥ `). */
const sequence = (calls: CallRecord[]) =>
  waves(calls)
    .map((wave) => wave.map((c) => `${c.command}(${c.kind})`).join(' ∥ '))
    .join(' → ');

export async function runRoundTrips(results: Results, stack: BenchStack): Promise<void> {
  const group = 'DynamoDB round trips';
  const fixture = await smallFixture(stack, 'round trips');
  const { apiKey, campaignId } = fixture;

  /**
   * One request's DynamoDB round trips, authentication included (issue #18 counts them so: describe 2 → 1).
   * The value is the number of sequential waves; `parallelBudget` is how many calls may be in flight beside
   * the one of each wave (list: the key read beside the Query).
   */
  const measure = async (
    name: string,
    path: string,
    body: unknown,
    budget: number | undefined,
    options: { excludeEvaluation?: boolean; parallelBudget?: number; stepFunctionsBudget?: number; auditApart?: boolean } = {},
  ) => {
    const reply = await postCounted(stack, path, apiKey, body);
    if (reply.status !== 200) throw new Error(`${name} answered ${reply.status}: ${JSON.stringify(reply.error)}`);
    const all = reply.scope.calls.filter((c) => c.service === 'dynamodb');
    // The request-rate limiter's calls (docs/limits.md) are reported apart: they must share a wave with the
    // request's own calls (no round trip added), which the wave count below shows.
    const limiter = all.filter((c) => c.kind === 'limiter');
    const dynamo = all.filter((c) => c.kind !== 'limiter');
    const auth = dynamo.filter((c) => c.kind === 'auth');
    const evaluation = options.excludeEvaluation ? dynamo.filter(isEvaluationRead) : [];
    const outcomeRecord = options.excludeEvaluation ? dynamo.filter((c) => c.kind === 'outcomes' && c.command === 'PutItem') : [];
    // The audit entry of an answer that changed nothing (docs/audit.md: written once the answer is decided, after the
    // request's reads): reported apart where asked, beside the round trips it adds.
    const auditEntry = options.auditApart ? dynamo.filter((c) => c.kind === 'audit') : [];
    const counted = dynamo.filter((c) => !evaluation.includes(c) && !outcomeRecord.includes(c) && !auditEntry.includes(c));
    const sequential = waves([...counted, ...limiter]).length;
    const s3 = reply.scope.calls.filter((c) => c.service === 's3');
    const op = counted.filter((c) => c.kind !== 'auth');
    if (budget !== undefined && op.length > budget + (options.parallelBudget ?? 0) && op.every((c) => c.command === 'Query')) {
      results.note(
        group,
        `Cause (${name}): one Query per index partition the filter names — here ${op.length} partitions of ${[...new Set(op.map((c) => c.kind.replace('list:', '')))].join(', ')} ` +
          '(lib/campaigns/store.ts listSources: one per status × createdVia), run in parallel and merged; the count grows with the product of the filter values.',
      );
    }
    // A wave may carry `parallelBudget` extra calls; more than that counts as extra round trips.
    const overParallel = Math.max(0, counted.length - waves(counted).length - (options.parallelBudget ?? 0));
    results.add({
      group,
      name,
      value: sequential + (budget !== undefined ? overParallel : 0),
      unit: 'round trips',
      ...(budget !== undefined
        ? {
            budget: {
              op: '<=',
              limit: budget,
              text: options.parallelBudget
                ? `${budget} (+${options.parallelBudget} parallel)`
                : `≤ ${budget}, auth included${options.auditApart ? '; its audit entry apart' : ''}`,
            },
          }
        : {}),
      extra: {
        'DynamoDB calls': counted.length,
        'of them auth (API key)': auth.length,
        'limiter calls (beside the first wave; counter UpdateItem, policy GetItem when due)': limiter.length,
        'limiter write units': limiter.reduce((total, c) => total + (c.wru ?? 0), 0),
        ...(options.excludeEvaluation
          ? { 'evaluation reads (excluded)': evaluation.length, 'outcome record (reported apart)': outcomeRecord.length }
          : {}),
        ...(options.auditApart
          ? {
              'audit entry (reported apart)': auditEntry.map((c) => c.command).join(', ') || 'none',
              'round trips with the audit entry': waves([...counted, ...limiter, ...auditEntry]).length,
            }
          : {}),
        ...(s3.length ? { 'S3 calls': s3.length } : {}),
        'Step Functions calls': reply.scope.stepFunctionsCalls.length,
        calls: sequence([...counted, ...limiter, ...auditEntry]),
      },
    });
    if (options.stepFunctionsBudget !== undefined) {
      results.add({
        group: 'Step Functions calls',
        name,
        value: reply.scope.stepFunctionsCalls.length,
        unit: 'calls',
        budget: { op: '<=', limit: options.stepFunctionsBudget, text: `${options.stepFunctionsBudget}` },
        extra: { calls: reply.scope.stepFunctionsCalls.join(', ') || 'none' },
        note: "requests to the Step Functions endpoint sent while serving the request (Node's http.client diagnostics channel, by the request's AsyncLocalStorage scope)",
      });
    }
    return reply;
  };

  // One untimed call per route first: the first request of a handler may do one-off work.
  await post(stack, PATHS.describe, apiKey, {});
  await post(stack, PATHS.get, apiKey, { campaignId });

  const list = { parallelBudget: 1 };
  await measure('describe', PATHS.describe, {}, 1);
  await measure('get', PATHS.get, { campaignId }, 1);
  await measure('list, no filter', PATHS.list, {}, 1, list);
  await measure('list, filters.status = draft', PATHS.list, { filters: { status: 'draft' } }, 1, list);
  await measure('list, filters.status = [enriched, enriching]', PATHS.list, { filters: { status: ['enriched', 'enriching'] } }, undefined);
  await measure('list, filters.status = draft, createdVia = api', PATHS.list, { filters: { status: 'draft', createdVia: 'api' } }, 1, list);
  // `expired` reads two index partitions, like a two-status filter: campaigns the Expire step marked `expired`, and `enriched`
  // ones whose results lapsed before it ran (lib/campaigns/store.ts listSources, `lapsed`), both in the one wave. Reported, as the
  // multi-value filters are; the budget is the list's own (one partition).
  await measure('list, filters.status = expired (two partitions)', PATHS.list, { filters: { status: 'expired' } }, undefined);
  await measure(
    'list, filters.status = [draft, enriching], createdVia = [api, ui]',
    PATHS.list,
    { filters: { status: ['draft', 'enriching'], createdVia: ['api', 'ui'] } },
    undefined,
  );
  const page = await post<{ nextCursor: string | null }>(stack, PATHS.list, apiKey, { limit: 5 });
  await measure('list, next page (cursor)', PATHS.list, { limit: 5, cursor: page.data.nextCursor }, 1, list);
  await measure('create (3 accounts)', PATHS.create, { name: 'Round trips', accountIds: fixture.accountIds.slice(0, 3) }, undefined);
  await measure('update (name)', PATHS.update, { campaignId, name: 'Renamed' }, undefined);

  // Enrich a 10-account campaign, then export it once enriched.
  const ids = await importBenchAccounts(`rt${Date.now().toString(36)}`, 10, 3);
  const campaign = expectOk(
    await post<{ id: string }>(stack, PATHS.create, apiKey, { name: 'Round trips enrich', accountIds: ids }),
    'create',
  );
  await measure('quote (10 accounts)', PATHS.quote, { campaignId: campaign.id }, undefined, { excludeEvaluation: true });
  // The workflow's tasks are held (bench/lib/meter.ts) so the campaign stays `enriching` for the repeat call.
  const release = stack.executions.hold(campaign.id);
  try {
    await measure('enrich (10 accounts)', PATHS.enrich, { campaignId: campaign.id }, undefined, { excludeEvaluation: true });
    // Its reads are budgeted (1, auth included: the campaign + organization BatchGetItem answers it); the audit entry every
    // call of a write operation gets (issue #40, docs/audit.md) needs the answer, so it follows the read: reported apart.
    await measure('enrich repeat (campaign enriching)', PATHS.enrich, { campaignId: campaign.id }, 1, {
      excludeEvaluation: true,
      stepFunctionsBudget: 0,
      auditApart: true,
    });
  } finally {
    release();
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId: campaign.id }), 'get');
    if (got.status === 'enriched') break;
    if (Date.now() > deadline) throw new Error(`The 10-account campaign is still ${got.status} after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await measure('export (10 accounts)', PATHS.export, { campaignId: campaign.id }, undefined);
  await measure('accounts (10 accounts, first page)', PATHS.accounts, { campaignId: campaign.id }, 3);

  results.note(
    group,
    'Counted by a middleware added (by the bench, from outside) to the deserialize step of the shared DynamoDB client in lib/aws.ts; the ' +
      'document client shares that middleware stack, so every DynamoDB request of the handler is seen once per HTTP attempt. Each request ' +
      'is attributed to its HTTP request through AsyncLocalStorage. The value counts sequential round trips, authentication included ' +
      '(calls whose time on the wire overlaps form one round trip; "∥" in the sequence); for list, one call beside the Query (the key read) is ' +
      'allowed in parallel, more count as extra round trips. Multi-value list filters fan out into one Query per partition and are reported ' +
      'only, as is every row without a budget. "enrich repeat" is a second enrich on a campaign still `enriching` (its workflow held by the bench); ' +
      "its budget counts the request's reads: the audit entry of an answer that changed nothing (docs/audit.md, issue #40: every call of a write " +
      'operation, whatever its answer) is written once the answer is decided, so after the read, and its round trip is shown beside the figure. ' +
      '"accounts" reads the campaign with the organization (whose list of active keys verifies the key), the outcome manifest and the ' +
      'suppression sets (what may be delivered) in one wave: 3 calls, no key read before them.',
  );
}
