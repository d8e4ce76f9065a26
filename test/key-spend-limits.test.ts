/**
 * Per-key credit limits (docs/authentication.md#per-key-credit-limits), through
 * HTTP against the local stack: 402 `key_spend_limit_exceeded` for a launch
 * over the key's `maxCreditsPerLaunch` (`period: "launch"`) or its
 * `monthlyCredits` this UTC month (`period: "month"`), right after
 * `spend_limit_exceeded`; quote's `outcome`; enforced in the launch
 * transaction (racing launches with one key never pass it); refunds give the
 * key room back; ledger entries store the launching key's ID without showing it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { monthOf } from '../lib/organizations/limits';
import { limits } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  account,
  balance,
  createApiCampaign,
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
const QUOTE = '/v1/campaigns/quote';

/** A draft of `size` active accounts with one contact each (found: no refund). */
const draftOf = (apiKey: string, size: number): Promise<string> => draftOfSize(api(), apiKey, size);

/** A key made through keys/create that may launch, with these credit limits: its ID and secret. */
async function launchKey(
  apiKey: string,
  keyLimits: { maxCreditsPerLaunch?: number; monthlyCredits?: number },
): Promise<{ id: string; secret: string }> {
  const created = await call(api(), '/v1/keys/create', {
    apiKey,
    body: { name: 'Launcher', scopes: ['campaigns:write', 'campaigns:launch', 'campaigns:read'], limits: keyLimits },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { id: created.data.key.id, secret: created.data.secret };
}

/** The key's net charges this UTC month, as its counter holds them (credits). */
const keySpent = (organizationId: string, keyId: string) => limits().spent(organizationId, monthOf(new Date()), keyId);

describe('maxCreditsPerLaunch (period "launch")', () => {
  it('refuses a launch charging more, with exact details, quote shows it, nothing is charged; a launch within it goes', async () => {
    const org = await newOrganization({ smbCredits: 50 });
    const key = await launchKey(org.apiKey, { maxCreditsPerLaunch: 2 });
    const large = await draftOf(key.secret, 3);
    const small = await draftOf(key.secret, 2);
    expect((await call(api(), QUOTE, { apiKey: key.secret, body: { campaignId: large } })).data.outcome).toBe('key_spend_limit_exceeded');
    // Another key of the organization (no limits) is not held to it.
    expect((await call(api(), QUOTE, { apiKey: org.apiKey, body: { campaignId: large } })).data.outcome).toBe('launchable');
    expectError(await enrich(api(), key.secret, large), 402, 'key_spend_limit_exceeded', {
      limit: 2,
      required: 3,
      spent: null,
      period: 'launch',
    });
    expect(await balance(org.organizationId)).toBe(50);
    expect((await ledgerOf(org.organizationId, large)).entries).toEqual([]);
    expect(await keySpent(org.organizationId, key.id)).toBe(0);
    expect((await call(api(), '/v1/campaigns/get', { apiKey: org.apiKey, body: { campaignId: large } })).data.status).toBe('draft');

    expect((await enrich(api(), key.secret, small)).status).toBe(200);
    expect(await balance(org.organizationId)).toBe(48);
  });

  it("comes right after spend_limit_exceeded: the organization's limit is answered first", async () => {
    const org = await newOrganization({ smbCredits: 50 });
    await limits().setLimits(org.organizationId, { monthlySpendLimit: 2 });
    const key = await launchKey(org.apiKey, { maxCreditsPerLaunch: 1 });
    const draft = await draftOf(key.secret, 3);
    expect((await call(api(), QUOTE, { apiKey: key.secret, body: { campaignId: draft } })).data.outcome).toBe('spend_limit_exceeded');
    expectError(await enrich(api(), key.secret, draft), 402, 'spend_limit_exceeded', { limit: 2, spent: 0, required: 3 });
    await limits().setLimits(org.organizationId, { monthlySpendLimit: null });
    expectError(await enrich(api(), key.secret, draft), 402, 'key_spend_limit_exceeded', {
      limit: 1,
      required: 3,
      spent: null,
      period: 'launch',
    });
  });
});

describe('monthlyCredits (period "month")', () => {
  it("refuses a launch that would take the key's month over it, with exact details; the charge's ledger entry stores the key, org/ledger does not show it", async () => {
    const org = await newOrganization({ smbCredits: 50 });
    const key = await launchKey(org.apiKey, { monthlyCredits: 4 });
    const first = await draftOf(key.secret, 3);
    const second = await draftOf(key.secret, 2);
    expect((await enrich(api(), key.secret, first)).status).toBe(200);
    expect(await keySpent(org.organizationId, key.id)).toBe(3);
    const charge = (await ledgerOf(org.organizationId, first)).entries;
    expect(charge).toHaveLength(1);
    expect(charge[0]).toMatchObject({ kind: 'charge', amount: -3, keyId: key.id });

    expect((await call(api(), QUOTE, { apiKey: key.secret, body: { campaignId: second } })).data.outcome).toBe('key_spend_limit_exceeded');
    expectError(await enrich(api(), key.secret, second), 402, 'key_spend_limit_exceeded', {
      limit: 4,
      required: 2,
      spent: 3,
      period: 'month',
    });
    expect(await balance(org.organizationId)).toBe(47);
    expect((await ledgerOf(org.organizationId, second)).entries).toEqual([]);
    expect(await keySpent(org.organizationId, key.id)).toBe(3);

    // The public ledger shows the entry in the contract's shape: no keyId.
    const page = await call(api(), '/v1/org/ledger', { apiKey: org.apiKey, body: { filters: { campaignId: first } } });
    expect(page.status).toBe(200);
    expect(page.data.entries).toHaveLength(1);
    expect(Object.keys(page.data.entries[0]).sort()).toEqual([
      'amount',
      'attemptId',
      'campaignId',
      'createdAt',
      'id',
      'kind',
      'note',
      'reason',
    ]);

    // A key without limits launches the same draft: it is the key's limit, not the organization's.
    expect((await enrich(api(), org.apiKey, second)).status).toBe(200);
    expect(await balance(org.organizationId)).toBe(45);
    expect(await keySpent(org.organizationId, key.id)).toBe(3);
  });

  it('refunds give the key its room back, and the refund entry names the launching key', async () => {
    const org = await newOrganization({ smbCredits: 20 });
    const key = await launchKey(org.apiKey, { monthlyCredits: 3 });
    const prefix = uniquePrefix();
    const noContacts = [account(`${prefix}_a`), account(`${prefix}_b`), account(`${prefix}_c`)];
    await importAccounts(noContacts);
    const first = await createApiCampaign(
      api(),
      key.secret,
      noContacts.map((a) => a.accountId),
    );
    expect((await enrich(api(), key.secret, first)).status).toBe(200);
    expect(await keySpent(org.organizationId, key.id)).toBe(3);
    await waitForStatus(api(), key.secret, first, 'enriched');
    expect(await keySpent(org.organizationId, key.id)).toBe(0);
    const entries = (await ledgerOf(org.organizationId, first)).entries;
    expect(entries.map((e) => [e.kind, e.amount, e.keyId]).sort()).toEqual([
      ['charge', -3, key.id],
      ['refund', 3, key.id],
    ]);
    // The whole monthly limit is available again.
    const again = await draftOf(key.secret, 3);
    expect((await enrich(api(), key.secret, again)).status).toBe(200);
    expect(await keySpent(org.organizationId, key.id)).toBe(3);
  });

  it('racing launches with one key never pass its monthly limit; refused launches charge nothing (fast-check interleavings)', async () => {
    await fc.assert(
      fc.asyncProperty(...racingLaunchInputs, async (sizes, limit, delays) => {
        const org = await newOrganization({ smbCredits: 100 });
        const key = await launchKey(org.apiKey, { monthlyCredits: limit });
        const { launched, refused: refusals, charged } = await raceLaunches(api(), key.secret, sizes, delays);
        for (const refused of refusals) {
          expect(refused.res.status, JSON.stringify(refused.res.body)).toBe(402);
          expect(refused.res.error?.code).toBe('key_spend_limit_exceeded');
          expect(refused.res.error?.details).toMatchObject({ limit, required: refused.size, period: 'month' });
          expect(refused.res.error?.details.spent + refused.size).toBeGreaterThan(limit);
          expect((await ledgerOf(org.organizationId, refused.campaignId)).entries).toEqual([]);
        }
        expect(charged).toBeLessThanOrEqual(limit);
        expect(await keySpent(org.organizationId, key.id)).toBe(charged);
        expect(await balance(org.organizationId)).toBe(100 - charged);
        for (const a of launched) expect((await ledgerOf(org.organizationId, a.campaignId)).entries.map((e) => e.keyId)).toEqual([key.id]);
        // Whatever the order, a launch that fits what is left was not refused.
        if (launched.length === 0) expect(Math.min(...sizes)).toBeGreaterThan(limit);
      }),
      { numRuns: 6 },
    );
  });
});
