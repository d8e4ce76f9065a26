/**
 * The customer cancels (docs/launch.md#canceling), through HTTP against the local stack:
 * a cancel while enriching refunds the whole charge on the ledger, releases
 * capacity, records `lastEnrichment`, emits `campaign.enrichment_canceled`
 * and stops the execution; a repeated cancel answers the same campaign and
 * moves nothing; a cancel racing completion at random moments leaves the
 * money exact whichever wins (fast-check); another organization's campaign
 * is 404 and a draft 409 `campaign_not_cancelable`. The operator's
 * `campaign:cancel` runs the same use case.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { campaignEvent } from '../lib/webhooks/events';
import {
  campaigns,
  cancelDependencies,
  ledger,
  organizations,
  reconcileDependencies,
  reconcileEnrichments,
  webhooks,
  workflow,
} from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  describeOrg,
  enrich,
  expectError,
  getCampaign,
  importAccounts,
  NO_ERASURE,
  ISO_UTC,
  ledgerOf,
  pollUntil,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

const CANCEL = '/v1/campaigns/cancel';
const cancel = (apiKey: string, campaignId: string, headers?: Record<string, string>) =>
  call(api(), CANCEL, { apiKey, body: { campaignId }, ...(headers ? { headers } : {}) });

/** A campaign of `count` active accounts (one contact each), created by the API in a fresh organization. */
async function draftCampaign(count: number, credits = 100) {
  const accounts = activeAccounts(uniquePrefix(), count);
  await importAccounts(accounts, NO_ERASURE);
  const org = await newOrganization({ smbCredits: credits, maxEnrichingAccounts: 1_000 });
  const campaignId = await createApiCampaign(
    api(),
    org.apiKey,
    accounts.map((a) => a.accountId),
  );
  return { ...org, campaignId };
}

