/**
 * The typed client (`client/`, README.md; issue #34) against the local
 * stack: the whole flow create → enrich → waitForEnrichment → export; every
 * operation of the document called through its method (and a pushed
 * campaign.enriched verified with verifyWebhook); the iterators paging to
 * the end; typed errors, with details typed per code; and safe retries: a
 * response lost on the network after the server ran the enrich is retried
 * with the same Idempotency-Key and charges once; a key still in use is
 * retried after `Retry-After`.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CampaignEnrichmentError, createCampaignEnrichmentClient, isApiError, verifyWebhook } from '../client/index';
import { newOrganization, useApi } from './support/api';
import { idempotencyRecords } from '../lib/root';
import { fingerprintOf } from '../lib/idempotency/key';
import { activeAccounts, balance, importAccounts, ledgerOf, uniquePrefix } from './enrichment/support';
import { startReceiver, webhookHeaders } from './webhooks/receiver';
import { OPERATIONS } from '../client/index';
import { API_ROUTES } from '../infra/routes';
import { exampleRequest } from './support/operation-examples';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi({ webhooks: { intervalMs: 50 } });

/** A fetch that records each request (URL, Idempotency-Key) and the answer's replay mark. */
function recordingFetch(options: { dropFirstResponseOf?: string } = {}) {
  const calls: { path: string; idempotencyKey: string | null; status?: number; replayed?: string | null; dropped?: boolean }[] = [];
  let dropped = false;
  const fetchImpl = async (request: Request): Promise<Response> => {
    const entry: (typeof calls)[number] = { path: new URL(request.url).pathname, idempotencyKey: request.headers.get('idempotency-key') };
    calls.push(entry);
    const response = await fetch(request);
    entry.status = response.status;
    entry.replayed = response.headers.get('idempotent-replayed');
    if (!dropped && entry.path === options.dropFirstResponseOf) {
      // The request went through and the server answered; the answer is lost on the way back.
      dropped = true;
      entry.dropped = true;
      await response.body?.cancel();
      throw new TypeError('fetch failed: socket hang up');
    }
    return response;
  };
  return { calls, fetch: fetchImpl };
}

async function organizationWithAccounts(count: number) {
  const org = await newOrganization({ smbCredits: 1_000 });
  const accounts = activeAccounts(uniquePrefix(), count);
  await importAccounts(accounts);
  return { ...org, accountIds: accounts.map((a) => a.accountId) };
}

