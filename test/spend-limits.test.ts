/**
 * The monthly spend limit and the low-balance event (docs/limits.md), through
 * HTTP against the local stack: `spend_limit_exceeded` after
 * `insufficient_credits`, atomic with the launch transaction (racing
 * launches never pass it together), quote's `outcome`, refunds taken off the
 * month's spend, `POST /v1/org/limits`, `Credits-Remaining`, and
 * `organization.credits_low` written once per crossing, in the charge's
 * transaction.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { monthEnd, monthOf } from '../lib/organizations/limits';
import { limits } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  account,
  balance,
  contact,
  createApiCampaign,
  DESCRIBE,
  enrich,
  draftOfSize,
  raceLaunches,
  racingLaunchInputs,
  expectError,
  importAccounts,
  ledgerOf,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const LIMITS = '/v1/org/limits';
const QUOTE = '/v1/campaigns/quote';

/** The organization's webhook events of one type, as stored. */
async function eventsOf(organizationId: string, type: string): Promise<Record<string, any>[]> {
  const { Items } = await ddb.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
      ExpressionAttributeValues: { ':pk': keys.webhooks(organizationId), ':event': 'EVENT#' },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).filter((item) => item.eventType === type);
}

/** A draft of `size` active accounts with one contact each (found: no refund). */
const draftOf = (apiKey: string, size: number): Promise<string> => draftOfSize(api(), apiKey, size);

describe('POST /v1/org/limits', () => {
  it("answers the deployment's defaults, then the operator's overrides and this month's spend; every answer carries the RateLimit fields", async () => {
    const org = await newOrganization({ smbCredits: 50 });
    const now = new Date();
    const first = await call(api(), LIMITS, { apiKey: org.apiKey });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.data).toEqual({
      requests: { limit: config.rateLimitRequests, windowSeconds: config.rateLimitWindowSeconds },
      exportsPerHour: config.exportsPerHour,
      uploadsPerHour: config.uploadsPerHour,
      monthlySpend: { limit: null, spent: 0, resetsAt: monthEnd(now) },
      lowBalanceThreshold: null,
    });
    expect(first.headers.get('ratelimit-policy')).toBe(`"requests";q=${config.rateLimitRequests};w=${config.rateLimitWindowSeconds}`);

    await limits().setLimits(org.organizationId, { exportsPerHour: 5, uploadsPerHour: 7, monthlySpendLimit: 40, lowBalanceThreshold: 10 });
    const campaignId = await draftOf(org.apiKey, 3);
    expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
    const after = await call(api(), LIMITS, { apiKey: org.apiKey, body: {} });
    expect(after.data).toMatchObject({
      exportsPerHour: 5,
      uploadsPerHour: 7,
      monthlySpend: { limit: 40, spent: 3 },
      lowBalanceThreshold: 10,
    });
    // `none` removes an override.
    await limits().setLimits(org.organizationId, { monthlySpendLimit: null, lowBalanceThreshold: null, exportsPerHour: null });
    expect((await call(api(), LIMITS, { apiKey: org.apiKey })).data).toMatchObject({
      exportsPerHour: config.exportsPerHour,
      monthlySpend: { limit: null, spent: 3 },
      lowBalanceThreshold: null,
    });
    expectError(await call(api(), LIMITS, { apiKey: org.apiKey, body: { unexpected: true } }), 400, 'invalid_request');
  });
});

