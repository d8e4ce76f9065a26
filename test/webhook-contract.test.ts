/**
 * The webhook judge (test/support/webhook-contract.ts) every test receiver
 * runs on every delivery: it accepts each documented example, and it catches
 * a planted fault on either side, a document that no longer describes the
 * message (the builder fault of issue #37: a payload property named `id`
 * dropped while `id` stays required) and a message the documents refuse. The
 * last test sends a real delivery through a receiver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_EXAMPLES, WEBHOOK_HEADERS } from '../lib/webhooks/docs';
import { publishedDocuments, webhookJudge } from './support/webhook-contract';
import { startReceiver, type Receiver } from './webhooks/receiver';

const testEvent = EVENT_EXAMPLES['webhook.test'] as Record<string, unknown>;
const headers = Object.fromEntries(Object.entries(WEBHOOK_HEADERS).map(([name, header]) => [name, String(header.example)]));
const delivery = (body: unknown, h: Record<string, string> = headers) => ({ headers: h, body: JSON.stringify(body) });
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.allSettled(receivers.splice(0).map((r) => r.close()));
});

describe('the webhook judge', () => {
  const judge = webhookJudge();

  it('accepts every documented event example with its documented headers', () => {
    for (const [type, example] of Object.entries(EVENT_EXAMPLES)) expect(judge(delivery(example)), type).toEqual([]);
  });

  it('catches a document that dropped the payload property `id` (planted in the AsyncAPI document)', () => {
    const broken = publishedDocuments();
    delete broken.asyncapi.components.schemas.EnrichedCampaign.properties.id;
    const violations = webhookJudge(broken)(delivery(EVENT_EXAMPLES['campaign.enriched']));
    expect(violations).toEqual([expect.stringMatching(/^asyncapi campaignEnriched payload: \/data\/campaign .*additional.*"id"/)]);
  });

  it('catches the same fault planted in the OpenAPI `webhooks` entry', () => {
    const broken = publishedDocuments();
    const campaign = broken.openapi.components.schemas.EnrichedCampaign;
    delete campaign.properties.id;
    campaign.additionalProperties = false;
    const violations = webhookJudge(broken)(delivery(EVENT_EXAMPLES['campaign.enriched']));
    expect(violations.some((v) => v.startsWith('openapi campaign.enriched body:') && v.includes('"id"'))).toBe(true);
  });

  it('catches a message the documents refuse: a missing field, an extra field, an unknown type, a bad header', () => {
    const { timestamp: _t, ...noTimestamp } = testEvent;
    expect(judge(delivery(noTimestamp)).length).toBeGreaterThanOrEqual(2); // both documents
    expect(judge(delivery({ ...testEvent, extra: 1 })).join('\n')).toMatch(/asyncapi webhookTest payload/);
    expect(judge(delivery({ ...testEvent, type: 'campaign.exploded' }))).toEqual([
      'asyncapi: no message named "campaign.exploded"',
      'openapi: no webhooks entry "campaign.exploded"',
    ]);
    const violations = judge(delivery(testEvent, { ...headers, 'webhook-id': 'nope' }));
    expect(violations.join('\n')).toMatch(/asyncapi webhookTest headers: \/webhook-id/);
    expect(violations.join('\n')).toMatch(/openapi webhook.test header webhook-id/);
  });

  it('fails a receiver that got a delivery the documents refuse', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const response = await fetch(receiver.url, { method: 'POST', headers, body: JSON.stringify({ type: 'webhook.test' }) });
    expect(response.status).toBe(200);
    await expect(receiver.received(1)).rejects.toThrow(/break the published documents/);
    expect(receiver.violations.length).toBeGreaterThan(0);
    await expect(receiver.close()).rejects.toThrow(/request 1: /);
  });
});
