/**
 * Signed webhooks (docs/webhooks.md), end to end through HTTP against the local
 * stack: events recorded with the state changes, fanned out and delivered by
 * the local schedule (the same delivery code as AWS) to a real receiver on
 * 127.0.0.1, verified with the `standardwebhooks` library; the delivery log,
 * redelivery, 410, rotation, SSRF refusals, isolation and the endpoint limit.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as tableKeys from '../lib/db/keys';
import { Webhook } from 'standardwebhooks';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { campaigns, endpointSecretAnswer, enrichment, idempotencyRecords, useWebhookResolver, webhooks, workflow } from '../lib/root';
import type { ResolvedAddress } from '../lib/webhooks/ssrf';
import { SUBSCRIBABLE_EVENT_TYPES } from '../lib/webhooks/events';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import {
  account,
  contact,
  createApiCampaign,
  enrich,
  expectError,
  getCampaign,
  importAccounts,
  pollUntil,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver, type Reply } from './webhooks/receiver';

// The local stack's settings for a receiver on this machine, and a fast retry schedule (0.2 s, 0.4 s, …).
process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.2';

const api = useApi({ webhooks: { intervalMs: 100 } });
const useTestWarehouse = useTestWarehouses();

const W = {
  create: '/v1/webhooks/create',
  list: '/v1/webhooks/list',
  delete: '/v1/webhooks/delete',
  rotate: '/v1/webhooks/rotate-secret',
  test: '/v1/webhooks/test',
  deliveries: '/v1/webhooks/deliveries',
  redeliver: '/v1/webhooks/redeliver',
};

const receivers: Receiver[] = [];
async function receiver(replies?: Reply[]): Promise<Receiver> {
  const started = await startReceiver(replies);
  receivers.push(started);
  return started;
}
afterEach(async () => {
  useWebhookResolver(undefined);
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function createEndpoint(
  apiKey: string,
  body: Record<string, unknown>,
): Promise<{ id: string; secret: string; url: string; events: string[]; createdAt: string }> {
  const res = await call(api(), W.create, { apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.data;
}

/** Polls the delivery log until `done` holds for its entries. */
async function deliveriesUntil(apiKey: string, body: Record<string, unknown>, done: (deliveries: any[]) => boolean): Promise<any[]> {
  const res = await pollUntil(
    () => call(api(), W.deliveries, { apiKey, body }),
    (r: ApiResponse) => r.status === 200 && done(r.data.deliveries),
  );
  return res.data.deliveries;
}

/** Three accounts with contacts in the warehouse; returns their IDs. */
async function warehouseAccounts(): Promise<string[]> {
  const p = uniquePrefix();
  const accounts = [0, 1, 2].map((i) => account(`${p}_${i}`, 'active', [contact(`${p}_${i}_c`, { mobile: i === 0 })]));
  await importAccounts(accounts);
  return accounts.map((a) => a.accountId);
}

