/**
 * Figure "DynamoDB round trips per operation": the SDK calls one HTTP
 * request makes, counted by a middleware on the shared clients (each attempt
 * counts, so a retry would show). The API key is counted with the operation
 * (issue #18): its organization is cached per container, and its key item
 * (revocation) is read inside the operation's BatchGetItem (describe, get,
 * enrich) or by a GetItem beside the Query (list: "1 + 1 parallel"); "auth"
 * shows the stand-alone key GetItems among the counted calls. Every route
 * is called once first, so the figures are a warm container's. For enrich
 * the launch evaluation's batched reads of warehouse statuses and account
 * history are reported apart, as the issue excludes them, and so is the
 * write of the evaluation's per-account outcomes (one PutItem of the outcome
 * manifest, decisions §11; made while the organization is read, so it adds
 * no latency). A repeat enrich also reports its Step Functions calls (none).
 */
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { importBenchAccounts, smallFixture } from '../lib/fixtures';
import { sfn } from '../../lib/aws';
import { embeddedWarehouse, useWarehouse, warehouse } from '../../lib/root';

const isEvaluationRead = (call: CallRecord) => call.service === 'dynamodb' && call.command === 'BatchGetItem' && (call.kind === 'warehouse' || call.kind.startsWith('accountHistory'));

/** `BatchGetItem(campaign) → UpdateItem(campaign) → …` */
const sequence = (calls: CallRecord[]) => calls.map((c) => `${c.command}(${c.kind})`).join(' → ');

