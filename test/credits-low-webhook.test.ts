/**
 * `organization.credits_low` delivered (docs/webhooks.md, docs/limits.md): an endpoint
 * subscribed to it receives, signed, `{type, timestamp, data:{organization:
 * {id}, credits:{smb, threshold}}}` for the launch that takes the balance
 * below the threshold; an endpoint not subscribed to it receives nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call, newOrganization, useApi } from './support/api';
import { activeAccounts, createApiCampaign, enrich, importAccounts, uniquePrefix } from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver } from './webhooks/receiver';
import { opsJson } from './support/ops';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi({ webhooks: { intervalMs: 100 } });
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

describe('organization.credits_low', () => {
  it('is delivered, signed, with the organization and the balance the charge left, to the endpoints subscribed to it', async () => {
    const org = await newOrganization({ smbCredits: 6, limits: { lowBalanceThreshold: 5 } });
    const [subscribed, other] = [await startReceiver(), await startReceiver()];
    receivers.push(subscribed, other);
    const created = await call(api(), '/v1/webhooks/create', {
      apiKey: org.apiKey,
      body: { url: subscribed.url, events: ['organization.credits_low'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.data.events).toEqual(['organization.credits_low']);
    const unsubscribed = await call(api(), '/v1/webhooks/create', {
      apiKey: org.apiKey,
      body: { url: other.url, events: ['campaign.expired'] },
    });
    expect(unsubscribed.status).toBe(200);

    const list = activeAccounts(uniquePrefix(), 2);
    await importAccounts(list);
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      list.map((a) => a.accountId),
    );
    expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);

    const [request] = await subscribed.received(1);
    const payload = new Webhook(created.data.secret).verify(request!.body, webhookHeaders(request!)) as Record<string, unknown>;
    expect(payload).toEqual({
      type: 'organization.credits_low',
      timestamp: expect.any(String),
      data: { organization: { id: org.organizationId }, credits: { smb: 4, threshold: 5 } },
    });
    // The event was fanned out (the subscribed endpoint has it): the other endpoint got no message of it.
    const log = await call(api(), '/v1/webhooks/deliveries', { apiKey: org.apiKey, body: {} });
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.data.deliveries.map((d: { endpointId: string; eventType: string }) => [d.endpointId, d.eventType])).toEqual([
      [created.data.id, 'organization.credits_low'],
    ]);
    expect(other.requests).toEqual([]);
  });

  it("a test twin's event names the live organization's ID; the threshold is set with org:limits --test and leaves the live limits alone", async () => {
    const live = await newOrganization({ smbCredits: 50 });
    const { apiKey: testKey } = await opsJson(['key:create', '--org', live.organizationId, '--test']);
    const twinCredits = (await call(api(), '/v1/org/describe', { apiKey: testKey })).data.credits.smb as number;
    const limits = await opsJson(['org:limits', '--org', live.organizationId, '--test', '--low-balance', String(twinCredits - 1)]);
    expect(limits.lowBalanceThreshold).toBe(twinCredits - 1);
    expect((await call(api(), '/v1/org/limits', { apiKey: live.apiKey })).data.lowBalanceThreshold).toBeNull();
    const receiver = await startReceiver();
    receivers.push(receiver);
    const created = await call(api(), '/v1/webhooks/create', {
      apiKey: testKey,
      body: { url: receiver.url, events: ['organization.credits_low'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const campaignId = await createApiCampaign(
      api(),
      testKey,
      [0, 1, 2].map((i) => `test_found_${uniquePrefix()}_${i}`),
    );
    expect((await enrich(api(), testKey, campaignId)).status).toBe(200);
    const [request] = await receiver.received(1);
    const payload = new Webhook(created.data.secret).verify(request!.body, webhookHeaders(request!)) as Record<string, unknown>;
    expect(payload).toEqual({
      type: 'organization.credits_low',
      timestamp: expect.any(String),
      data: { organization: { id: live.organizationId }, credits: { smb: twinCredits - 3, threshold: twinCredits - 1 } },
    });
  });
});