describe('campaign events', () => {
  it('delivers campaign.enriched after a run, signed so that standardwebhooks verifies it with the secret from create, with one webhook-id on every retry', async () => {
    const { apiKey } = await newOrganization();
    const hook = await receiver([
      { status: 503, body: 'busy' },
      { status: 200, body: 'ok' },
    ]);
    // Without `events` an endpoint receives every subscribable event (another organization's, so none reaches it here).
    const everything = await createEndpoint((await newOrganization()).apiKey, { url: hook.url });
    expect(everything.events).toEqual([...SUBSCRIBABLE_EVENT_TYPES]);
    // This one takes the campaign's lifecycle only: a per-batch campaign.accounts_processed would take the scripted 503.
    const lifecycle = ['campaign.enriched', 'campaign.enrichment_failed', 'campaign.enrichment_canceled', 'campaign.expired'];
    const endpoint = await createEndpoint(apiKey, { url: hook.url, description: 'CRM sync', events: lifecycle });
    expect(endpoint).toMatchObject({
      id: expect.stringMatching(/^whe_[1-9A-HJ-NP-Za-km-z]{21}$/),
      url: hook.url,
      events: lifecycle,
      description: 'CRM sync',
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const campaignId = await createApiCampaign(api(), apiKey, await warehouseAccounts());
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    const enriched = await waitForStatus(api(), apiKey, campaignId, 'enriched');

    const [first, second] = await hook.received(2);
    for (const request of [first!, second!]) {
      expect(() => new Webhook(endpoint.secret).verify(request.body, webhookHeaders(request))).not.toThrow();
      expect(request.headers['content-type']).toBe('application/json');
    }
    expect(first!.headers['webhook-id']).toMatch(/^msg_[1-9A-HJ-NP-Za-km-z]{21}$/);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    const event = JSON.parse(first!.body);
    expect(Object.keys(event)).toEqual(['type', 'timestamp', 'data']);
    expect(event).toEqual({
      type: 'campaign.enriched',
      timestamp: enriched.completedAt,
      data: { campaign: (await getCampaign(api(), apiKey, campaignId)).data },
    });
    expect(event.data.campaign).toMatchObject({ id: campaignId, status: 'enriched', results: { totalAccounts: 3, totalContactsFound: 3 } });
    // Another secret does not verify it.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(first!.body, webhookHeaders(first!))).toThrow();

    const log = await deliveriesUntil(apiKey, { filters: { endpointId: endpoint.id } }, (d) => d.length === 2);
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus, d.eventType, d.messageId])).toEqual([
      [2, 'succeeded', 200, 'campaign.enriched', first!.headers['webhook-id']],
      [1, 'failed', 503, 'campaign.enriched', first!.headers['webhook-id']],
    ]);
  });

  it('sends campaign.enrichment_failed, campaign.enrichment_canceled and campaign.expired to the endpoints subscribed to each, and nothing else', async () => {
    const { apiKey } = await newOrganization();
    const ends = await receiver();
    const expiry = await receiver();
    await createEndpoint(apiKey, { url: ends.url, events: ['campaign.enrichment_failed', 'campaign.enrichment_canceled'] });
    await createEndpoint(apiKey, { url: expiry.url, events: ['campaign.expired'] });
    const ids = await warehouseAccounts();

    useTestWarehouse({ failAccounts: true });
    const failed = await createApiCampaign(api(), apiKey, ids);
    expect((await enrich(api(), apiKey, failed)).status).toBe(200);
    await ends.received(1);

    const held = useTestWarehouse({ holdAccounts: true });
    const canceled = await createApiCampaign(api(), apiKey, ids);
    expect((await enrich(api(), apiKey, canceled)).status).toBe(200);
    await held.called('getAccounts');
    expect(await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, canceled)).toMatchObject({
      status: 'canceled',
    });
    held.release();
    await ends.received(2);
    useTestWarehouse();

    const previousPeriod = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    process.env.RESULTS_ACCESS_PERIOD_SECONDS = '2';
    let expiring: string;
    try {
      expiring = await createApiCampaign(api(), apiKey, ids);
      expect((await enrich(api(), apiKey, expiring)).status).toBe(200);
      await waitForStatus(api(), apiKey, expiring, 'enriched');
    } finally {
      if (previousPeriod === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
      else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previousPeriod;
    }
    await expiry.received(1);

    const [failedEvent, canceledEvent] = ends.requests.map((r) => JSON.parse(r.body));
    expect(failedEvent).toMatchObject({
      type: 'campaign.enrichment_failed',
      data: { campaign: { id: failed, status: 'draft', credits: { charged: 0 }, lastEnrichment: { status: 'failed', refunded: true } } },
    });
    expect(failedEvent.timestamp).toBe(failedEvent.data.campaign.lastEnrichment.endedAt);
    expect(canceledEvent).toMatchObject({
      type: 'campaign.enrichment_canceled',
      data: { campaign: { id: canceled, status: 'draft', lastEnrichment: { status: 'canceled', refunded: true } } },
    });
    const expiredEvent = JSON.parse(expiry.requests[0]!.body);
    expect(expiredEvent).toMatchObject({ type: 'campaign.expired', data: { campaign: { id: expiring!, status: 'expired' } } });
    expect(expiredEvent.data.campaign.results).toBeUndefined();
    expect(Date.parse(expiredEvent.timestamp)).toBeGreaterThanOrEqual(Date.parse(expiredEvent.data.campaign.resultsExpireAt));
    // Neither endpoint got an event it did not subscribe to (the enriched event of the third campaign went nowhere).
    expect(ends.requests).toHaveLength(2);
    expect(expiry.requests).toHaveLength(1);
  });
});

