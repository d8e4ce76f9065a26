/**
 * Every retry finds the work it did (docs/idempotency.md; issue #31): latency
 * injected with SDK client middleware on the launch transaction and on
 * StartExecution around the request's deadline, and answers lost after the
 * write. No answer is an error followed by a charge, and a retry with the
 * same `Idempotency-Key` answers 200 with the campaign the first try
 * charged (or created), as it is now.
 *
 * The handlers are invoked as API Gateway would, with a Lambda context whose
 * remaining time the test sets (the only thing HTTP cannot set).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamodb, sfn } from '../lib/aws';
import { handler as enrichHandler } from '../functions/campaigns-enrich';
import { handler as createHandler } from '../functions/campaigns-create';
import { apiGatewayEvent } from '../infra/local/event';
import { lambdaContext } from '../infra/local/lambda-context';
import { LAUNCH_COMMIT_RESERVE_MS } from '../lib/enrichment/launch';
import { ledger, reconcileDependencies, reconcileEnrichments } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  getCampaign,
  importAccounts,
  NO_ERASURE,
  ledgerOf,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';
import { crash, injectFault, removeAllFaults } from './hostile/support/faults';

const api = useApi();

/** Installed latencies, removed after each test. */
const latencies: (() => void)[] = [];
afterEach(() => {
  latencies.splice(0).forEach((remove) => remove());
  removeAllFaults();
});

/** Holds every call of `command` whose input mentions `match` for `ms` (or what `ms()` answers at the call) before sending it; counts them. */
function injectLatency(client: 'dynamodb' | 'sfn', command: string, match: string, ms: number | (() => number)): { calls: number } {
  const target = client === 'dynamodb' ? dynamodb : sfn();
  const name = `latency-${randomUUID()}`;
  const state = { calls: 0 };
  (target.middlewareStack as any).add(
    (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: { input: unknown }) => {
      if (context.commandName === command && JSON.stringify(args.input).includes(match)) {
        state.calls++;
        await sleep(typeof ms === 'number' ? ms : ms());
      }
      return next(args);
    },
    { step: 'initialize', name, override: true },
  );
  latencies.push(() => (target.middlewareStack as any).remove(name));
  return state;
}

/** Invokes an API Lambda as API Gateway would, with `remainingMs` before the function's timeout. */
async function invoke(
  handler: typeof enrichHandler,
  route: string,
  apiKey: string,
  body: unknown,
  remainingMs: number,
  idempotencyKey?: string,
) {
  const requestId = randomUUID();
  const event = apiGatewayEvent({
    method: 'POST',
    url: route,
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: Buffer.from(JSON.stringify(body)),
    requestId,
  });
  const result = await handler(event, lambdaContext('ApiFunction', requestId, remainingMs));
  return { status: result.statusCode, headers: result.headers ?? {}, body: JSON.parse(result.body ?? 'null') };
}

const ENRICH = '/v1/campaigns/enrich';
const CREATE = '/v1/campaigns/create';

async function draft(accounts = 2, credits = 20) {
  const list = activeAccounts(uniquePrefix(), accounts);
  await importAccounts(list, NO_ERASURE);
  const org = await newOrganization({ smbCredits: credits });
  const campaignId = await createApiCampaign(
    api(),
    org.apiKey,
    list.map((a) => a.accountId),
  );
  return { ...org, campaignId };
}