describe('POST /v1/campaigns/cancel', () => {
  it('cancels while enriching: whole refund on the ledger, capacity released, lastEnrichment, the event, the execution stopped', async () => {
    const { organizationId, apiKey, campaignId } = await draftCampaign(3, 50);
    const held = useTestWarehouse({ holdAccounts: true });
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    await held.called('getAccounts');
    const attempt = (await campaigns().get(organizationId, campaignId))!.attempt!;
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(3);

    const res = await cancel(apiKey, campaignId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected = {
      ...launched.data,
      status: 'draft',
      credits: { charged: 0, remaining: 50 },
      lastEnrichment: { status: 'canceled', startedAt: attempt.startedAt, endedAt: expect.stringMatching(ISO_UTC), refunded: true },
    };
    expect(res.data).toEqual(expected);
    // The answer is the campaign after the cancel: get shows the same.
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(res.data);

    const { entries, charged } = await ledgerOf(organizationId, campaignId);
    expect(entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([
      ['charge', 'launch', -3],
      ['refund', 'canceled', 3],
    ]);
    expect(charged).toBe(0);
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 50, ledgerSum: 50 });
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    expect(await workflow().status(attempt.executionArn)).toBe('ABORTED');

    const eventId = campaignEvent(
      'campaign.enrichment_canceled',
      { ...(await campaigns().get(organizationId, campaignId))!, organizationId },
      attempt.id,
      '',
    ).id;
    const event = await webhooks().getEvent(organizationId, eventId);
    expect(event).toMatchObject({
      type: 'campaign.enrichment_canceled',
      campaign: { id: campaignId, status: 'draft', lastEnrichment: { status: 'canceled', refunded: true } },
    });

    // The held contact read returns: the stopped execution completes nothing and refunds nothing again.
    held.release();
    await sleep(300);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(res.data);
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(2);
  });

  it('a repeated cancel answers the same campaign and refunds nothing again; with Idempotency-Key it is a replay', async () => {
    const { organizationId, apiKey, campaignId } = await draftCampaign(2, 20);
    useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);

    const first = await cancel(apiKey, campaignId, { 'Idempotency-Key': 'cancel-1' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await cancel(apiKey, campaignId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.data).toEqual(first.data);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const replay = await cancel(apiKey, campaignId, { 'Idempotency-Key': 'cancel-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data).toEqual(first.data);
    // The operator's command runs the same use case: a retry after a lost answer prints the same.
    expect(await cancelEnrichment(cancelDependencies(), campaignId)).toEqual({ campaignId, status: 'canceled' });

    const { entries } = await ledgerOf(organizationId, campaignId);
    expect(entries.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 20, ledgerSum: 20 });
    expect((await organizations().get(organizationId))!.enrichingAccounts).toBe(0);
  });

  it("another organization's campaign, or an unknown one: 404 not_found, nothing changes", async () => {
    const { apiKey: ownerKey, campaignId } = await draftCampaign(2, 20);
    useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), ownerKey, campaignId)).status).toBe(200);
    const other = await newOrganization();
    expectError(await cancel(other.apiKey, campaignId), 404, 'not_found', { resource: 'campaign', id: campaignId });
    expectError(await cancel(ownerKey, 'camp_111111111111111111111'), 404, 'not_found', {
      resource: 'campaign',
      id: 'camp_111111111111111111111',
    });
    expect((await getCampaign(api(), ownerKey, campaignId)).data).toMatchObject({
      status: 'enriching',
      credits: { charged: 2, remaining: 18 },
    });
  });

  it('a draft that never launched, and a campaign that finished first: 409 campaign_not_cancelable with details.status', async () => {
    const { organizationId, apiKey, campaignId } = await draftCampaign(2, 20);
    expectError(await cancel(apiKey, campaignId), 409, 'campaign_not_cancelable', { status: 'draft' });
    // Saved under its key like the other business refusals (docs/idempotency.md).
    const keyed = await cancel(apiKey, campaignId, { 'Idempotency-Key': 'not-cancelable' });
    expectError(keyed, 409, 'campaign_not_cancelable', { status: 'draft' });
    expect((await cancel(apiKey, campaignId, { 'Idempotency-Key': 'not-cancelable' })).headers.get('idempotent-replayed')).toBe('true');

    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expectError(await cancel(apiKey, campaignId), 409, 'campaign_not_cancelable', { status: 'enriched' });
    await expect(cancelEnrichment(cancelDependencies(), campaignId)).rejects.toMatchObject({ code: 'campaign_not_cancelable' });
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 18, ledgerSum: 18 });
  });

  it('racing the reconciler, another cancel and a repeat enrich: one refund, every cancel answers the canceled campaign', async () => {
    const { organizationId, apiKey, campaignId } = await draftCampaign(3, 30);
    const held = useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    await held.called('getAccounts');
    const [a, b, repeat] = await Promise.all([
      cancel(apiKey, campaignId),
      cancel(apiKey, campaignId),
      enrich(api(), apiKey, campaignId),
      // The reconciler finishes a cancel it finds requested (lib/enrichment/reconcile.ts).
      pollUntil(
        () => campaigns().get(organizationId, campaignId),
        (c) => Boolean(c?.cancelRequestedAt) || c?.status === 'draft',
        { intervalMs: 5 },
      ).then(() => reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId })),
    ]);
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
    expect(b.data).toEqual(a.data);
    expect(a.data).toMatchObject({
      status: 'draft',
      credits: { charged: 0, remaining: 30 },
      lastEnrichment: { status: 'canceled', refunded: true },
    });
    // The repeat enrich saw it running (200) or already back in draft (a new launch, 200): never an error.
    expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
    held.release();
    const final = await pollUntil(
      () => getCampaign(api(), apiKey, campaignId),
      (r) => r.data.status === 'draft' || r.data.status === 'enriched',
    );
    const refunds = (await ledgerOf(organizationId, campaignId)).entries.filter((e) => e.reason === 'canceled');
    expect(refunds).toHaveLength(1);
    const net = final.data.status === 'enriched' ? 3 : 0;
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 30 - net, ledgerSum: 30 - net });
    expect((await organizations().get(organizationId))!.enrichingAccounts).toBe(0);
  });

  it('a bad body: 400 invalid_request naming the field', async () => {
    const { apiKey } = await newOrganization();
    const res = await call(api(), CANCEL, { apiKey, body: { campaignId: 'nope' } });
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe('invalid_request');
    expect(res.error?.details.issues.join(' ')).toMatch(/campaignId/);
  });

  it('racing completion at random moments: exactly one wins and the money is exact either way (fast-check)', async () => {
    const ACCOUNTS = 3;
    const CREDITS = 30;
    let canceled = 0;
    let completed = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_500 }), async (delayMs) => {
        const { organizationId, apiKey, campaignId } = await draftCampaign(ACCOUNTS, CREDITS);
        expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
        await sleep(delayMs);
        const res = await cancel(apiKey, campaignId);
        if (res.status === 200) {
          canceled++;
          expect(res.data).toMatchObject({
            status: 'draft',
            credits: { charged: 0, remaining: CREDITS },
            lastEnrichment: { status: 'canceled', refunded: true },
          });
        } else {
          completed++;
          expectError(res, 409, 'campaign_not_cancelable', { status: 'enriched' });
        }
        const final = await pollUntil(
          () => getCampaign(api(), apiKey, campaignId),
          (r) => r.data.status === 'draft' || r.data.status === 'enriched',
        );
        const net = res.status === 200 ? 0 : ACCOUNTS;
        expect(final.data.status).toBe(res.status === 200 ? 'draft' : 'enriched');
        expect(final.data.credits).toEqual({ charged: net, remaining: CREDITS - net });
        expect((await ledgerOf(organizationId, campaignId)).charged).toBe(net);
        expect(await ledger().audit(organizationId)).toMatchObject({ balance: CREDITS - net, ledgerSum: CREDITS - net });
        expect((await organizations().get(organizationId))!.enrichingAccounts).toBe(0);
      }),
      { numRuns: 12 },
    );
    // Both outcomes were reached (a cancel at once always wins; one after 1.5 s almost always finds it enriched).
    expect(canceled).toBeGreaterThan(0);
    expect(canceled + completed).toBe(12);
  });
});