describe('delivery log and redelivery', () => {
  it('logs three attempts of a receiver that fails twice then succeeds, with one webhook-id; redeliver sends the message again with the same webhook-id', async () => {
    const { apiKey } = await newOrganization();
    const hook = await receiver([
      { status: 500, body: 'boom' },
      { status: 302, body: '', headers: { location: 'https://example.com/' } },
      { status: 200, body: 'x'.repeat(5_000) },
    ]);
    const endpoint = await createEndpoint(apiKey, { url: hook.url });
    const sent = await call(api(), W.test, { apiKey, body: { endpointId: endpoint.id } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.data).toEqual({ messageId: expect.stringMatching(/^msg_/), eventType: 'webhook.test' });
    const messageId = sent.data.messageId;

    await hook.received(3);
    expect(hook.requests.map((r) => r.headers['webhook-id'])).toEqual([messageId, messageId, messageId]);
    expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } });

    const log = await deliveriesUntil(apiKey, {}, (d) => d.length === 3);
    expect(log.map((d) => [d.attempt, d.trigger, d.status, d.responseStatus, d.error])).toEqual([
      [3, 'scheduled', 'succeeded', 200, null],
      [2, 'scheduled', 'failed', 302, 'redirect (302) not followed'],
      [1, 'scheduled', 'failed', 500, null],
    ]);
    expect(log[2]).toMatchObject({
      messageId,
      endpointId: endpoint.id,
      eventType: 'webhook.test',
      responseBody: 'boom',
      nextAttemptAt: expect.any(String),
    });
    expect(log[0].responseBody).toBe('x'.repeat(1_024));
    expect(log[0].nextAttemptAt).toBeNull();
    for (const delivery of log) {
      expect(delivery.id).toMatch(/^whd_/);
      expect(delivery.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(delivery.attemptedAt)).not.toBeNaN();
    }

    // Filters, and pages that follow nextCursor.
    const failures = (await call(api(), W.deliveries, { apiKey, body: { filters: { status: 'failed', endpointId: endpoint.id } } })).data
      .deliveries;
    expect(failures.map((d: any) => d.attempt)).toEqual([2, 1]);
    expect((await call(api(), W.deliveries, { apiKey, body: { filters: { eventType: 'campaign.enriched' } } })).data).toEqual({
      deliveries: [],
      nextCursor: null,
    });
    const pages: number[][] = [];
    let cursor: string | undefined;
    do {
      const page = await call(api(), W.deliveries, { apiKey, body: { limit: 2, ...(cursor ? { cursor } : {}) } });
      expect(page.status).toBe(200);
      pages.push(page.data.deliveries.map((d: any) => d.attempt));
      cursor = page.data.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual([[3, 2], [1]]);
    const first = await call(api(), W.deliveries, { apiKey, body: { limit: 2 } });
    expectError(
      await call(api(), W.deliveries, { apiKey, body: { limit: 2, cursor: first.data.nextCursor, filters: { status: 'failed' } } }),
      400,
      'invalid_request',
    );
    const form = await call(api(), W.deliveries, { apiKey, form: new URLSearchParams({ 'filters[status]': 'succeeded', limit: '5' }) });
    expect(form.data.deliveries.map((d: any) => d.attempt)).toEqual([3]);

    // Redelivery by message and by any delivery of it: same webhook-id, same body, a fresh signature.
    hook.script([{ status: 200, body: 'again' }]);
    const again = await call(api(), W.redeliver, { apiKey, body: { messageId } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.data).toMatchObject({
      messageId,
      attempt: 4,
      trigger: 'redeliver',
      status: 'succeeded',
      responseStatus: 200,
      responseBody: 'again',
      nextAttemptAt: null,
    });
    const byDelivery = await call(api(), W.redeliver, { apiKey, body: { deliveryId: log[2].id } });
    expect(byDelivery.data).toMatchObject({ messageId, attempt: 5, trigger: 'redeliver', status: 'succeeded' });
    expect(hook.requests).toHaveLength(5);
    for (const request of hook.requests.slice(3)) {
      expect(request.headers['webhook-id']).toBe(messageId);
      expect(request.body).toBe(hook.requests[0]!.body);
    }
    const log5 = (await call(api(), W.deliveries, { apiKey, body: {} })).data.deliveries;
    expect(log5.map((d: any) => [d.attempt, d.trigger])).toEqual([
      [5, 'redeliver'],
      [4, 'redeliver'],
      [3, 'scheduled'],
      [2, 'scheduled'],
      [1, 'scheduled'],
    ]);

    const both = await call(api(), W.redeliver, { apiKey, body: { messageId, deliveryId: log[2].id } });
    expectError(both, 400, 'invalid_request');
    expect(both.error?.details?.issues).toEqual([expect.stringMatching(/^deliveryId: send exactly one of messageId and deliveryId/)]);
    expect((await call(api(), W.redeliver, { apiKey, body: {} })).error?.details?.issues).toEqual([expect.stringMatching(/^messageId:/)]);
    expectError(await call(api(), W.redeliver, { apiKey, body: { messageId: 'msg_111111111111111111111' } }), 404, 'not_found');
  });

  it('disables an endpoint that answers 410 Gone and stops retrying its message', async () => {
    const { apiKey } = await newOrganization();
    const hook = await receiver([{ status: 410, body: 'gone' }]);
    const endpoint = await createEndpoint(apiKey, { url: hook.url });
    expect((await call(api(), W.test, { apiKey, body: { endpointId: endpoint.id } })).status).toBe(200);
    await hook.received(1);
    const [delivery] = await deliveriesUntil(apiKey, {}, (d) => d.length === 1);
    expect(delivery).toMatchObject({ attempt: 1, status: 'failed', responseStatus: 410, responseBody: 'gone', nextAttemptAt: null });
    const listed = await pollUntil(
      () => call(api(), W.list, { apiKey }),
      (r) => r.data.endpoints[0]?.status === 'disabled',
    );
    expect(listed.data.endpoints).toEqual([
      {
        id: endpoint.id,
        url: hook.url,
        events: endpoint.events,
        description: null,
        createdAt: expect.any(String),
        status: 'disabled',
        disabledAt: expect.any(String),
      },
    ]);

    // Redelivery to the disabled endpoint: 409 webhook_endpoint_disabled, nothing sent, nothing logged (issue #31).
    const refused = await call(api(), W.redeliver, { apiKey, body: { messageId: delivery.messageId } });
    expectError(refused, 409, 'webhook_endpoint_disabled', { id: endpoint.id });
    expectError(await call(api(), W.redeliver, { apiKey, body: { deliveryId: delivery.id } }), 409, 'webhook_endpoint_disabled', {
      id: endpoint.id,
    });
    expect(hook.requests).toHaveLength(1);
    expect((await call(api(), W.deliveries, { apiKey, body: {} })).data.deliveries).toHaveLength(1);
  });
});

