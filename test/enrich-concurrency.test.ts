/**
 * Concurrent launches (docs/errors.md, docs/launch.md): the charge, the capacity
 * reservation and `draft`→`enriching` are one atomic write, so no
 * interleaving of concurrent enrich calls may overdraw credits, exceed the
 * organization's ceiling, or charge one campaign twice.
 *
 * The contact step is held (a warehouse adapter whose `getAccounts` waits)
 * so no attempt completes during a burst: every launched campaign keeps its
 * charge and its capacity until the test has checked the figures.
 */
import { describe, expect, it } from 'vitest';
import pMap from 'p-map';
import { organizations } from '../lib/root';
import { newOrganization, useApi, type ApiResponse } from './support/api';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  describeOrg,
  enrich,
  importAccounts,
  NO_ERASURE,
  ledgerOf,
  useTestWarehouses,
  uniquePrefix,
} from './enrichment/support';

const api = useApi();

/** Installs a test warehouse adapter for this test only. */
const useTestWarehouse = useTestWarehouses();

/** `count` campaigns of `size` eligible accounts each (fresh warehouse accounts), created over HTTP. */
async function campaignsOf(apiKey: string, count: number, size: number): Promise<string[]> {
  const p = uniquePrefix();
  const accounts = activeAccounts(p, count * size);
  await importAccounts(accounts, NO_ERASURE);
  return pMap(
    Array.from({ length: count }, (_, i) => i),
    (i) =>
      createApiCampaign(
        api(),
        apiKey,
        accounts.slice(i * size, (i + 1) * size).map((a) => a.accountId),
      ),
    { concurrency: 10 },
  );
}

/** Classifies burst responses; fails on anything but a launch, a 402 or a 429. */
function outcomes(responses: ApiResponse[]) {
  const launched = responses.filter((r) => r.status === 200);
  const insufficient = responses.filter((r) => r.status === 402);
  const overCeiling = responses.filter((r) => r.status === 429);
  const other = responses.filter((r) => ![200, 402, 429].includes(r.status));
  expect(other.map((r) => JSON.stringify(r.body))).toEqual([]);
  for (const r of launched) expect(r.data).toMatchObject({ status: 'enriching', accounts: { eligible: 10 }, credits: { charged: 10 } });
  for (const r of insufficient) {
    expect(r.error?.code).toBe('insufficient_credits');
    expect(Object.keys(r.error?.details ?? {}).sort()).toEqual(['available', 'required', 'shortfall']);
    const { available, required, shortfall } = r.error!.details;
    expect(required).toBe(10);
    expect(available).toBeLessThan(required);
    expect(available).toBeGreaterThanOrEqual(0);
    expect(shortfall).toBe(required - available);
  }
  for (const r of overCeiling) {
    expect(r.error?.code).toBe('concurrency_limit_exceeded');
    expect(Object.keys(r.error?.details ?? {}).sort()).toEqual(['inFlight', 'limit', 'requested']);
    const { limit, inFlight, requested } = r.error!.details;
    expect(requested).toBe(10);
    expect(inFlight + requested).toBeGreaterThan(limit);
  }
  return { launched, insufficient, overCeiling };
}

