/**
 * Figure "DynamoDB round trips per operation": the SDK calls one HTTP
 * request makes, counted by a middleware on the shared clients (each attempt
 * counts, so a retry would show). Every operation first authenticates with
 * one GetItem of the API key; it is reported apart ("auth 1 + op N") and the
 * budget applies to N. For enrich the launch evaluation's batched reads of
 * warehouse statuses and account history are reported apart too, as the
 * issue excludes them, and so is the write of the evaluation's per-account
 * outcomes (one PutItem of the outcome manifest, decisions §11; made while
 * the organization is read, so it adds no latency).
 */
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { importBenchAccounts, smallFixture } from '../lib/fixtures';

const isEvaluationRead = (call: CallRecord) => call.service === 'dynamodb' && call.command === 'BatchGetItem' && (call.kind === 'warehouse' || call.kind.startsWith('accountHistory'));

/** `BatchGetItem(campaign) → UpdateItem(campaign) → …` */
const sequence = (calls: CallRecord[]) => calls.map((c) => `${c.command}(${c.kind})`).join(' → ');

export async function runRoundTrips(results: Results, stack: BenchStack): Promise<void> {
  const group = 'DynamoDB round trips';
  const fixture = await smallFixture(stack, 'round trips');
  const { apiKey, campaignId } = fixture;

  const measure = async (name: string, path: string, body: unknown, budget: number | undefined, options: { excludeEvaluation?: boolean } = {}) => {
    const reply = await postCounted(stack, path, apiKey, body);
    if (reply.status !== 200) throw new Error(`${name} answered ${reply.status}: ${JSON.stringify(reply.error)}`);
    const dynamo = reply.scope.calls.filter((c) => c.service === 'dynamodb');
    const auth = dynamo.filter((c) => c.kind === 'auth');
    const evaluation = options.excludeEvaluation ? dynamo.filter(isEvaluationRead) : [];
    const outcomeRecord = options.excludeEvaluation ? dynamo.filter((c) => c.kind === 'outcomes' && c.command === 'PutItem') : [];
    const op = dynamo.filter((c) => c.kind !== 'auth' && !evaluation.includes(c) && !outcomeRecord.includes(c));
    const s3 = reply.scope.calls.filter((c) => c.service === 's3');
    if (budget !== undefined && op.length > budget && op.every((c) => c.command === 'Query')) {
      results.note(
        group,
        `Cause (${name}): one Query per index partition the filter names — here ${op.length} partitions of ${[...new Set(op.map((c) => c.kind.replace('list:', '')))].join(', ')} ` +
          '(lib/campaigns/store.ts listSources: one per status × createdVia), run in parallel and merged; the count grows with the product of the filter values.',
      );
    }
    results.add({
      group,
      name,
      value: op.length,
      unit: 'round trips',
      ...(budget !== undefined ? { budget: { op: '<=', limit: budget, text: `≤ ${budget} (after auth)` } } : {}),
      extra: {
        auth: auth.length,
        ...(options.excludeEvaluation ? { 'evaluation reads (excluded)': evaluation.length, 'outcome record (reported apart)': outcomeRecord.length } : {}),
        ...(s3.length ? { 'S3 calls': s3.length } : {}),
        calls: sequence(op),
      },
    });
    return reply;
  };

  // One untimed call per route first: the first request of a handler may do one-off work.
  await post(stack, PATHS.describe, apiKey, {});
  await post(stack, PATHS.get, apiKey, { campaignId });

  await measure('describe', PATHS.describe, {}, 1);
  await measure('get', PATHS.get, { campaignId }, 1);
  await measure('list, no filter', PATHS.list, {}, 2);
  await measure('list, filters.status = draft', PATHS.list, { filters: { status: 'draft' } }, 2);
  await measure('list, filters.status = [enriched, enriching]', PATHS.list, { filters: { status: ['enriched', 'enriching'] } }, 2);
  await measure('list, filters.status = draft, createdVia = api', PATHS.list, { filters: { status: 'draft', createdVia: 'api' } }, 2);
  await measure('list, filters.status = expired', PATHS.list, { filters: { status: 'expired' } }, 2);
  await measure('list, filters.status = [draft, enriching], createdVia = [api, ui]', PATHS.list, { filters: { status: ['draft', 'enriching'], createdVia: ['api', 'ui'] } }, 2);
  const page = await post<{ nextCursor: string | null }>(stack, PATHS.list, apiKey, { limit: 5 });
  await measure('list, next page (cursor)', PATHS.list, { limit: 5, cursor: page.data.nextCursor }, 2);
  await measure('create (3 accounts)', PATHS.create, { name: 'Round trips', accountIds: fixture.accountIds.slice(0, 3) }, undefined);
  await measure('update (name)', PATHS.update, { campaignId, name: 'Renamed' }, undefined);

  // Enrich a 10-account campaign, then export it once enriched.
  const ids = await importBenchAccounts(`rt${Date.now().toString(36)}`, 10, 3);
  const campaign = expectOk(await post<{ id: string }>(stack, PATHS.create, apiKey, { name: 'Round trips enrich', accountIds: ids }), 'create');
  await measure('quote (10 accounts)', PATHS.quote, { campaignId: campaign.id }, undefined, { excludeEvaluation: true });
  await measure('enrich (10 accounts)', PATHS.enrich, { campaignId: campaign.id }, 3, { excludeEvaluation: true });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId: campaign.id }), 'get');
    if (got.status === 'enriched') break;
    if (Date.now() > deadline) throw new Error(`The 10-account campaign is still ${got.status} after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await measure('export (10 accounts)', PATHS.export, { campaignId: campaign.id }, undefined);
  await measure('accounts (10 accounts, first page)', PATHS.accounts, { campaignId: campaign.id }, 2);

  results.note(
    group,
    'Counted by a middleware added (by the bench, from outside) to the deserialize step of the shared DynamoDB client in lib/aws.ts; the ' +
      'document client shares that middleware stack, so every DynamoDB request of the handler is seen once per HTTP attempt. Each request ' +
      'is attributed to its HTTP request through AsyncLocalStorage. "auth" is the API-key GetItem every operation makes first; the budget ' +
      'applies to the calls after it. Rows without a budget are reported for completeness.',
  );
}