export async function runRoundTrips(results: Results, stack: BenchStack): Promise<void> {
  const group = 'DynamoDB round trips';
  const fixture = await smallFixture(stack, 'round trips');
  const { apiKey, campaignId } = fixture;

  const measure = async (
    name: string,
    path: string,
    body: unknown,
    budget: number | undefined,
    options: { excludeEvaluation?: boolean; budgetText?: string; stepFunctionsCalls?: () => number } = {},
  ) => {
    const reply = await postCounted(stack, path, apiKey, body);
    if (reply.status !== 200) throw new Error(`${name} answered ${reply.status}: ${JSON.stringify(reply.error)}`);
    const dynamo = reply.scope.calls.filter((c) => c.service === 'dynamodb');
    const auth = dynamo.filter((c) => c.kind === 'auth');
    const evaluation = options.excludeEvaluation ? dynamo.filter(isEvaluationRead) : [];
    const outcomeRecord = options.excludeEvaluation ? dynamo.filter((c) => c.kind === 'outcomes' && c.command === 'PutItem') : [];
    const op = dynamo.filter((c) => !evaluation.includes(c) && !outcomeRecord.includes(c));
    const s3 = reply.scope.calls.filter((c) => c.service === 's3');
    if (budget !== undefined && op.length > budget && op.filter((c) => c.kind !== 'auth').every((c) => c.command === 'Query')) {
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
      ...(budget !== undefined ? { budget: { op: '<=', limit: budget, text: options.budgetText ?? `≤ ${budget} (key read included)` } } : {}),
      extra: {
        auth: auth.length,
        ...(options.excludeEvaluation ? { 'evaluation reads (excluded)': evaluation.length, 'outcome record (reported apart)': outcomeRecord.length } : {}),
        ...(s3.length ? { 'S3 calls': s3.length } : {}),
        ...(options.stepFunctionsCalls ? { 'Step Functions calls': options.stepFunctionsCalls() } : {}),
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
  // list: the Query (one per index partition the filter names, in parallel) + the key GetItem beside it.
  const listBudget = { budgetText: '≤ 2 (1 + 1 parallel key read)' };
  await measure('list, no filter', PATHS.list, {}, 2, listBudget);
  await measure('list, filters.status = draft', PATHS.list, { filters: { status: 'draft' } }, 2, listBudget);
  await measure('list, filters.status = [enriched, enriching]', PATHS.list, { filters: { status: ['enriched', 'enriching'] } }, 3, { budgetText: '≤ 3 (2 partitions + 1 parallel key read)' });
  await measure('list, filters.status = draft, createdVia = api', PATHS.list, { filters: { status: 'draft', createdVia: 'api' } }, 2, listBudget);
  await measure('list, filters.status = expired', PATHS.list, { filters: { status: 'expired' } }, 3, { budgetText: '≤ 3 (2 sources + 1 parallel key read)' });
  await measure('list, filters.status = [draft, enriching], createdVia = [api, ui]', PATHS.list, { filters: { status: ['draft', 'enriching'], createdVia: ['api', 'ui'] } }, 5, {
    budgetText: '≤ 5 (4 partitions + 1 parallel key read)',
  });
  const page = await post<{ nextCursor: string | null }>(stack, PATHS.list, apiKey, { limit: 5 });
  await measure('list, next page (cursor)', PATHS.list, { limit: 5, cursor: page.data.nextCursor }, 2, listBudget);
  await measure('create (3 accounts)', PATHS.create, { name: 'Round trips', accountIds: fixture.accountIds.slice(0, 3) }, undefined);
  await measure('update (name)', PATHS.update, { campaignId, name: 'Renamed' }, undefined);

  // Enrich a 10-account campaign, then export it once enriched.
  const ids = await importBenchAccounts(`rt${Date.now().toString(36)}`, 10, 3);
  const campaign = expectOk(await post<{ id: string }>(stack, PATHS.create, apiKey, { name: 'Round trips enrich', accountIds: ids }), 'create');
  await measure('quote (10 accounts)', PATHS.quote, { campaignId: campaign.id }, undefined, { excludeEvaluation: true });
  // The workflow's contact step waits until the repeat call was measured, so the campaign is still `enriching` then.
  const previousWarehouse = warehouse();
  let releaseContacts = () => undefined as void;
  const contactsHeld = new Promise<void>((resolve) => (releaseContacts = resolve));
  useWarehouse({ getAccountStatuses: (ids) => previousWarehouse.getAccountStatuses(ids), getAccounts: async (ids) => (await contactsHeld, previousWarehouse.getAccounts(ids)) });
  let stepFunctionsCalls = 0;
  const counter = 'benchRoundTripsSfnCounter';
  try {
    await measure('enrich (10 accounts)', PATHS.enrich, { campaignId: campaign.id }, 4, { excludeEvaluation: true });
    // A repeat call while enriching: one BatchGetItem (campaign + organization + key), no Step Functions call.
    sfn().middlewareStack.add((next) => (args) => (stepFunctionsCalls++, next(args)), { step: 'initialize', name: counter });
    await measure('enrich repeat (while enriching)', PATHS.enrich, { campaignId: campaign.id }, 1, { stepFunctionsCalls: () => stepFunctionsCalls });
  } finally {
    sfn().middlewareStack.remove(counter);
    releaseContacts();
    useWarehouse(previousWarehouse === embeddedWarehouse() ? undefined : previousWarehouse);
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = expectOk(await post<{ status: string }>(stack, PATHS.get, apiKey, { campaignId: campaign.id }), 'get');
    if (got.status === 'enriched') break;
    if (Date.now() > deadline) throw new Error(`The 10-account campaign is still ${got.status} after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await measure('export (10 accounts)', PATHS.export, { campaignId: campaign.id }, undefined);
  await measure('accounts (10 accounts, first page)', PATHS.accounts, { campaignId: campaign.id }, 3, { budgetText: '≤ 3 (key GetItem first, then 2)' });

  results.note(
    group,
    'Counted by a middleware added (by the bench, from outside) to the deserialize step of the shared DynamoDB client in lib/aws.ts; the ' +
      'document client shares that middleware stack, so every DynamoDB request of the handler is seen once per HTTP attempt. Each request ' +
      'is attributed to its HTTP request through AsyncLocalStorage. The API-key read is counted: inside the BatchGetItem of describe, get and ' +
      'enrich, a GetItem beside the Query of list ("auth", in parallel), a GetItem before the use case elsewhere. Rows without a budget are ' +
      'reported for completeness.',
  );
}
