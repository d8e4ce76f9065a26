/**
 * The event feed `POST /v1/events/list` (docs/events.md), end to end through HTTP against DynamoDB Local:
 * the events an endpoint received, the same with no endpoint at all, the filters, the cursor and the 30-day window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { createCampaignEnrichmentClient } from '../client/index';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { creditsLowEvent, eventItem, messageIdOf, WEBHOOK_RETENTION_SECONDS } from '../lib/webhooks/events';
import { call, newOrganization, useApi } from './support/api';
import { account, contact, createApiCampaign, enrich, importAccounts, pollUntil, uniquePrefix, waitForStatus } from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver } from './webhooks/receiver';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi({ webhooks: { intervalMs: 100 } });
const LIST = '/v1/events/list';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

interface FeedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: any;
}

/** Every event of the feed for `body`, page after page with `limit`, checking each page's size. */
async function walk(apiKey: string, body: Record<string, unknown>, limit: number): Promise<FeedEvent[]> {
  const all: FeedEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(api(), LIST, { apiKey, body: { ...body, limit, ...(cursor ? { cursor } : {}) } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.data.events.length).toBeLessThanOrEqual(limit);
    all.push(...page.data.events);
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/** A campaign of `size` accounts (every other without contacts), enriched to the end. */
async function enrichedCampaign(apiKey: string, size: number): Promise<string> {
  const prefix = uniquePrefix();
  const accounts = Array.from({ length: size }, (_, i) => account(`${prefix}_${i}`, 'active', i % 2 ? [] : [contact(`${prefix}_${i}_c`)]));
  await importAccounts(accounts);
  const campaignId = await createApiCampaign(
    api(),
    apiKey,
    accounts.map((a) => a.accountId),
  );
  expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
  await waitForStatus(api(), apiKey, campaignId, 'enriched');
  return campaignId;
}

const newestFirst = (events: FeedEvent[]) => [...events].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));

