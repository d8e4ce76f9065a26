/**
 * Event `campaign.accounts_processed` (docs/results.md), end to end through
 * HTTP: one signed event per readable batch, delivered like every event and
 * valid against the published documents; the seqs the events name tile
 * 1..eligible and each names what the results page shows from it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call, newOrganization, useApi } from './support/api';
import { account, contact, createApiCampaign, enrich, importAccounts, uniquePrefix, waitForStatus } from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver } from './webhooks/receiver';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi({ webhooks: { intervalMs: 100 } });

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('campaign.accounts_processed', () => {
  it("is sent once per readable batch, signed, its seqs tiling 1..eligible with the batch's counts, and the results page from fromSeq - 1 starts at fromSeq", async () => {
    const prefix = uniquePrefix();
    // 1,200 accounts: two workflow batches (1,000 and 200); every third without contacts.
    const accounts = Array.from({ length: 1_200 }, (_, i) =>
      account(`${prefix}_${String(i).padStart(5, '0')}`, 'active', i % 3 === 0 ? [] : [contact(`${prefix}_${i}_c`)]),
    );
    await importAccounts(accounts);
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { apiKey } = await newOrganization({ smbCredits: 10_000 });
    const endpoint = await call(api(), '/v1/webhooks/create', {
      apiKey,
      body: { url: receiver.url, events: ['campaign.accounts_processed'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      accounts.map((a) => a.accountId),
    );
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');

    const requests = await receiver.received(2);
    expect(receiver.violations).toEqual([]);
    const events = requests.map(
      (request) => new Webhook(endpoint.data.secret).verify(request.body, webhookHeaders(request)) as { type: string; data: any },
    );
    expect(events.every((event) => event.type === 'campaign.accounts_processed')).toBe(true);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(2);
    const batches = events.map((event) => event.data).sort((a, b) => a.fromSeq - b.fromSeq);
    expect(batches.map((b) => [b.fromSeq, b.toSeq])).toEqual([
      [1, batches[0].toSeq],
      [batches[0].toSeq + 1, 1_200],
    ]);
    expect(batches.map((b) => b.toSeq - b.fromSeq + 1).sort((a, b) => a - b)).toEqual([200, 1_000]);
    const attemptId = batches[0].attemptId;
    for (const batch of batches) {
      expect(batch.campaign).toEqual({ id: campaignId, status: 'enriching' });
      expect(batch.attemptId).toBe(attemptId);
      const page = await call(api(), '/v1/campaigns/results', {
        apiKey,
        body: { campaignId, afterSeq: batch.fromSeq - 1, limit: 1_000 },
      });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.data.attemptId).toBe(attemptId);
      const items = page.data.accounts.slice(0, batch.toSeq - batch.fromSeq + 1) as { seq: number; outcome: string }[];
      expect(items[0]!.seq).toBe(batch.fromSeq);
      expect(items.at(-1)!.seq).toBe(batch.toSeq);
      expect({
        found: items.filter((i) => i.outcome === 'found').length,
        notFound: items.filter((i) => i.outcome === 'not_found').length,
      }).toEqual(batch.counts);
    }
    // No more than one event per batch, even after the campaign settled.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests.length).toBe(2);
  });
});