describe('secret rotation', () => {
  it('answers the rotated endpoint even when it is deleted right after the rotation (no read-back of a gone item)', async () => {
    const { apiKey, organizationId } = await newOrganization();
    const endpoint = await createEndpoint(apiKey, { url: (await receiver()).url });
    const key = tableKeys.webhookEndpoint(organizationId, endpoint.id);
    const name = 'deleteAfterRotation';
    // Once the rotation's write succeeds, the endpoint is deleted before the use case answers (a webhooks/delete racing it).
    ddb.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const text = JSON.stringify(args.input);
        if (text.includes(key.pk) && text.includes(':c_secret'))
          await ddb.send(new DeleteCommand({ TableName: config.tableName, Key: key }));
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      const rotated = await call(api(), W.rotate, { apiKey, body: { endpointId: endpoint.id } });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.data).toMatchObject({ id: endpoint.id, url: endpoint.url, events: endpoint.events, createdAt: endpoint.createdAt });
      expect(rotated.data.secret).toMatch(/^whsec_/);
      expect(rotated.data.secret).not.toBe(endpoint.secret);
    } finally {
      ddb.middlewareStack.remove(name);
    }
    expect((await ddb.send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))).Item).toBeUndefined();
  });

  it('signs with both secrets for the overlap after rotate-secret, each signature verifying with its own secret', async () => {
    const { apiKey } = await newOrganization();
    const hook = await receiver();
    const endpoint = await createEndpoint(apiKey, { url: hook.url });
    const rotated = await call(api(), W.rotate, { apiKey, body: { endpointId: endpoint.id } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const { secret, previousSecretExpiresAt } = rotated.data;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(endpoint.secret);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(rotated.data).toMatchObject({ id: endpoint.id, url: hook.url, events: endpoint.events });

    expect((await call(api(), W.test, { apiKey, body: { endpointId: endpoint.id } })).status).toBe(200);
    const [request] = await hook.received(1);
    const headers = webhookHeaders(request!);
    const signatures = headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    expect(() => new Webhook(secret).verify(request!.body, headers)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(request!.body, headers)).not.toThrow();
    // The first signature is the new secret's, the second the previous one's.
    const only = (signature: string) => ({ ...headers, 'webhook-signature': signature });
    expect(() => new Webhook(secret).verify(request!.body, only(signatures[0]!))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(request!.body, only(signatures[1]!))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(request!.body, only(signatures[0]!))).toThrow();
    // Secrets are never listed.
    expect(JSON.stringify((await call(api(), W.list, { apiKey })).body)).not.toMatch(/whsec_/);
  });

  it('saved answers hold no secret: a replay of create or rotate-secret shows it exactly as long as it still signs (docs/idempotency.md)', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const hook = await receiver();
    const body = { url: hook.url };
    const created = await call(api(), W.create, { apiKey, body, headers: { 'Idempotency-Key': 'create-1' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { secret } = created.data;
    expect(secret).toMatch(/^whsec_/);
    // Stored: the answer without the secret.
    const record = await idempotencyRecords().claim({
      organizationId,
      operationId: 'createWebhookEndpoint',
      key: 'create-1',
      fingerprint: 'x',
      token: 'probe',
      requestId: 'probe',
      now: Date.now(),
      lockExpiresAt: Date.now(),
      ttlSeconds: 60,
    });
    expect(record.ok).toBe(false);
    expect(JSON.stringify(record)).not.toContain(secret);

    // Before rotation the replay is the first answer, secret included.
    const replayed = await call(api(), W.create, { apiKey, body, headers: { 'Idempotency-Key': 'create-1' } });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(created.body);

    const rotated = await call(api(), W.rotate, {
      apiKey,
      body: { endpointId: created.data.id },
      headers: { 'Idempotency-Key': 'rotate-1' },
    });
    expect(rotated.status).toBe(200);
    // Rotated once, the create's secret still signs (the previous secret's 24 h): its replay still carries it.
    const afterRotation = await call(api(), W.create, { apiKey, body, headers: { 'Idempotency-Key': 'create-1' } });
    expect(afterRotation.headers.get('idempotent-replayed')).toBe('true');
    expect(afterRotation.body).toEqual(created.body);
    const endpoint = await webhooks().getEndpoint(organizationId, created.data.id);
    expect(endpoint?.previousSecret).toBe(secret);
    // Once those 24 h have passed it no longer signs, and the same saved answer replays without it.
    const saved = endpointSecretAnswer(() => ({ webhooks: webhooks() })).toSaved(created.data);
    const afterOverlap = await endpointSecretAnswer(() => ({ webhooks: webhooks() })).fromSaved(
      saved,
      { organizationId },
      new Date(Date.parse(endpoint!.previousSecretExpiresAt!) + 1_000),
    );
    const { secret: _shown, ...withoutSecret } = created.data;
    expect(afterOverlap).toEqual(withoutSecret);
    // The rotation's own replay shows its secret while it is current.
    expect(
      (await call(api(), W.rotate, { apiKey, body: { endpointId: created.data.id }, headers: { 'Idempotency-Key': 'rotate-1' } })).data
        .secret,
    ).toBe(rotated.data.secret);
    // Rotated again: the create's secret is rotated out (no longer signs), the first rotation's is the previous one.
    expect((await call(api(), W.rotate, { apiKey, body: { endpointId: created.data.id } })).status).toBe(200);
    const createReplay = await call(api(), W.create, { apiKey, body, headers: { 'Idempotency-Key': 'create-1' } });
    expect(createReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(createReplay.data).toEqual(withoutSecret);
    expect(JSON.stringify(createReplay.body)).not.toMatch(/whsec_/);
    const rotateReplay = await call(api(), W.rotate, {
      apiKey,
      body: { endpointId: created.data.id },
      headers: { 'Idempotency-Key': 'rotate-1' },
    });
    expect(rotateReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(rotateReplay.data).toMatchObject({
      id: created.data.id,
      secret: rotated.data.secret,
      previousSecretExpiresAt: rotated.data.previousSecretExpiresAt,
    });
    // Deleted: nothing signs any more, and no replay shows a secret.
    expect((await call(api(), W.delete, { apiKey, body: { endpointId: created.data.id } })).status).toBe(200);
    const rotateAfterDelete = await call(api(), W.rotate, {
      apiKey,
      body: { endpointId: created.data.id },
      headers: { 'Idempotency-Key': 'rotate-1' },
    });
    expect(rotateAfterDelete.headers.get('idempotent-replayed')).toBe('true');
    expect(rotateAfterDelete.data).not.toHaveProperty('secret');
  });
});

describe('SSRF protection', () => {
  const refused = async (apiKey: string, url: string) => {
    const res = await call(api(), W.create, { apiKey, body: { url } });
    expectError(res, 400, 'invalid_request');
    expect(res.error?.details?.issues, url).toEqual([expect.stringMatching(/^url: /)]);
    return res.error!.details!.issues[0] as string;
  };

  it('refuses http in AWS mode, and private, loopback, link-local, metadata, unique-local, CGNAT and IPv4-mapped addresses, literal or resolved', async () => {
    const { apiKey } = await newOrganization();
    process.env.WEBHOOKS_ALLOW_LOCALHOST = 'false';
    try {
      expect(await refused(apiKey, 'http://127.0.0.1:8080/hooks')).toMatch(/must use https/);
      expect(await refused(apiKey, 'http://example.com/hooks')).toMatch(/must use https/);
    } finally {
      process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
    }
    // Even on the local stack, only http://127.0.0.1 and http://localhost are exempt.
    expect(await refused(apiKey, 'http://10.0.0.1/hooks')).toMatch(/must use https/);
    for (const url of [
      'https://10.0.0.1/hooks',
      'https://172.16.5.4/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://[::ffff:a00:1]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://127.0.0.1/',
    ]) {
      expect(await refused(apiKey, url), url).toMatch(/refused address/);
    }
    expect(await refused(apiKey, 'https://user:pass@hooks.example.com/')).toMatch(/credentials/);
    expect(await refused(apiKey, 'not a url')).toMatch(/absolute URL/);

    // A host name is checked on every address it resolves to.
    const names: Record<string, ResolvedAddress[]> = {
      'internal.example.test': [{ address: '10.1.2.3', family: 4 }],
      'mixed.example.test': [
        { address: '93.184.216.34', family: 4 },
        { address: 'fd12:3456::1', family: 6 },
      ],
    };
    useWebhookResolver(async (hostname) => names[hostname] ?? []);
    expect(await refused(apiKey, 'https://internal.example.test/hooks')).toMatch(/10\.1\.2\.3 is a private address/);
    expect(await refused(apiKey, 'https://mixed.example.test/hooks')).toMatch(/fd12:3456::1 is a unique-local address/);
    expect(await refused(apiKey, 'https://nowhere.example.test/hooks')).toMatch(/does not resolve/);
    expect((await call(api(), W.list, { apiKey })).data.endpoints).toEqual([]);
  });

  it('checks the resolved address again at each attempt: a host that now resolves to a private address is not contacted', async () => {
    const { apiKey } = await newOrganization();
    let address = '93.184.216.34';
    useWebhookResolver(async (hostname) => (hostname === 'rebind.example.test' ? [{ address, family: 4 }] : []));
    const endpoint = await createEndpoint(apiKey, { url: 'https://rebind.example.test/hooks' });
    address = '10.9.8.7';
    expect((await call(api(), W.test, { apiKey, body: { endpointId: endpoint.id } })).status).toBe(200);
    const [delivery] = await deliveriesUntil(apiKey, {}, (d) => d.length >= 1);
    expect(delivery).toMatchObject({ status: 'failed', responseStatus: null, responseBody: null, latencyMs: 0 });
    expect(delivery.error).toMatch(/refused before sending: .*10\.9\.8\.7 is a private address/);
    expect((await call(api(), W.delete, { apiKey, body: { endpointId: endpoint.id } })).data).toEqual({ id: endpoint.id, deleted: true });
  });
});

describe('endpoints', () => {
  it("never shows one organization another's endpoints or deliveries", async () => {
    const a = await newOrganization();
    const b = await newOrganization();
    const hook = await receiver();
    const endpoint = await createEndpoint(a.apiKey, { url: hook.url });
    const { messageId } = (await call(api(), W.test, { apiKey: a.apiKey, body: { endpointId: endpoint.id } })).data;
    const [delivery] = await deliveriesUntil(a.apiKey, {}, (d) => d.length === 1);

    expect((await call(api(), W.list, { apiKey: b.apiKey })).data).toEqual({ endpoints: [] });
    expect((await call(api(), W.deliveries, { apiKey: b.apiKey, body: {} })).data).toEqual({ deliveries: [], nextCursor: null });
    expect((await call(api(), W.deliveries, { apiKey: b.apiKey, body: { filters: { endpointId: endpoint.id } } })).data.deliveries).toEqual(
      [],
    );
    for (const path of [W.delete, W.rotate, W.test])
      expectError(await call(api(), path, { apiKey: b.apiKey, body: { endpointId: endpoint.id } }), 404, 'not_found', {
        resource: 'webhook endpoint',
        id: endpoint.id,
      });
    expectError(await call(api(), W.redeliver, { apiKey: b.apiKey, body: { messageId } }), 404, 'not_found', {
      resource: 'webhook message',
      id: messageId,
    });
    expectError(await call(api(), W.redeliver, { apiKey: b.apiKey, body: { deliveryId: delivery.id } }), 404, 'not_found', {
      resource: 'webhook delivery',
      id: delivery.id,
    });
    // A's cursor is A's.
    await call(api(), W.test, { apiKey: a.apiKey, body: { endpointId: endpoint.id } });
    await deliveriesUntil(a.apiKey, {}, (d) => d.length === 2);
    const page = await call(api(), W.deliveries, { apiKey: a.apiKey, body: { limit: 1 } });
    expectError(
      await call(api(), W.deliveries, { apiKey: b.apiKey, body: { limit: 1, cursor: page.data.nextCursor } }),
      400,
      'invalid_request',
    );
    // A still has its endpoint and secret.
    expect((await call(api(), W.list, { apiKey: a.apiKey })).data.endpoints.map((e: any) => e.id)).toEqual([endpoint.id]);
  });

  it('allows at most 10 endpoints per organization, even when created at once; a deleted one frees its place', async () => {
    const { apiKey } = await newOrganization();
    const hook = await receiver();
    const results = await Promise.all(
      Array.from({ length: 13 }, (_, i) => call(api(), W.create, { apiKey, body: { url: `${hook.url}/${i}` } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    for (const res of results.filter((r) => r.status !== 200)) expectError(res, 409, 'webhook_endpoint_limit_reached', { limit: 10 });
    const listed = (await call(api(), W.list, { apiKey })).data.endpoints;
    expect(listed).toHaveLength(10);
    expect((await call(api(), W.delete, { apiKey, body: { endpointId: listed[0].id } })).status).toBe(200);
    expectError(await call(api(), W.delete, { apiKey, body: { endpointId: listed[0].id } }), 404, 'not_found');
    expect((await call(api(), W.create, { apiKey, body: { url: hook.url } })).status).toBe(200);
    expectError(await call(api(), W.create, { apiKey, body: { url: hook.url } }), 409, 'webhook_endpoint_limit_reached', { limit: 10 });
  });

  it('validates create: url, events and description, in JSON and form bodies', async () => {
    const { apiKey } = await newOrganization();
    const issues = async (body: Record<string, unknown>) => (await call(api(), W.create, { apiKey, body })).error?.details?.issues;
    expect(await issues({})).toEqual([expect.stringMatching(/^url:/)]);
    expect(await issues({ url: 'https://hooks.example.com', events: ['campaign.started'] })).toEqual([
      expect.stringMatching(/^events\[0\]:/),
    ]);
    expect(await issues({ url: 'https://hooks.example.com', events: [] })).toEqual([expect.stringMatching(/^events:/)]);
    expect(await issues({ url: 'https://hooks.example.com', description: 'x'.repeat(501) })).toEqual([
      expect.stringMatching(/^description:/),
    ]);
    const hook = await receiver();
    const form = await call(api(), W.create, {
      apiKey,
      form: new URLSearchParams([
        ['url', hook.url],
        ['events', 'campaign.expired'],
        ['description', 'form'],
      ]),
    });
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.data).toMatchObject({ url: hook.url, events: ['campaign.expired'], description: 'form' });
  });
});
