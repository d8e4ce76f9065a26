/**
 * An export URL never outlives the result access period (issue #34):
 * `urlExpiresAt` = min(signing time + URL TTL, `resultsExpireAt`), and the
 * presigned URL's own lifetime (`X-Amz-Expires`) says the same.
 */
import { describe, expect, it } from 'vitest';
import { urlLifetimeSeconds } from '../lib/exports/export';
import { call, newOrganization, useApi } from './support/api';
import { activeAccounts, createApiCampaign, enrich, importAccounts, uniquePrefix, waitForStatus } from './enrichment/support';

const api = useApi();

describe('urlLifetimeSeconds', () => {
  const signedAt = new Date('2026-11-22T10:00:00.000Z');
  it('is the TTL while the period ends later, the rest of the period (whole seconds) when it ends sooner', () => {
    expect(urlLifetimeSeconds(900, signedAt, '2026-12-22T10:00:00.000Z')).toBe(900);
    expect(urlLifetimeSeconds(900, signedAt, '2026-11-22T10:02:00.500Z')).toBe(120);
    expect(urlLifetimeSeconds(900, signedAt, '2026-11-22T10:00:00.999Z')).toBe(0);
    expect(urlLifetimeSeconds(900, signedAt, undefined)).toBe(900);
  });
});

describe('export URL near the end of the result access period', () => {
  it('expires at resultsExpireAt, not after it', async () => {
    const accounts = activeAccounts(uniquePrefix(), 2);
    await importAccounts(accounts);
    const { apiKey } = await newOrganization();
    const previous = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    // A 2-minute access period; the URL TTL stays 15 minutes.
    process.env.RESULTS_ACCESS_PERIOD_SECONDS = '120';
    let campaign: { id: string; resultsExpireAt: string };
    try {
      const campaignId = await createApiCampaign(
        api(),
        apiKey,
        accounts.map((a) => a.accountId),
      );
      expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
      campaign = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    } finally {
      if (previous === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
      else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previous;
    }
    const exported = await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId: campaign.id } });
    expect(exported.status).toBe(200);
    const expiresAt = Date.parse(exported.data.urlExpiresAt);
    expect(expiresAt).toBeLessThanOrEqual(Date.parse(campaign.resultsExpireAt));
    const lifetime = Number(new URL(exported.data.url).searchParams.get('X-Amz-Expires'));
    expect(lifetime).toBeLessThanOrEqual(120);
    expect(lifetime).toBeGreaterThan(0);
    // The URL's own expiry is urlExpiresAt: signed at X-Amz-Date, valid for X-Amz-Expires seconds.
    const amzDate = new URL(exported.data.url).searchParams.get('X-Amz-Date')!;
    const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    expect(signedAt + lifetime * 1000).toBe(expiresAt);
  });
});