describe('concurrent launches of different campaigns', () => {
  it.each([
    // Credits bind first: 230 credits pay for 23 launches of 10; the ceiling of 300 would allow 30.
    { balance: 230, ceiling: 300, external: 0, launches: 23, code: 402 },
    // The ceiling binds first: 300 − 100 enriching elsewhere leaves room for 20 launches; credits would pay 100.
    { balance: 1_000, ceiling: 300, external: 100, launches: 20, code: 429 },
  ])(
    '50 launches of 10 accounts, balance $balance, ceiling $ceiling ($external enriching elsewhere): exactly $launches launch, the rest are refused with $code',
    async ({ balance: startingBalance, ceiling, external, launches, code }) => {
      const { organizationId, apiKey } = await newOrganization({ smbCredits: startingBalance, maxEnrichingAccounts: ceiling });
      if (external > 0) await organizations().setCapacity(organizationId, { externalEnrichingAccounts: external });
      const campaignIds = await campaignsOf(apiKey, 50, 10);
      const adapter = useTestWarehouse({ holdAccounts: true });

      const responses = await Promise.all(campaignIds.map((id) => enrich(api(), apiKey, id)));
      const { launched, insufficient, overCeiling } = outcomes(responses);

      const after = await describeOrg(api(), apiKey);
      // Never overdrawn, never over the ceiling.
      expect(after.credits.smb).toBeGreaterThanOrEqual(0);
      expect(after.enrichment.enrichingAccounts).toBeLessThanOrEqual(ceiling);
      // Exactly the launches the resources allow (nothing completes during the burst, so resources only shrink).
      expect(launched).toHaveLength(launches);
      expect((code === 402 ? insufficient : overCeiling).length).toBe(50 - launches);
      expect(after.credits.smb).toBe(startingBalance - 10 * launches);
      expect(after.enrichment.enrichingAccounts).toBe(external + 10 * launches);

      // Every refusal's reason still holds once the burst is over (resources only shrank meanwhile).
      for (const r of insufficient) expect(r.error!.details.available).toBeGreaterThanOrEqual(after.credits.smb);
      for (const r of overCeiling) {
        expect(r.error!.details.limit).toBe(ceiling);
        expect(r.error!.details.inFlight).toBeLessThanOrEqual(after.enrichment.enrichingAccounts);
      }

      // The ledger: one charge of 10 per launched campaign, nothing for refused ones; charges sum to the balance drop.
      const ledgers = await Promise.all(campaignIds.map((id) => ledgerOf(organizationId, id)));
      const launchedIds = new Set(launched.map((r) => r.data.id as string));
      ledgers.forEach((ledger, i) => {
        expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual(
          launchedIds.has(campaignIds[i]!) ? [['charge', 'launch', -10]] : [],
        );
      });
      expect(ledgers.reduce((sum, l) => sum + l.charged, 0)).toBe(startingBalance - (await balance(organizationId)));
    },
  );

  it('mixed sizes against both limits: never overdrawn, never over the ceiling, every refusal justified', async () => {
    // 25 campaigns of 10 and 25 of 20 accounts (750 credits and accounts asked), 215 credits, ceiling 200:
    // near the end a 20-account launch can lack credits (402) while a 10-account one lacks room (429).
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 215, maxEnrichingAccounts: 200 });
    const [small, large] = await Promise.all([campaignsOf(apiKey, 25, 10), campaignsOf(apiKey, 25, 20)]);
    const sizeOf = new Map<string, number>([...small.map((id) => [id, 10] as const), ...large.map((id) => [id, 20] as const)]);
    const adapter = useTestWarehouse({ holdAccounts: true });

    const order = small.flatMap((id, i) => [id, large[i]!]);
    const responses = await Promise.all(order.map((id) => enrich(api(), apiKey, id)));
    const after = await describeOrg(api(), apiKey);

    const launchedCharge = responses.reduce((sum, r, i) => (r.status === 200 ? sum + sizeOf.get(order[i]!)! : sum), 0);
    expect(after.credits.smb).toBeGreaterThanOrEqual(0);
    expect(after.enrichment.enrichingAccounts).toBeLessThanOrEqual(200);
    expect(after.credits.smb).toBe(215 - launchedCharge);
    expect(after.enrichment.enrichingAccounts).toBe(launchedCharge);

    responses.forEach((r, i) => {
      const size = sizeOf.get(order[i]!)!;
      if (r.status === 200) {
        expect(r.data.credits.charged).toBe(size);
        return;
      }
      if (r.status === 402) {
        expect(r.error!.code).toBe('insufficient_credits');
        expect(r.error!.details).toEqual({
          available: r.error!.details.available,
          required: size,
          shortfall: size - r.error!.details.available,
        });
        // The balance was short then and is no larger now.
        expect(after.credits.smb).toBeLessThan(size);
        return;
      }
      expect(r.status, JSON.stringify(r.body)).toBe(429);
      expect(r.error!.code).toBe('concurrency_limit_exceeded');
      expect(r.error!.details).toEqual({ limit: 200, inFlight: r.error!.details.inFlight, requested: size });
      expect(after.enrichment.enrichingAccounts + size).toBeGreaterThan(200);
    });
    // Resources left over could not have served any refused launch.
    const refusedSizes = responses.flatMap((r, i) => (r.status === 200 ? [] : [sizeOf.get(order[i]!)!]));
    for (const size of refusedSizes) expect(after.credits.smb < size || after.enrichment.enrichingAccounts + size > 200).toBe(true);

    const ledgers = await Promise.all(order.map((id) => ledgerOf(organizationId, id)));
    expect(ledgers.reduce((sum, l) => sum + l.charged, 0)).toBe(launchedCharge);
  });
});

describe('concurrent launches of the same campaign', () => {
  it('20 concurrent enrich calls on one draft charge it once; each answers enriching or enrichment_pending', async () => {
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const [campaignId] = await campaignsOf(apiKey, 1, 10);
    const adapter = useTestWarehouse({ holdAccounts: true });

    const responses = await Promise.all(Array.from({ length: 20 }, () => enrich(api(), apiKey, campaignId!)));
    for (const r of responses) {
      if (r.status === 200) {
        expect(r.data).toMatchObject({
          id: campaignId,
          status: 'enriching',
          accounts: { requested: 10, eligible: 10 },
          credits: { charged: 10 },
        });
      } else {
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.error).toEqual({ code: 'enrichment_pending', message: expect.stringMatching(/\S/) });
      }
    }
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);

    const ledger = await ledgerOf(organizationId, campaignId!);
    expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([['charge', 'launch', -10]]);
    expect(await balance(organizationId)).toBe(90);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(10);

    // A retry after the burst sees the launched campaign, still charged once.
    const retry = await enrich(api(), apiKey, campaignId!);
    expect(retry.status).toBe(200);
    expect(retry.data).toMatchObject({ status: 'enriching', credits: { charged: 10, remaining: 90 } });
    expect((await ledgerOf(organizationId, campaignId!)).entries).toHaveLength(1);
  });
});