describe('launch near its deadline', () => {
  it('a slow transaction with too little time left is never sent: 500, nothing charged, ever; the retry with the key launches once', async () => {
    const { organizationId, apiKey, campaignId } = await draft();
    const slow = injectLatency('dynamodb', 'TransactWriteItemsCommand', campaignId, 5_000);
    // 6 s left: the deadline signal (3 s before the end) is still live, but not the launch's 8 s reserve.
    const res = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, LAUNCH_COMMIT_RESERVE_MS - 2_000, 'launch-a');
    expect(res.status).toBe(500);
    expect(slow.calls).toBe(0);
    expect(await balance(organizationId)).toBe(20);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toMatchObject({ status: 'draft', credits: { charged: 0 } });

    const retry = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-a');
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.data).toMatchObject({ id: campaignId, status: 'enriching', credits: { charged: 2, remaining: 18 } });
    expect((await ledgerOf(organizationId, campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('a slow transaction with room left is awaited: 200 with the charged campaign, never 500 followed by a charge', async () => {
    const { organizationId, apiKey, campaignId } = await draft();
    const slow = injectLatency('dynamodb', 'TransactWriteItemsCommand', campaignId, 4_000);
    // 28 s left: the reserve holds however slow the evaluation before it, so the transaction starts, and is awaited for its 4 s.
    const res = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-b');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(slow.calls).toBe(1);
    expect(res.body.data).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 18 } });
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 18, ledgerSum: 18 });
  });

  it('a StartExecution slower than the time left: the charged launch answers 200, and the execution still runs', async () => {
    const { organizationId, apiKey, campaignId } = await draft();
    // The execution's input names the campaign; 28 s left (the commit's reserve holds however slow the evaluation),
    // and StartExecution, whenever it is called, takes until 1 s past the function's end: answered 2 s before the end.
    const functionEndsAt = Date.now() + 28_000;
    const slow = injectLatency('sfn', 'StartExecutionCommand', campaignId, () => functionEndsAt - Date.now() + 1_000);
    const res = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-c');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(slow.calls).toBe(1);
    expect(res.body.data).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 18 } });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect((await ledgerOf(organizationId, campaignId)).charged).toBe(2);
    const replay = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-c');
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('the transaction applied but its answer lost (500): the retry with the key answers 200 with the campaign as it is now, even enriched', async () => {
    const { organizationId, apiKey, campaignId } = await draft();
    injectFault({
      client: 'dynamodb',
      command: 'TransactWriteItemsCommand',
      match: campaignId,
      when: 'after',
      error: () => crash('NetworkingError'),
    });
    const res = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-d');
    expect(res.status).toBe(500);
    removeAllFaults();
    // The charge stands (the work was done); its execution was never started: the reconciler starts it and it completes.
    expect((await ledgerOf(organizationId, campaignId)).charged).toBe(2);
    await reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');

    // Not 409 campaign_not_enrichable: the launch this key did, as it is now.
    const retry = await invoke(enrichHandler, ENRICH, apiKey, { campaignId }, 28_000, 'launch-d');
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.data).toMatchObject({ id: campaignId, status: 'enriched', credits: { charged: 2, remaining: 18 } });
    expect((await ledgerOf(organizationId, campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    // Without the key, the same call is the refusal enrich gives an enriched campaign.
    expect((await call(api(), ENRICH, { apiKey, body: { campaignId } })).error?.code).toBe('campaign_not_enrichable');
  });
});

describe('create whose answer is lost', () => {
  const body = (name: string) => ({ name, accountIds: ['acc_lost_1', 'acc_lost_2'] });

  it('saving the answer failed: once the first lock lapses, the retry answers the same campaign; one draft', async () => {
    const { apiKey } = await newOrganization();
    injectFault({
      client: 'dynamodb',
      command: 'UpdateItemCommand',
      match: ':completed',
      error: () => crash('ProvisionedThroughputExceededException'),
    });
    // 4 s left: the key's lock lapses 4 s after the claim.
    const first = await invoke(createHandler, CREATE, apiKey, body('Lost save'), 4_000, 'create-a');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const retry = await pollUntil(
      () => invoke(createHandler, CREATE, apiKey, body('Lost save'), 28_000, 'create-a'),
      (r) => r.status !== 409,
      { intervalMs: 500 },
    );
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.data).toEqual(first.body.data);
    const listed = await call(api(), '/v1/campaigns/list', { apiKey, body: {} });
    expect(listed.data.campaigns.map((c: { id: string }) => c.id)).toEqual([first.body.data.id]);
  });

  it('the campaign written but the answer lost (500): the retry with the key answers that campaign; one draft', async () => {
    const { apiKey } = await newOrganization();
    injectFault({
      client: 'dynamodb',
      command: 'TransactWriteItemsCommand',
      match: 'Lost answer',
      when: 'after',
      error: () => crash('NetworkingError'),
    });
    const first = await invoke(createHandler, CREATE, apiKey, body('Lost answer'), 28_000, 'create-b');
    expect(first.status).toBe(500);
    const retry = await invoke(createHandler, CREATE, apiKey, body('Lost answer'), 28_000, 'create-b');
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    const listed = await call(api(), '/v1/campaigns/list', { apiKey, body: {} });
    expect(listed.data.campaigns.map((c: { id: string }) => c.id)).toEqual([retry.body.data.id]);
    expect(retry.body.data).toMatchObject({ name: 'Lost answer', status: 'draft', accounts: { requested: 2 } });
  });
});
