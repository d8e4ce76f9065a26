/**
 * Deadlines that hold (issue #19; docs/reliability.md "Deadlines"): a launch
 * that passes its deadline answers an error and never charges afterwards,
 * and a launch whose lock expired during its evaluation does not commit.
 *
 * The deadline test invokes the enrich Lambda's own handler with the event
 * API Gateway would send and a Lambda context whose remaining time is short
 * (the only thing HTTP cannot set); the evaluation is slowed by a warehouse
 * adapter that holds the status read until the test releases it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { handler as enrichHandler } from '../functions/campaigns-enrich';
import { handler as createHandler } from '../functions/campaigns-create';
import { apiGatewayEvent } from '../infra/local/event';
import { lambdaContext } from '../infra/local/lambda-context';
import { DEADLINE_MARGIN_MS } from '../lib/http/deadline';
import { enrichCampaign } from '../lib/enrichment/launch';
import { EnrichmentPendingError } from '../lib/errors';
import { launchDependencies, ledger } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  enrich,
  getCampaign,
  importAccounts,
  ledgerOf,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

/** Invokes an API Lambda as API Gateway would, with `remainingMs` left before the function's timeout. */
async function invoke(handler: typeof enrichHandler, route: string, apiKey: string, body: unknown, remainingMs: number) {
  const requestId = randomUUID();
  const event = apiGatewayEvent({
    method: 'POST',
    url: route,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
    requestId,
  });
  const result = await handler(event, lambdaContext('ApiFunction', requestId, remainingMs));
  return { status: result.statusCode, body: JSON.parse(result.body ?? 'null') };
}

const invokeEnrich = (apiKey: string, campaignId: string, remainingMs: number) =>
  invoke(enrichHandler, '/v1/campaigns/enrich', apiKey, { campaignId }, remainingMs);

describe('deadlines of enrich and create', () => {
  it('a launch held past its deadline answers 500 internal_error, stops, and is never charged after the hold is released', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 4));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      activeAccounts(p, 4).map((a) => a.accountId),
      30,
    );
    const held = useTestWarehouse({ holdStatuses: true });
    const ledgerBefore = await ledger().entriesOf(organizationId);

    // 1.5 s of deadline left once the function's 3 s margin is taken off.
    const answer = invokeEnrich(apiKey, campaignId, DEADLINE_MARGIN_MS + 1_500);
    await held.called('getAccountStatuses');
    const res = await answer;
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ data: null, error: { code: 'internal_error', message: 'Internal error.' } });

    // The evaluation's read comes back after the answer: nothing may follow from it.
    held.release();
    await sleep(1_500);
    expect(await balance(organizationId)).toBe(100);
    expect(await ledger().entriesOf(organizationId)).toEqual(ledgerBefore);
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 100, ledgerSum: 100 });
    const campaign = await getCampaign(api(), apiKey, campaignId);
    expect(campaign.data).toMatchObject({ status: 'draft', credits: { charged: 0, remaining: 100 } });

    // The lock was released with the error: a retry launches at once and charges once.
    const retried = await enrich(api(), apiKey, campaignId);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.data).toMatchObject({ status: 'enriching', credits: { charged: 4, remaining: 96 } });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect((await ledgerOf(organizationId, campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('a launch whose deadline has already passed takes no lock and charges nothing', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 2));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      activeAccounts(p, 2).map((a) => a.accountId),
    );
    const res = await invokeEnrich(apiKey, campaignId, DEADLINE_MARGIN_MS - 1_000);
    expect(res.status).toBe(500);
    expect(await balance(organizationId)).toBe(10);
    const again = await enrich(api(), apiKey, campaignId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
  });

  it('a create past its deadline answers 500 internal_error and writes no campaign', async () => {
    const { apiKey } = await newOrganization();
    const res = await invoke(
      createHandler,
      '/v1/campaigns/create',
      apiKey,
      { name: 'Too late', accountIds: ['acc_late_1'] },
      DEADLINE_MARGIN_MS - 1_000,
    );
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
    const listed = await call(api(), '/v1/campaigns/list', { apiKey, body: {} });
    expect(listed.data.campaigns).toEqual([]);
  });

  it('a launch whose lock expired during its evaluation does not commit (enrichment_pending, nothing charged)', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 3));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      activeAccounts(p, 3).map((a) => a.accountId),
    );
    const held = useTestWarehouse({ holdStatuses: true });

    // A 1 s lock, and an evaluation that takes longer than that.
    const launching = enrichCampaign({ ...launchDependencies(organizationId), launchLockSeconds: 1 }, organizationId, campaignId);
    launching.catch(() => undefined);
    await held.called('getAccountStatuses');
    await sleep(1_500);
    held.release();
    await expect(launching).rejects.toBeInstanceOf(EnrichmentPendingError);

    expect(await balance(organizationId)).toBe(10);
    expect((await ledgerOf(organizationId, campaignId)).entries).toEqual([]);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toMatchObject({ status: 'draft', credits: { charged: 0, remaining: 10 } });
    const relaunched = await enrich(api(), apiKey, campaignId);
    expect(relaunched.status, JSON.stringify(relaunched.body)).toBe(200);
    expect(relaunched.data).toMatchObject({ credits: { charged: 3, remaining: 7 } });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
  });
});