describe('the monthly spend limit (402 spend_limit_exceeded)', () => {
  it('refuses a launch that would take the month over the limit, after insufficient_credits; quote shows it; nothing is charged', async () => {
    const org = await newOrganization({ smbCredits: 5 });
    await limits().setLimits(org.organizationId, { monthlySpendLimit: 3 });
    const small = await draftOf(org.apiKey, 2);
    const large = await draftOf(org.apiKey, 2);
    const tooLarge = await draftOf(org.apiKey, 6);
    // Over the balance too: insufficient_credits comes first.
    expect((await call(api(), QUOTE, { apiKey: org.apiKey, body: { campaignId: tooLarge } })).data.outcome).toBe('insufficient_credits');
    expectError(await enrich(api(), org.apiKey, tooLarge), 402, 'insufficient_credits');
    const launched = await enrich(api(), org.apiKey, small);
    expect(launched.status).toBe(200);
    expect(launched.headers.get('credits-remaining')).toBe('3');
    const quote = await call(api(), QUOTE, { apiKey: org.apiKey, body: { campaignId: large } });
    expect(quote.data.outcome).toBe('spend_limit_exceeded');
    expect(quote.headers.get('credits-remaining')).toBe('3');
    expectError(await enrich(api(), org.apiKey, large), 402, 'spend_limit_exceeded', { limit: 3, spent: 2, required: 2 });
    expect(await balance(org.organizationId)).toBe(3);
    expect((await ledgerOf(org.organizationId, large)).entries).toEqual([]);
  });

  it('refunds are taken off the month: a launch whose accounts had no contact spends nothing, net', async () => {
    const org = await newOrganization({ smbCredits: 10 });
    await limits().setLimits(org.organizationId, { monthlySpendLimit: 4 });
    const prefix = uniquePrefix();
    const noContacts = [account(`${prefix}_a`), account(`${prefix}_b`), account(`${prefix}_c`)];
    await importAccounts(noContacts);
    const first = await createApiCampaign(
      api(),
      org.apiKey,
      noContacts.map((a) => a.accountId),
    );
    expect((await enrich(api(), org.apiKey, first)).status).toBe(200);
    expect(await limits().spent(org.organizationId, monthOf(new Date()))).toBe(3);
    await waitForStatus(api(), org.apiKey, first, 'enriched');
    expect(await limits().spent(org.organizationId, monthOf(new Date()))).toBe(0);
    // The whole limit is available again.
    const again = await draftOf(org.apiKey, 4);
    expect((await enrich(api(), org.apiKey, again)).status).toBe(200);
  });

  it('racing launches never pass it together; refused launches charge nothing (fast-check interleavings)', async () => {
    await fc.assert(
      fc.asyncProperty(...racingLaunchInputs, async (sizes, limit, delays) => {
        const org = await newOrganization({ smbCredits: 100 });
        await limits().setLimits(org.organizationId, { monthlySpendLimit: limit });
        const { launched, refused: refusals, charged } = await raceLaunches(api(), org.apiKey, sizes, delays);
        for (const refused of refusals) {
          expect(refused.res.error?.code, JSON.stringify(refused.res.body)).toBe('spend_limit_exceeded');
          expect(refused.res.error?.details.limit).toBe(limit);
          expect(refused.res.error?.details.spent + refused.size).toBeGreaterThan(limit);
          expect((await ledgerOf(org.organizationId, refused.campaignId)).entries).toEqual([]);
        }
        expect(charged).toBeLessThanOrEqual(limit);
        expect(await limits().spent(org.organizationId, monthOf(new Date()))).toBe(charged);
        expect(await balance(org.organizationId)).toBe(100 - charged);
        // Whatever the order, a launch that fits what is left was not refused.
        if (launched.length === 0) expect(Math.min(...sizes)).toBeGreaterThan(limit);
      }),
      { numRuns: 6 },
    );
  });
});

describe('organization.credits_low (once per crossing, in the charge transaction)', () => {
  it('the charge that crosses the threshold writes one event; charges above or below it none; a retried enrich none; a refund then a charge crosses again', async () => {
    const prefix = uniquePrefix();
    const found = (name: string, n: number) =>
      Array.from({ length: n }, (_, i) => account(`${prefix}_${name}${i}`, 'active', [contact(`${prefix}_${name}${i}_c`)]));
    const [above, crossing, below] = [found('above', 3), found('cross', 3), found('below', 1)];
    const noContacts = [account(`${prefix}_n0`), account(`${prefix}_n1`)];
    const lastNoContact = [account(`${prefix}_n2`)];
    await importAccounts([...above, ...crossing, ...below, ...noContacts, ...lastNoContact]);
    const org = await newOrganization({ smbCredits: 12 });
    await limits().setLimits(org.organizationId, { lowBalanceThreshold: 5 });
    const ids = (list: { accountId: string }[]) => list.map((a) => a.accountId);

    // 12 → 9: above the threshold: nothing.
    const first = await createApiCampaign(api(), org.apiKey, ids(above));
    expect((await enrich(api(), org.apiKey, first)).status).toBe(200);
    expect(await eventsOf(org.organizationId, 'organization.credits_low')).toEqual([]);
    // 9 → 6: still at or above 5: nothing. Then 6 → 4 crosses (a campaign of 2 accounts without contacts).
    const second = await createApiCampaign(api(), org.apiKey, ids(crossing));
    expect((await enrich(api(), org.apiKey, second)).status).toBe(200);
    expect(await eventsOf(org.organizationId, 'organization.credits_low')).toEqual([]);
    const third = await createApiCampaign(api(), org.apiKey, ids(noContacts));
    const launched = await enrich(api(), org.apiKey, third);
    expect(launched.status).toBe(200);
    // Retried (a repeat call while enriching): no new charge, no new event.
    expect((await enrich(api(), org.apiKey, third)).data.credits.charged).toBe(2);
    let events = await eventsOf(org.organizationId, 'organization.credits_low');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ organizationId: org.organizationId, credits: { smb: 4, threshold: 5 } });

    // The campaign found no contact: its refund takes the balance back to 6, above the threshold.
    await waitForStatus(api(), org.apiKey, third, 'enriched');
    expect((await call(api(), DESCRIBE, { apiKey: org.apiKey })).headers.get('credits-remaining')).toBe('6');
    // 6 → 5: not below; then a charge from 5 to 4 crosses again: a second event.
    const fourth = await createApiCampaign(api(), org.apiKey, ids(below));
    expect((await enrich(api(), org.apiKey, fourth)).status).toBe(200);
    expect(await eventsOf(org.organizationId, 'organization.credits_low')).toHaveLength(1);
    const fifth = await createApiCampaign(api(), org.apiKey, ids(lastNoContact));
    expect((await enrich(api(), org.apiKey, fifth)).status).toBe(200);
    events = await eventsOf(org.organizationId, 'organization.credits_low');
    expect(events.map((e) => e.credits)).toEqual(
      expect.arrayContaining([
        { smb: 4, threshold: 5 },
        { smb: 4, threshold: 5 },
      ]),
    );
    expect(events).toHaveLength(2);
  });
});
