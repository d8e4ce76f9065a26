/**
 * Test mode's `test_slow_` accounts (docs/test-mode.md "Slow accounts"), end
 * to end through HTTP against the local stack: the workflow processes them
 * at most 100 a second per campaign and makes each part readable on its own,
 * so a reader following the results sees partial states before `enriched`;
 * the sequence stays gap-free and never reused, on the page and the stream.
 * Counts only: the parts, their seqs and the pace's slots, never durations.
 */
import { describe, expect, it } from 'vitest';
import { apiKeys, organizations, sequence } from '../lib/root';
import { TEST_SLOW_ACCOUNTS_PER_SECOND } from '../lib/test-mode/accounts';
import { call, newOrganization, useApi } from './support/api';
import { createApiCampaign, enrich, uniquePrefix, waitForStatus } from './enrichment/support';
import { openStreamAt, type Item } from './support/results';

const api = useApi();
const RESULTS = '/v1/campaigns/results';

/** A test key of a fresh organization's twin. */
async function testKey(): Promise<string> {
  const live = await newOrganization({ name: `Live ${uniquePrefix()}`, smbCredits: 10 });
  const twin = await organizations().testTwin(live.organizationId);
  return apiKeys().create(twin.id);
}

/** A launched test campaign of `count` `test_slow_` accounts. */
async function slowCampaign(apiKey: string, count: number): Promise<string> {
  const prefix = uniquePrefix();
  const ids = Array.from({ length: count }, (_, i) => `test_slow_${prefix}_${String(i).padStart(5, '0')}`);
  const campaignId = await createApiCampaign(api(), apiKey, ids);
  const launched = await enrich(api(), apiKey, campaignId);
  expect(launched.status, JSON.stringify(launched.body)).toBe(200);
  return campaignId;
}

/** The `campaign.accounts_processed` events of a campaign, oldest first: one per readable part. */
async function processedEvents(apiKey: string, campaignId: string) {
  const events: { data: { fromSeq: number; toSeq: number; attemptId: string } }[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(api(), '/v1/events/list', {
      apiKey,
      body: { filters: { type: 'campaign.accounts_processed', campaignId }, limit: 100, ...(cursor ? { cursor } : {}) },
    });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    events.push(...page.data.events);
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor);
  return events.map((event) => event.data).sort((a, b) => a.fromSeq - b.fromSeq);
}

describe('test_slow_ accounts', () => {
  it('a reader following with long polls sees partial states (0 < processed < eligible) before `enriched` and reads seq 1..N once each; every readable part holds at most 100 accounts', async () => {
    const apiKey = await testKey();
    const eligible = 1_000;
    const campaignId = await slowCampaign(apiKey, eligible);

    const seen: Item[] = [];
    const partial = new Set<number>();
    let afterSeq = 0;
    let attemptId: string | undefined;
    for (let complete = false; !complete;) {
      const page = await call(api(), RESULTS, { apiKey, body: { campaignId, afterSeq, limit: 1_000, waitSeconds: 20 } });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.headers.get('test-mode')).toBe('true');
      attemptId ??= page.data.attemptId;
      expect(page.data.attemptId).toBe(attemptId);
      if (page.data.processed > 0 && page.data.processed < eligible) partial.add(page.data.processed);
      seen.push(...page.data.accounts);
      afterSeq = page.data.lastSeq;
      complete = page.data.complete;
    }
    // Several distinct partial states: the parts become readable one by one, a slot of the pace apart.
    expect(partial.size).toBeGreaterThanOrEqual(2);
    expect(seen.map((item) => item.seq)).toEqual(Array.from({ length: eligible }, (_, i) => i + 1));
    expect(new Set(seen.map((item) => item.accountId)).size).toBe(eligible);
    expect(seen.every((item) => item.outcome === 'found' && item.contacts.length === 3)).toBe(true);

    // One event per readable part: the parts tile 1..N, each of at most 100 accounts (a pace of 100 a second).
    const events = await processedEvents(apiKey, campaignId);
    expect(events.length).toBe(eligible / TEST_SLOW_ACCOUNTS_PER_SECOND);
    expect(events.every((event) => event.attemptId === attemptId)).toBe(true);
    expect(events.map((event) => [event.fromSeq, event.toSeq])).toEqual(
      events.map((_, i) => [i * TEST_SLOW_ACCOUNTS_PER_SECOND + 1, (i + 1) * TEST_SLOW_ACCOUNTS_PER_SECOND]),
    );
    expect((await waitForStatus(api(), apiKey, campaignId, 'enriched')).results.totalAccounts).toBe(eligible);
  });

  it('the stream opened while the first parts are readable writes seq 1..N once each, then `end`; a campaign of two batches is paced in parts of at most 100 across both', async () => {
    const apiKey = await testKey();
    const eligible = 1_200;
    const campaignId = await slowCampaign(apiKey, eligible);
    // Opened while the campaign is partial (the first long poll answers with the first part).
    const first = await call(api(), RESULTS, { apiKey, body: { campaignId, waitSeconds: 20, limit: 1 } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.data.processed).toBeLessThan(eligible);
    const read = await openStreamAt(api(), apiKey, { campaignId }, { accept: 'text/event-stream' });
    expect(read.response.status).toBe(200);
    expect(read.response.headers.get('attempt-id')).toBe(first.data.attemptId);
    const accounts = read.received.filter((r) => r.object.type === 'account');
    expect(accounts.map((r) => r.object.seq)).toEqual(Array.from({ length: eligible }, (_, i) => i + 1));
    expect(accounts.map((r) => r.id)).toEqual(accounts.map((r) => String(r.object.seq)));
    expect(read.received.at(-1)!.object).toEqual({ type: 'end', lastSeq: eligible, complete: true });

    // Two workflow batches (1,000 and 200), both paced: 12 parts of at most 100, tiling 1..N.
    const events = await processedEvents(apiKey, campaignId);
    expect(events.length).toBe(12);
    expect(events.every((event) => event.toSeq - event.fromSeq + 1 <= TEST_SLOW_ACCOUNTS_PER_SECOND)).toBe(true);
    expect(events.map((event) => event.fromSeq)).toEqual([1, ...events.slice(0, -1).map((event) => event.toSeq + 1)]);
    expect(events.at(-1)!.toSeq).toBe(eligible);
  });

  it("the pace is the attempt's, shared by every batch: concurrent reservations get distinct slots a second apart, and the head they make is the one sequencing expects", async () => {
    const ref = {
      organizationId: 'org_test_pace',
      campaignId: `camp_${uniquePrefix()}`,
      attemptId: `att_${uniquePrefix()}`,
      expiresAt: 2_000_000_000,
    };
    const now = 1_700_000_000_000;
    const slots = await Promise.all(Array.from({ length: 8 }, () => sequence().reserveSlot(ref, 1_000, now)));
    expect([...slots].sort((a, b) => a - b)).toEqual(Array.from({ length: 8 }, (_, i) => now + i * 1_000));
    // A batch sequenced after the reservations starts at seq 1.
    const outcome = await sequence().assign({ ...ref, batchIndex: 0, chunk: 0, accounts: 100, found: 100 }, [], () => []);
    expect(outcome).toMatchObject({ ok: true, fresh: true, range: { fromSeq: 1, toSeq: 100, batchIndex: 0, chunk: 0 } });
    expect(await sequence().lastSeq(ref.campaignId, ref.attemptId)).toBe(100);
  });
});