describe('client', () => {
  it('create → enrich → waitForEnrichment → export', async () => {
    const org = await organizationWithAccounts(4);
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey });
    const described = await client.describeOrganization();
    expect(described.credits.smb).toBe(1_000);

    const campaign = await client.createCampaign({ name: 'Client flow', accountIds: org.accountIds, excludeEnrichedWithinDays: 30 });
    expect(campaign).toMatchObject({ status: 'draft', createdVia: 'api', accounts: { requested: 4, eligible: null } });
    const renamed = await client.updateCampaign({ campaignId: campaign.id, name: 'Client flow, renamed' });
    expect(renamed.name).toBe('Client flow, renamed');

    const launched = await client.enrichCampaign({ campaignId: campaign.id });
    expect(launched).toMatchObject({ status: 'enriching', accounts: { eligible: 4 }, credits: { charged: 4 } });

    const enriched = await client.waitForEnrichment(campaign.id, { timeoutSeconds: 30, intervalSeconds: 0.1 });
    expect(enriched.status).toBe('enriched');
    expect(enriched.results.totalAccounts).toBe(4);
    expect(enriched.completedAt).toEqual(expect.any(String));

    const page = await client.listCampaigns({ filters: { status: 'enriched' } });
    expect(page.campaigns.map((c) => c.id)).toEqual([campaign.id]);

    const exported = await client.exportCampaign({ campaignId: campaign.id, hasEmail: true });
    expect(exported).toMatchObject({
      campaignId: campaign.id,
      rows: { accounts: 4, contacts: 4 },
      file: { format: 'csv', encoding: 'utf-8-bom' },
    });
    const csv = await fetch(exported.url);
    expect(csv.status).toBe(200);
    expect((await csv.text()).split('\r\n').filter(Boolean)).toHaveLength(5);
  });

  it('retries an enrich whose answer was lost with the same Idempotency-Key, and charges once', async () => {
    const org = await organizationWithAccounts(5);
    const recorder = recordingFetch({ dropFirstResponseOf: '/v1/campaigns/enrich' });
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey, fetch: recorder.fetch, initialBackoffMs: 10 });
    const campaign = await client.createCampaign({ name: 'Lossy network', accountIds: org.accountIds });

    const launched = await client.enrichCampaign({ campaignId: campaign.id });
    expect(launched).toMatchObject({ status: 'enriching', credits: { charged: 5 } });

    const enrichCalls = recorder.calls.filter((c) => c.path === '/v1/campaigns/enrich');
    expect(enrichCalls).toHaveLength(2);
    expect(enrichCalls[0]).toMatchObject({ status: 200, dropped: true, replayed: null });
    expect(enrichCalls[1]).toMatchObject({ status: 200, replayed: 'true' });
    expect(enrichCalls[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(enrichCalls[1]!.idempotencyKey).toBe(enrichCalls[0]!.idempotencyKey);
    // A new logical call gets a new key.
    const createCall = recorder.calls.find((c) => c.path === '/v1/campaigns/create')!;
    expect(createCall.idempotencyKey).not.toBe(enrichCalls[0]!.idempotencyKey);

    const ledger = await ledgerOf(org.organizationId, campaign.id);
    expect(ledger.entries.filter((e) => e.kind === 'charge').map((e) => e.amount)).toEqual([-5]);
    expect(await balance(org.organizationId)).toBe(995);
  });

  it('waits Retry-After on 409 idempotency_key_in_use and retries with the same key until the first request’s lock lapses', async () => {
    const org = await organizationWithAccounts(2);
    const recorder = recordingFetch();
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey, fetch: recorder.fetch });
    const campaign = await client.createCampaign({ name: 'Busy key', accountIds: org.accountIds });
    // A first request with this key "died" holding its lock for another 1.5 s.
    const key = randomUUID();
    const now = Date.now();
    await idempotencyRecords().claim({
      organizationId: org.organizationId,
      operationId: 'enrichCampaign',
      key,
      fingerprint: fingerprintOf({ campaignId: campaign.id }),
      token: randomUUID(),
      requestId: 'lost',
      now,
      lockExpiresAt: now + 1_500,
      ttlSeconds: 60,
    });
    const launched = await client.enrichCampaign({ campaignId: campaign.id }, { idempotencyKey: key });
    expect(launched.status).toBe('enriching');
    const enrichCalls = recorder.calls.filter((c) => c.path === '/v1/campaigns/enrich');
    expect(enrichCalls.length).toBeGreaterThanOrEqual(2);
    expect(enrichCalls.slice(0, -1).every((c) => c.status === 409)).toBe(true);
    expect(enrichCalls.at(-1)!.status).toBe(200);
    expect(new Set(enrichCalls.map((c) => c.idempotencyKey))).toEqual(new Set([key]));
  });

  it('exposes the last RateLimit fields; throws a limit whose window resets later than maxRetryAfterSeconds', async () => {
    const org = await newOrganization({ limits: { requests: 5, windowSeconds: 3600, uploadsPerHour: 1 } });
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey });
    expect(client.rateLimit).toBeUndefined();
    await client.describeOrganization();
    expect(client.rateLimit).toMatchObject({ limit: 5, windowSeconds: 3600, remaining: 4 });
    await client.describeLimits();
    expect(client.rateLimit).toMatchObject({ remaining: 3 });
    expect(client.rateLimit!.resetSeconds).toBeGreaterThan(0);

    // Uploads per hour: its Retry-After is up to an hour, more than maxRetryAfterSeconds: thrown, typed.
    await client.createUpload();
    const error = await client.createUpload().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CampaignEnrichmentError);
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, details: { policy: 'uploads', limit: 1, windowSeconds: 3600 } });
    expect((error as CampaignEnrichmentError).retryAfterSeconds).toBeGreaterThan(60);
  });

  it('waits Retry-After on a 429 rate_limited of the request rate, then succeeds in the next window', async () => {
    const org = await newOrganization({ limits: { requests: 1, windowSeconds: 2 } });
    const recorder = recordingFetch();
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey, fetch: recorder.fetch, maxRetries: 5 });
    // Two calls at once in one window of 1 request: one is refused, waits its Retry-After (≤ 2 s) and is answered.
    const [a, b] = await Promise.all([client.describeOrganization(), client.describeOrganization()]);
    expect(a.organization.id).toBe(org.organizationId);
    expect(b.organization.id).toBe(org.organizationId);
    expect(recorder.calls.map((c) => c.status)).toContain(429);
    expect(recorder.calls.filter((c) => c.status === 200)).toHaveLength(2);
  });

  it('unwraps the error envelope into a typed CampaignEnrichmentError', async () => {
    const org = await organizationWithAccounts(1);
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey });
    const error = await client.enrichCampaign({ campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CampaignEnrichmentError);
    expect(error).toMatchObject({ code: 'not_found', status: 404, details: { resource: 'campaign', id: 'camp_7Hq2kXv9LmN3pR5sT8wYz' } });
    expect((error as CampaignEnrichmentError).requestId).toMatch(/^[0-9a-f-]{36}$/);

    const invalid = await client.createCampaign({ name: 'x', accountIds: [] }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: 'invalid_request', status: 400, details: { issues: [expect.stringMatching(/^accountIds: /)] } });

    const unauthorized = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: 'cek_nope' });
    await expect(unauthorized.describeOrganization()).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });

    const draft = await client.createCampaign({ name: 'Never launched', accountIds: ['acc_x'] });
    await expect(client.waitForEnrichment(draft.id, { timeoutSeconds: 5 })).rejects.toMatchObject({ code: 'not_enriching' });
  });

  it('calls every operation of the document against the local stack, and verifies a webhook it receives', async () => {
    const org = await organizationWithAccounts(3);
    const recorder = recordingFetch();
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey, fetch: recorder.fetch });
    const receiver = await startReceiver();
    try {
      expect((await client.describeOrganization()).credits.smb).toBe(1_000);
      const uploadId = await client.uploadAccountIds(`account_id\n${org.accountIds.join('\n')}\n`, { contentType: 'text/csv' });
      const campaign = await client.createCampaign({ name: 'Every operation', accountIdsUploadId: uploadId });
      expect(campaign.accounts.requested).toBe(3);
      await client.updateCampaign({ campaignId: campaign.id, excludeEnrichedWithinDays: 0 });
      expect((await client.quoteCampaign({ campaignId: campaign.id })).outcome).toBe('launchable');
      expect((await client.describeLimits()).requests).toMatchObject({ limit: expect.any(Number), windowSeconds: expect.any(Number) });
      // Never launched: nothing to cancel.
      await expect(client.cancelCampaign({ campaignId: campaign.id })).rejects.toMatchObject({
        code: 'campaign_not_cancelable',
        status: 409,
        details: { status: 'draft' },
      });
      const endpoint = await client.createWebhookEndpoint({ url: receiver.url, events: ['campaign.enriched'] });
      await client.enrichCampaign({ campaignId: campaign.id });
      const enriched = await client.waitForEnrichment(campaign.id, { timeoutSeconds: 30, intervalSeconds: 0.1 });
      expect((await client.getCampaign({ campaignId: campaign.id })).status).toBe('enriched');
      expect((await client.listCampaigns()).campaigns.map((c) => c.id)).toEqual([campaign.id]);
      expect((await client.listCampaignAccounts({ campaignId: campaign.id })).summary.found).toBe(3);
      const { result, csv } = await client.downloadExport({ campaignId: campaign.id });
      expect(result.rows.accounts).toBe(3);
      expect(csv.split('\r\n').filter(Boolean)).toHaveLength(1 + result.rows.contacts);
      expect(csv.charCodeAt(0)).not.toBe(0xfeff);
      expect((await client.listLedger({ filters: { campaignId: campaign.id } })).entries.map((e) => e.kind)).toEqual(['charge']);
      // The audit log (docs/audit.md): the launch above, with the request ID its answer carried.
      expect((await client.listAuditEntries({ filters: { operation: 'enrichCampaign' } })).entries.map((e) => e.campaignId)).toContain(
        campaign.id,
      );
      // Privacy (docs/privacy.md): a suppression made, listed and lifted; an erasure made, read and listed.
      const [suppression] = (
        await client.createSuppressions({ identifiers: [{ type: 'contact_id', value: 'client-suppressed' }], reason: 'opt_out' })
      ).suppressions;
      expect([...(await client.listSuppressions()).suppressions].map((s) => s.id)).toEqual([suppression!.id]);
      expect(await client.deleteSuppression({ id: suppression!.id })).toEqual({ id: suppression!.id, deleted: true });
      const erasure = await client.createErasure({
        identifiers: [{ type: 'contact_id', value: 'client-erased' }],
        regime: 'gdpr',
        requestRef: 'client',
      });
      expect((await client.getErasure({ id: erasure.id })).requestRef).toBe('client');
      expect((await client.listErasures()).erasures.map((e) => e.id)).toEqual([erasure.id]);
      const results = await client.listCampaignResults({ campaignId: campaign.id });
      expect(results).toMatchObject({ campaignId: campaign.id, complete: true, processed: 3, lastSeq: 3 });
      expect(results.accounts.map((a) => a.seq)).toEqual([1, 2, 3]);
      // The stream: one connection's objects, the accounts then `end`, and the attempt in its header.
      const streamed = await client.streamCampaignResults({ campaignId: campaign.id });
      expect(streamed.attemptId).toBe(results.attemptId);
      const objects = [];
      for await (const object of streamed.objects) objects.push(object);
      expect(objects.map((o) => o.type)).toEqual(['account', 'account', 'account', 'end']);
      // The event feed holds the campaign's events, with or without endpoints (docs/events.md).
      const feed = await client.listEvents({ filters: { campaignId: campaign.id, type: 'campaign.enriched' } });
      expect(feed.events.map((e) => e.type)).toEqual(['campaign.enriched']);

      // Keys: a read-only key made, listed, rotated (its new secret works), revoked.
      const made = await client.createKey({ name: 'Read only', scopes: ['org:read'] });
      expect(made.key).toMatchObject({ name: 'Read only', scopes: ['org:read'], revokedAt: null });
      expect((await client.listKeys()).keys.map((k) => k.id)).toContain(made.key.id);
      // Usage: today's requests of this organization, by key (the client's own calls).
      const today = new Date().toISOString().slice(0, 10);
      expect((await client.orgUsage({ from: today, to: today, groupBy: 'key' })).from).toBe(today);
      const renewed = await client.rotateKey({ id: made.key.id });
      const readOnly = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: renewed.secret });
      expect((await readOnly.describeOrganization()).organization.id).toBe(org.organizationId);
      expect((await client.revokeKey({ id: made.key.id })).key.revokedAt).not.toBeNull();

      // The campaign.enriched event, verified with the endpoint's secret and typed by its `type`.
      const [delivered] = await receiver.received(1);
      const event = verifyWebhook(delivered!.body, webhookHeaders(delivered!), [endpoint.secret!]);
      expect(event.type).toBe('campaign.enriched');
      if (event.type === 'campaign.enriched')
        expect(event.data.campaign).toMatchObject({ id: campaign.id, status: 'enriched', results: enriched.results });

      expect((await client.listWebhookEndpoints()).endpoints.map((e) => e.id)).toEqual([endpoint.id]);
      const sent = await client.testWebhookEndpoint({ endpointId: endpoint.id });
      await receiver.received(2);
      const attempts = [];
      for await (const delivery of client.webhookDeliveries({ filters: { endpointId: endpoint.id } })) attempts.push(delivery);
      expect(attempts.map((a) => a.eventType).sort()).toEqual(['campaign.enriched', 'webhook.test']);
      expect((await client.listWebhookDeliveries({ filters: { eventType: 'webhook.test' } })).deliveries[0]?.messageId).toBe(
        sent.messageId,
      );
      expect((await client.redeliverWebhook({ messageId: sent.messageId })).trigger).toBe('redeliver');
      // An operation the flow above does not call yet: its method with its documented example, on this test's resources (a new route needs no line here).
      const calledSoFar = new Set(recorder.calls.map((c) => c.path));
      for (const route of API_ROUTES.filter(
        (r) => !calledSoFar.has(r.operation.path) && r.operation.operationId !== 'deleteWebhookEndpoint',
      )) {
        const method = (client as unknown as Record<string, (body: unknown) => Promise<unknown>>)[route.operation.operationId]!;
        await method(
          exampleRequest(route, {
            ids: { camp_: campaign.id, whe_: endpoint.id, msg_: sent.messageId, era_: erasure.id },
            webhookUrl: receiver.url,
          }),
        );
      }
      const rotated = await client.rotateWebhookSecret({ endpointId: endpoint.id });
      expect(rotated.secret).not.toBe(endpoint.secret);
      expect(await client.deleteWebhookEndpoint({ endpointId: endpoint.id })).toEqual({ id: endpoint.id, deleted: true });
    } finally {
      await receiver.close();
    }
    const called = new Set(recorder.calls.map((c) => c.path));
    expect(API_ROUTES.map((r) => r.operation.path).filter((p) => !called.has(p))).toEqual([]);
    // Operations that honour Idempotency-Key sent one; the others none.
    for (const call of recorder.calls.filter((c) => c.path.startsWith('/v1/'))) {
      const operation = Object.values(OPERATIONS).find((o) => o.path === call.path)!;
      expect(call.idempotencyKey !== null, call.path).toBe(operation.idempotent);
    }
  });

  it('iterates every paginated list to its end, page by page', async () => {
    const org = await organizationWithAccounts(5);
    const recorder = recordingFetch();
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey, fetch: recorder.fetch });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await client.createCampaign({ name: `Page ${i}`, accountIds: [org.accountIds[i]!] }));
    const listed = [];
    for await (const item of client.campaigns({ limit: 2 })) listed.push(item.id);
    expect(listed).toEqual(created.map((c) => c.id).reverse());
    expect(recorder.calls.filter((c) => c.path === '/v1/campaigns/list')).toHaveLength(3);

    const campaign = await client.createCampaign({ name: 'Accounts', accountIds: [...org.accountIds, `${org.accountIds[0]}_missing`] });
    await client.enrichCampaign({ campaignId: campaign.id });
    await client.waitForEnrichment(campaign.id, { timeoutSeconds: 30, intervalSeconds: 0.1 });
    const accounts = [];
    for await (const account of client.campaignAccounts({ campaignId: campaign.id, limit: 2 })) accounts.push(account);
    expect(accounts.map((a) => a.accountId)).toEqual([...org.accountIds, `${org.accountIds[0]}_missing`]);
    expect(recorder.calls.filter((c) => c.path === '/v1/campaigns/accounts')).toHaveLength(3);

    const entries = [];
    for await (const entry of client.ledgerEntries({ limit: 1 })) entries.push(entry);
    expect(entries.map((e) => e.kind)).toEqual(['charge', 'adjustment']);
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(await balance(org.organizationId));

    const audited = [];
    for await (const entry of client.auditEntries({ limit: 1 })) audited.push(entry);
    expect(audited.length).toBeGreaterThan(1);
    expect(new Set(audited.map((e) => e.id)).size).toBe(audited.length);

    const none = [];
    for await (const delivery of client.webhookDeliveries()) none.push(delivery);
    expect(none).toEqual([]);
  });

  it('types the details of each error code', async () => {
    const org = await newOrganization({ smbCredits: 1 });
    const accounts = activeAccounts(uniquePrefix(), 3);
    await importAccounts(accounts);
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey: org.apiKey });
    const campaign = await client.createCampaign({ name: 'Too few credits', accountIds: accounts.map((a) => a.accountId) });
    const error = await client.enrichCampaign({ campaignId: campaign.id }).catch((e: unknown) => e);
    expect(isApiError(error, 'insufficient_credits')).toBe(true);
    if (isApiError(error, 'insufficient_credits')) expect(error.details).toEqual({ available: 1, required: 3, shortfall: 2 });
    expect(isApiError(error, 'not_found')).toBe(false);
  });

  it('gives up with network_error after its retries when the API cannot be reached', async () => {
    const client = createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'cek_x', maxRetries: 1, initialBackoffMs: 1 });
    await expect(client.describeOrganization()).rejects.toMatchObject({ code: 'network_error', status: 0 });
  });
});