describe('POST /v1/events/list', () => {
  it('lists the events an endpoint received: each webhook-id is the message ID of a feed event for that endpoint, with the same type, time and data', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { apiKey } = await newOrganization();
    const endpoint = await call(api(), '/v1/webhooks/create', { apiKey, body: { url: receiver.url } });
    expect(endpoint.status).toBe(200);
    const campaignId = await enrichedCampaign(apiKey, 6);
    // One accounts_processed batch and campaign.enriched.
    const requests = await receiver.received(2);
    expect(receiver.violations).toEqual([]);

    const feed = await walk(apiKey, {}, 25);
    expect(feed.map((e) => e.type).sort()).toEqual(['campaign.accounts_processed', 'campaign.enriched']);
    expect(feed).toEqual(newestFirst(feed));
    const byMessage = new Map(feed.map((event) => [messageIdOf(event.id, endpoint.data.id), event]));
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(byMessage.keys()));
    for (const request of requests) {
      const body = new Webhook(endpoint.data.secret).verify(request.body, webhookHeaders(request)) as {
        type: string;
        timestamp: string;
        data: unknown;
      };
      const event = byMessage.get(String(request.headers['webhook-id']))!;
      expect({ type: event.type, createdAt: event.createdAt, data: event.data }).toEqual({
        type: body.type,
        createdAt: body.timestamp,
        data: body.data,
      });
    }
    expect(feed.find((e) => e.type === 'campaign.enriched')!.data.campaign.id).toBe(campaignId);
    // The balance campaign.enriched shows is the organization's, read alone when the page is listed.
    const described = await call(api(), '/v1/org/describe', { apiKey, body: {} });
    expect(described.status).toBe(200);
    expect(described.data.credits.smb).toBeGreaterThan(0);
    expect(feed.find((e) => e.type === 'campaign.enriched')!.data.campaign.credits.remaining).toBe(described.data.credits.smb);
  });

  it("lists an organization's events without any endpoint, newest first, only its own, narrowed by type (one or several) and campaign, paged by cursor", async () => {
    const { apiKey } = await newOrganization();
    const other = await newOrganization();
    const first = await enrichedCampaign(apiKey, 4);
    const second = await enrichedCampaign(apiKey, 4);
    const otherCampaign = await enrichedCampaign(other.apiKey, 4);

    const feed = await walk(apiKey, {}, 25);
    expect(feed).toHaveLength(4);
    expect(feed).toEqual(newestFirst(feed));
    expect(feed.every((e) => /^evt_[1-9A-HJ-NP-Za-km-z]{21}$/.test(e.id))).toBe(true);
    const campaignOf = (e: FeedEvent) => e.data.campaign.id;
    expect(new Set(feed.map(campaignOf))).toEqual(new Set([first, second]));
    expect(feed.some((e) => campaignOf(e) === otherCampaign)).toBe(false);

    // One per page: the same events, in the same order, each once.
    expect(await walk(apiKey, {}, 1)).toEqual(feed);
    // The client's iterator follows the cursor to the end: the same events.
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey });
    const iterated: unknown[] = [];
    for await (const event of client.events({ limit: 1 })) iterated.push(event);
    expect(iterated).toEqual(feed);
    // One type; an array of types.
    expect(await walk(apiKey, { filters: { type: 'campaign.enriched' } }, 25)).toEqual(feed.filter((e) => e.type === 'campaign.enriched'));
    expect(await walk(apiKey, { filters: { type: ['campaign.enriched', 'campaign.accounts_processed'] } }, 1)).toEqual(feed);
    expect(await walk(apiKey, { filters: { type: ['campaign.expired'] } }, 25)).toEqual([]);
    // One campaign; campaign and type.
    expect(await walk(apiKey, { filters: { campaignId: first } }, 1)).toEqual(feed.filter((e) => campaignOf(e) === first));
    expect(await walk(apiKey, { filters: { campaignId: second, type: 'campaign.accounts_processed' } }, 25)).toEqual(
      feed.filter((e) => campaignOf(e) === second && e.type === 'campaign.accounts_processed'),
    );

    // A cursor goes with its filters and limit only.
    const page = await call(api(), LIST, { apiKey, body: { limit: 1 } });
    expect(page.data.nextCursor).toEqual(expect.any(String));
    const moved = await call(api(), LIST, { apiKey, body: { limit: 2, cursor: page.data.nextCursor } });
    expect(moved.status).toBe(400);
    expect(moved.error?.code).toBe('invalid_request');
    const foreign = await call(api(), LIST, { apiKey: other.apiKey, body: { limit: 1, cursor: page.data.nextCursor } });
    expect(foreign.status).toBe(400);
  });

  it('keeps 30 days: an older event is not listed and every event carries its 30-day TTL', async () => {
    const { apiKey, organizationId } = await newOrganization();
    const now = Date.now();
    const old = creditsLowEvent(organizationId, 'att_old', new Date(now - WEBHOOK_RETENTION_SECONDS * 1000 - 60_000).toISOString(), {
      smb: 10,
      threshold: 100,
    });
    const recent = creditsLowEvent(
      organizationId,
      'att_recent',
      new Date(now - WEBHOOK_RETENTION_SECONDS * 1000 + 3_600_000).toISOString(),
      { smb: 20, threshold: 100 },
    );
    for (const event of [old, recent]) {
      const item = eventItem(event);
      expect(item.ttl).toBe(Math.floor(new Date(event.occurredAt).getTime() / 1000) + WEBHOOK_RETENTION_SECONDS);
      await ddb.send(new PutCommand({ TableName: config.tableName, Item: item }));
    }
    const feed = await pollUntil(
      () => walk(apiKey, {}, 25),
      (events) => events.length > 0,
    );
    expect(feed).toEqual([
      {
        id: recent.id,
        type: 'organization.credits_low',
        createdAt: recent.occurredAt,
        data: { organization: { id: organizationId }, credits: { smb: 20, threshold: 100 } },
      },
    ]);
  });

  it('refuses bad filters and limits with invalid_request naming the field', async () => {
    const { apiKey } = await newOrganization();
    for (const [body, field] of [
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ filters: { type: 'webhook.test' } }, 'filters.type'],
      [{ filters: { type: [] } }, 'filters.type'],
      [{ filters: { campaignId: 'nope' } }, 'filters.campaignId'],
      [{ filters: { status: 'x' } }, 'filters'],
    ] as const) {
      const res = await call(api(), LIST, { apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error?.code).toBe('invalid_request');
      expect(JSON.stringify(res.error)).toContain(field);
    }
  });
});
