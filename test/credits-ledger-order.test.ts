/**
 * Ledger entries are ordered by when they were written (issue #31;
 * docs/data-model.md "Ledger"): a reader that pages `POST /v1/org/ledger`
 * newest first and stops at the first entry it has already seen (how a client
 * syncs a ledger) never misses one, while launches, operator adjustments and
 * completions write concurrently. A launch whose evaluation is slow used to
 * date its charge when it started, so the charge landed below entries written
 * meanwhile, behind the reader's cursor.
 */
import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { ledgerEntries, movementItems, transactMovement } from '../lib/credits/ledger';
import { ledger } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  enrich,
  importAccounts,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

/** A client syncing the ledger: each poll pages newest first until it meets an entry it has seen (or the end). */
function ledgerReader(apiKey: string) {
  const seen = new Set<string>();
  return {
    seen,
    async poll(): Promise<void> {
      const fresh: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const res = await call(api(), '/v1/org/ledger', { apiKey, body: { limit: 2, ...(cursor ? { cursor } : {}) } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        for (const entry of res.data.entries as { id: string }[]) {
          if (seen.has(entry.id)) {
            fresh.forEach((id) => seen.add(id));
            return;
          }
          fresh.push(entry.id);
        }
        if (!res.data.nextCursor) break;
        cursor = res.data.nextCursor;
      }
      fresh.forEach((id) => seen.add(id));
    },
  };
}

describe('newest-first ledger pages under concurrent writers', () => {
  it('a reader syncing newest first never misses an entry: a slow launch, adjustments and completion at random moments (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 3 }),
        async (adjustmentDelays, pollsWhileHeld) => {
          const accounts = activeAccounts(uniquePrefix(), 2);
          await importAccounts(accounts);
          const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
          const campaignId = await createApiCampaign(
            api(),
            apiKey,
            accounts.map((a) => a.accountId),
          );
          const reader = ledgerReader(apiKey);
          await reader.poll();

          // The launch evaluates slowly (its warehouse read is held): it started before the adjustments below.
          const held = useTestWarehouse({ holdStatuses: true });
          const launching = enrich(api(), apiKey, campaignId);
          await held.called('getAccountStatuses');
          await Promise.all([
            ...adjustmentDelays.map(async (delay, i) => {
              await sleep(delay);
              await ledger().adjust(organizationId, i + 1, `race ${i}`);
            }),
            (async () => {
              for (let i = 0; i < pollsWhileHeld; i++) await reader.poll();
            })(),
          ]);
          await reader.poll();
          held.release();
          const launched = await launching;
          expect(launched.status, JSON.stringify(launched.body)).toBe(200);
          await reader.poll();
          await waitForStatus(api(), apiKey, campaignId, 'enriched');
          await reader.poll();

          const all = await ledger().entriesOf(organizationId);
          expect(all.map((e) => e.kind).sort()).toEqual(['adjustment', 'charge', ...adjustmentDelays.map(() => 'adjustment')].sort());
          expect([...reader.seen].sort()).toEqual(all.map((e) => e.id).sort());
          // Written order is listed order: createdAt grows with every entry written.
          const listed = (await call(api(), '/v1/org/ledger', { apiKey, body: { limit: 100 } })).data.entries as {
            id: string;
            createdAt: string;
          }[];
          expect(listed.map((e) => e.createdAt)).toEqual([...listed.map((e) => e.createdAt)].sort().reverse());
          expect(new Set(listed.map((e) => e.createdAt)).size).toBe(listed.length);
          useTestWarehouse();
        },
      ),
      { numRuns: 6 },
    );
  });

  it('a writer whose clock lags a minute still stamps its entry after the last one written (one extra try)', async () => {
    const { organizationId } = await newOrganization({ smbCredits: 10 });
    const last = (await ledger().adjust(organizationId, 5, 'first')).entry!;
    let tries = 0;
    const { outcome, createdAt } = await transactMovement(
      ddb,
      (stamp) => {
        tries++;
        return {
          TransactItems: movementItems(
            config.tableName,
            ledgerEntries.adjustment({ organizationId, credits: 1, createdAt: stamp, movementId: `lagging-${organizationId}` }),
          ),
        };
      },
      0,
      () => new Date(Date.now() - 60_000),
    );
    expect(outcome.ok).toBe(true);
    expect(tries).toBe(2);
    expect(createdAt > last.createdAt).toBe(true);
    expect(Date.parse(createdAt) - Date.parse(last.createdAt)).toBe(1);
    const entries = await ledger().entriesOf(organizationId);
    expect(entries.map((e) => e.amount)).toEqual([10, 5, 1]);
    expect(await ledger().audit(organizationId)).toMatchObject({ balance: 16, ledgerSum: 16 });
  });
});
