/**
 * Recency and CRM targets from the account history (docs/launch.md, README.md#operator-cli;
 * docs/data-model.md "Recency and CRM targets"), through HTTP against
 * DynamoDB Local and the local S3 endpoint: the window's start exact to the
 * millisecond, campaigns completing together, CRM targets across imports, and
 * the evaluation's DynamoDB calls (ceil(N / 100) BatchGetItem of warehouse
 * accounts, ceil(buckets / 100) of history buckets).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb } from '../../lib/aws';
import { config } from '../../lib/config';
import { batchGet, batchPut } from '../../lib/db/batch';
import * as keys from '../../lib/db/keys';
import { evaluateLaunch } from '../../lib/enrichment/evaluate';
import { newCampaignId } from '../../lib/ids';
import { objectKeys } from '../../lib/objects';
import { addressOf, bucketOf, createAccountHistoryStore, decodeBucket, fingerprintOf } from '../../lib/history/store';
import { migrateAccountHistory } from '../../lib/migrations/account-history';
import { accountHistory, accountLists, evaluationDependencies, organizations } from '../../lib/root';
import { call, newOrganization, useApi } from '../support/api';
import { withScratchTable } from '../support/scratch-table';
import {
  DAY_MS,
  account,
  activeAccounts,
  historyBucketPrefix,
  createApiCampaign,
  enrich,
  gate,
  importAccounts,
  pollUntil,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();
const QUOTE = '/v1/campaigns/quote';

afterEach(() => {
  vi.useRealTimers();
});

/** Counts the DynamoDB commands sent by this process while `run` runs, by command name. */
async function countDynamoDbCalls<T>(run: () => Promise<T>): Promise<{ result: T; calls: Record<string, number> }> {
  const calls: Record<string, number> = {};
  const name = `countCalls${uniquePrefix()}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, '');
      calls[command] = (calls[command] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), calls };
  } finally {
    ddb.middlewareStack.remove(name);
  }
}

describe('recency (docs/launch.md)', () => {
  it('excludes an enrichment completed 1 ms after launch time − days × 86,400 s, and not one completed exactly then', async () => {
    const p = uniquePrefix();
    const ids = Array.from({ length: 5 }, (_, i) => `${p}_${i}`);
    await importAccounts(activeAccounts(p, 5));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const campaignId = await createApiCampaign(api(), apiKey, ids, 30);

    // The quote's clock is pinned (only Date is faked; timers run), so the window's start is known to the millisecond.
    // Near the real time: the S3 endpoint refuses requests signed more than 15 minutes off.
    const launchAt = Date.now() + 2_000;
    const windowStart = launchAt - 30 * 86_400 * 1000;
    const at = (ms: number) => new Date(ms).toISOString();
    await accountHistory().recordEnrichment(organizationId, [ids[0]!], at(windowStart));
    await accountHistory().recordEnrichment(organizationId, [ids[1]!], at(windowStart + 1));
    await accountHistory().recordEnrichment(organizationId, [ids[2]!], at(windowStart - 1));
    await accountHistory().recordEnrichment(organizationId, [ids[3]!], at(launchAt));
    // A later enrichment of an account counts even when an older one sits outside the window.
    await accountHistory().recordEnrichment(organizationId, [ids[2]!, ids[4]!], at(windowStart - DAY_MS));
    await accountHistory().recordEnrichment(organizationId, [ids[4]!], at(windowStart + 1_000));

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(launchAt);
    const quote = await call(api(), QUOTE, { apiKey, body: { campaignId } });
    vi.useRealTimers();
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    // ids[1], ids[3] and ids[4] completed strictly after the window's start; ids[0] exactly at it, ids[2] before it.
    expect(quote.data.accounts).toEqual({
      requested: 5,
      eligible: 2,
      excluded: { total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 },
    });

    // The window's start as the history read sees it: facts read from it carry the latest completion per account.
    const facts = await accountHistory().getFacts(organizationId, ids, { enrichedAfter: windowStart });
    expect(ids.map((id) => facts.get(id)?.lastEnrichedAt)).toEqual([
      undefined,
      at(windowStart + 1),
      undefined,
      at(launchAt),
      at(windowStart + 1_000),
    ]);
  });

  it('campaigns completing together with shared accounts: each account takes the later completion, before and after the history is written', async () => {
    const p = uniquePrefix();
    const [x, y, z] = [`${p}_x`, `${p}_y`, `${p}_z`];
    await importAccounts([x, y, z].map((id) => account(id)));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });

    // Both campaigns wait in FindContacts, then are let go together; their history writes wait too.
    const warehouse = useTestWarehouse({ holdAccounts: true });
    const writes = gate();
    const name = `heldHistory${uniquePrefix()}`;
    ddb.middlewareStack.add(
      (next) => async (args) => {
        const item = (args.input as { Item?: { pk?: unknown } }).Item;
        if (String(item?.pk).startsWith(historyBucketPrefix(organizationId))) await writes.promise;
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const a = await createApiCampaign(api(), apiKey, [x, y]);
      const b = await createApiCampaign(api(), apiKey, [y, z]);
      expect((await enrich(api(), apiKey, a)).status).toBe(200);
      expect((await enrich(api(), apiKey, b)).status).toBe(200);
      await warehouse.called('getAccounts', 2);
      warehouse.release();
      const [doneA, doneB] = await Promise.all([waitForStatus(api(), apiKey, a, 'enriched'), waitForStatus(api(), apiKey, b, 'enriched')]);
      const later = doneA.completedAt > doneB.completedAt ? doneA.completedAt : doneB.completedAt;
      const expected = [doneA.completedAt, later, doneB.completedAt];

      // Both completions wait on the organization item; an evaluation counts all three accounts.
      expect((await organizations().get(organizationId))!.pendingRecency).toHaveLength(2);
      const pendingQuote = await call(api(), QUOTE, { apiKey, body: { campaignId: await createApiCampaign(api(), apiKey, [x, y, z], 1) } });
      expect(pendingQuote.data.accounts.excluded).toEqual({ total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 });

      writes.open();
      await pollUntil(
        () => organizations().get(organizationId),
        (org) => org?.pendingRecency === undefined,
      );
      const facts = await accountHistory().getFacts(organizationId, [x, y, z]);
      expect([x, y, z].map((id) => facts.get(id)?.lastEnrichedAt)).toEqual(expected);
      const historyQuote = await call(api(), QUOTE, { apiKey, body: { campaignId: await createApiCampaign(api(), apiKey, [x, y, z], 1) } });
      expect(historyQuote.data.accounts.excluded).toEqual({ total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 });
      // One entry per account, not per campaign: y, enriched by both, appears once in the whole history.
      const { buckets } = await accountHistory().state(organizationId);
      const items = await batchGet(
        ddb,
        config.tableName,
        Array.from({ length: buckets }, (_, bucket) => keys.accountHistoryBucket(organizationId, bucket)),
      );
      const stored = items.flatMap((item) => [...decodeBucket(item.entries as Uint8Array).keys()]);
      expect([x, y, z].map((id) => stored.filter((fingerprint) => fingerprint === fingerprintOf(id)).length)).toEqual([1, 1, 1]);
    } finally {
      writes.open();
      ddb.middlewareStack.remove(name);
    }
  });
});

describe('CRM targets (README.md#operator-cli)', () => {
  it('keeps every target across imports, each once', async () => {
    const { organizationId } = await newOrganization({ smbCredits: 0 });
    const p = uniquePrefix();
    const imports = 11;
    for (let i = 0; i < imports; i++)
      expect(await accountHistory().addCrmTargets(organizationId, [`${p}_${i}`, `${p}_shared`, `${p}_shared`])).toBe(2);
    const ids = [...Array.from({ length: imports }, (_, i) => `${p}_${i}`), `${p}_shared`, `${p}_never`];
    const facts = await accountHistory().getFacts(organizationId, ids, { recency: false });
    expect(ids.map((id) => facts.get(id)?.crmTarget ?? false)).toEqual([...Array.from({ length: imports }, () => true), true, false]);
  });
});

describe('evaluation round trips (issue 13: one key per account; issue 29: one per history bucket)', () => {
  it('reads DynamoDB with ceil(N / 100) + ceil(buckets / 100) BatchGetItem calls and nothing else, with a recency window, history, a pending completion and CRM targets', async () => {
    const p = uniquePrefix();
    const n = 450;
    const accounts = activeAccounts(p, n);
    const ids = accounts.map((a) => a.accountId);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10_000 });
    await accountHistory().recordEnrichment(organizationId, ids.slice(0, 10), new Date(Date.now() - DAY_MS).toISOString());
    await accountHistory().addCrmTargets(organizationId, ids.slice(10, 30));
    const campaignId = await createApiCampaign(api(), apiKey, ids, 30);

    // The evaluation itself: only the warehouse accounts and the history buckets of its IDs touch DynamoDB.
    const historyBuckets = (await organizations().get(organizationId))!.historyBuckets ?? 1;
    const historyCalls = Math.ceil(new Set(ids.map((id) => bucketOf(addressOf(fingerprintOf(id)), historyBuckets).bucket)).size / 100);
    const pendingList = objectKeys.eligibleList(organizationId, campaignId, 'att_test');
    await accountLists().put(pendingList, ids.slice(30, 35));
    const { result, calls } = await countDynamoDbCalls(() =>
      evaluateLaunch(evaluationDependencies(organizationId), {
        organizationId,
        accountIds: ids,
        excludeEnrichedWithinDays: 30,
        now: new Date(),
        historyBuckets,
        pendingRecency: [
          { campaignId: newCampaignId(), completedAt: new Date(Date.now() - 1_000).toISOString(), eligibleObjectKey: pendingList },
        ],
      }),
    );
    expect(calls).toEqual({ BatchGetItem: Math.ceil(n / 100) + historyCalls });
    expect(result.excluded).toEqual({ total: 35, invalid: 0, recentlyEnriched: 15, crmExcluded: 20 });

    // Through HTTP, the quote adds only its fixed reads (API key, campaign, organization) to the same BatchGetItem count.
    const quoted = await countDynamoDbCalls(() => call(api(), QUOTE, { apiKey, body: { campaignId } }));
    expect(quoted.result.status).toBe(200);
    expect(quoted.result.data.accounts.excluded).toEqual({ total: 30, invalid: 0, recentlyEnriched: 10, crmExcluded: 20 });
    expect(quoted.calls.BatchGetItem).toBe(Math.ceil(n / 100) + historyCalls);
  });
});

describe('migration of per-account history (lib/migrations/account-history.ts)', () => {
  it('turns ENRICHED and CRM items into history entries, deletes them, and changes nothing the second time', async () => {
    const { organizationId } = await newOrganization({ smbCredits: 0 });
    // A table of its own: the migration scans the whole table, twice here, and should read this test's items, not every other test's.
    await withScratchTable([organizationId], async (tableName) => {
      const p = uniquePrefix();
      const [older, newer] = [new Date(Date.now() - 3 * DAY_MS).toISOString(), new Date(Date.now() - DAY_MS).toISOString()];
      const [campaignA, campaignB] = [newCampaignId(), newCampaignId()];
      const legacy = [
        ...[`${p}_1`, `${p}_2`].map((accountId) => ({
          ...keys.accountEnrichment(organizationId, accountId),
          type: 'accountEnrichment',
          accountId,
          lastEnrichedAt: older,
          campaignId: campaignA,
        })),
        {
          ...keys.accountEnrichment(organizationId, `${p}_3`),
          type: 'accountEnrichment',
          accountId: `${p}_3`,
          lastEnrichedAt: newer,
          campaignId: campaignB,
        },
        ...[`${p}_3`, `${p}_4`].map((accountId) => ({
          ...keys.crmTarget(organizationId, accountId),
          type: 'crmTarget',
          accountId,
          addedAt: older,
        })),
      ];
      await batchPut(ddb, tableName, legacy);

      const history = createAccountHistoryStore({ client: ddb, tableName, accountLists: accountLists() });
      const first = await migrateAccountHistory({ client: ddb, tableName, history });
      expect(first).toEqual({ markers: 2, enrichmentItems: 3, crmItems: 2 });
      const ids = [1, 2, 3, 4, 5].map((i) => `${p}_${i}`);
      const facts = await history.getFacts(organizationId, ids);
      expect(ids.map((id) => facts.get(id) ?? null)).toEqual([
        { lastEnrichedAt: older, crmTarget: false },
        { lastEnrichedAt: older, crmTarget: false },
        { lastEnrichedAt: newer, crmTarget: true },
        { crmTarget: true },
        null,
      ]);
      expect(
        await batchGet(
          ddb,
          tableName,
          legacy.map(({ pk, sk }) => ({ pk, sk })),
        ),
      ).toEqual([]);
      expect(await migrateAccountHistory({ client: ddb, tableName, history })).toEqual({ markers: 0, enrichmentItems: 0, crmItems: 0 });
    });
  });
});
