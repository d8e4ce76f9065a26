/**
 * Recency and CRM targets from per-organization lists (decisions §4, §7;
 * docs/data-model.md "Recency and CRM targets"), through HTTP against
 * DynamoDB Local and the local S3 endpoint: the window's start exact to the
 * millisecond, campaigns completing together, CRM list compaction, and the
 * evaluation's DynamoDB calls (one key per account: ceil(N / 100) BatchGetItem).
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb, s3 } from '../../lib/aws';
import { config } from '../../lib/config';
import { batchGet, batchPut } from '../../lib/db/batch';
import { keys } from '../../lib/db/table';
import { evaluateLaunch } from '../../lib/enrichment/evaluate';
import { newCampaignId } from '../../lib/ids';
import { objectKeys } from '../../lib/objects';
import { CRM_LISTS_BEFORE_COMPACTION } from '../../lib/history/store';
import { migrateAccountHistory } from '../../lib/migrations/account-history';
import { accountHistory, accountLists, evaluationDependencies, organizations } from '../../lib/root';
import { call, newOrganization, useApi } from '../support/api';
import { DAY_MS, account, activeAccounts, createApiCampaign, enrich, gate, importAccounts, pollUntil, uniquePrefix, useTestWarehouses, waitForStatus } from './support';

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

describe('recency markers (decisions §4)', () => {
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
    await accountHistory().recordEnrichment(organizationId, [ids[0]!], at(windowStart), newCampaignId());
    await accountHistory().recordEnrichment(organizationId, [ids[1]!], at(windowStart + 1), newCampaignId());
    await accountHistory().recordEnrichment(organizationId, [ids[2]!], at(windowStart - 1), newCampaignId());
    await accountHistory().recordEnrichment(organizationId, [ids[3]!], at(launchAt), newCampaignId());
    // A later enrichment of an account counts even when an older one sits outside the window.
    await accountHistory().recordEnrichment(organizationId, [ids[2]!, ids[4]!], at(windowStart - DAY_MS), newCampaignId());
    await accountHistory().recordEnrichment(organizationId, [ids[4]!], at(windowStart + 1_000), newCampaignId());

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(launchAt);
    const quote = await call(api(), QUOTE, { apiKey, body: { campaignId } });
    vi.useRealTimers();
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    // ids[1], ids[3] and ids[4] completed strictly after the window's start; ids[0] exactly at it, ids[2] before it.
    expect(quote.data.accounts).toEqual({ requested: 5, eligible: 2, excluded: { total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 } });

    // The window's start as the marker listing sees it: facts read from it carry the latest completion per account.
    const facts = await accountHistory().getFacts(organizationId, ids, { enrichedAfter: windowStart });
    expect(ids.map((id) => facts.get(id)?.lastEnrichedAt)).toEqual([undefined, at(windowStart + 1), undefined, at(launchAt), at(windowStart + 1_000)]);
  });

  it('campaigns completing together with shared accounts: each account takes the later completion, before and after the markers', async () => {
    const p = uniquePrefix();
    const [x, y, z] = [`${p}_x`, `${p}_y`, `${p}_z`];
    await importAccounts([x, y, z].map((id) => account(id)));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });

    // Both campaigns wait in FindContacts, then are let go together; their markers wait too.
    const warehouse = useTestWarehouse({ holdAccounts: true });
    const markers = gate();
    const name = `heldMarkers${uniquePrefix()}`;
    s3.middlewareStack.add(
      (next) => async (args) => {
        if (String((args.input as { Key?: unknown }).Key).startsWith(objectKeys.recencyPrefix(organizationId))) await markers.promise;
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

      markers.open();
      await pollUntil(() => organizations().get(organizationId), (org) => org?.pendingRecency === undefined);
      const facts = await accountHistory().getFacts(organizationId, [x, y, z]);
      expect([x, y, z].map((id) => facts.get(id)?.lastEnrichedAt)).toEqual(expected);
      const markerQuote = await call(api(), QUOTE, { apiKey, body: { campaignId: await createApiCampaign(api(), apiKey, [x, y, z], 1) } });
      expect(markerQuote.data.accounts.excluded).toEqual({ total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 });
      // One marker per campaign: the eligible list copied, nothing per account.
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: objectKeys.recencyPrefix(organizationId) }));
      expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(
        [objectKeys.recencyMarker(organizationId, doneA.completedAt, a), objectKeys.recencyMarker(organizationId, doneB.completedAt, b)].sort(),
      );
    } finally {
      markers.open();
      s3.middlewareStack.remove(name);
    }
  });
});

describe('CRM target lists (decisions §7)', () => {
  it('keeps every target across imports and compacts the lists once they pile up', async () => {
    const { organizationId } = await newOrganization({ smbCredits: 0 });
    const p = uniquePrefix();
    const imports = CRM_LISTS_BEFORE_COMPACTION + 3;
    for (let i = 0; i < imports; i++) expect(await accountHistory().addCrmTargets(organizationId, [`${p}_${i}`, `${p}_shared`, `${p}_shared`])).toBe(2);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: objectKeys.crmPrefix(organizationId) }));
    expect(listed.KeyCount).toBeLessThanOrEqual(CRM_LISTS_BEFORE_COMPACTION);
    const ids = [...Array.from({ length: imports }, (_, i) => `${p}_${i}`), `${p}_shared`, `${p}_never`];
    const facts = await accountHistory().getFacts(organizationId, ids, { recency: false });
    expect(ids.map((id) => facts.get(id)?.crmTarget ?? false)).toEqual([...Array.from({ length: imports }, () => true), true, false]);
  });
});

describe('evaluation round trips (issue 13: one key per account)', () => {
  it('reads DynamoDB with ceil(N / 100) BatchGetItem calls and nothing else, with a recency window, markers, a pending completion and CRM targets', async () => {
    const p = uniquePrefix();
    const n = 450;
    const accounts = activeAccounts(p, n);
    const ids = accounts.map((a) => a.accountId);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10_000 });
    await accountHistory().recordEnrichment(organizationId, ids.slice(0, 10), new Date(Date.now() - DAY_MS).toISOString(), newCampaignId());
    await accountHistory().addCrmTargets(organizationId, ids.slice(10, 30));
    const campaignId = await createApiCampaign(api(), apiKey, ids, 30);

    // The evaluation itself: only the warehouse statuses touch DynamoDB.
    const pendingList = objectKeys.eligibleList(organizationId, campaignId, 'att_test');
    await accountLists().put(pendingList, ids.slice(30, 35));
    const { result, calls } = await countDynamoDbCalls(() =>
      evaluateLaunch(evaluationDependencies(organizationId), {
        organizationId,
        accountIds: ids,
        excludeEnrichedWithinDays: 30,
        now: new Date(),
        pendingRecency: [{ campaignId: newCampaignId(), completedAt: new Date(Date.now() - 1_000).toISOString(), eligibleObjectKey: pendingList }],
      }),
    );
    expect(calls).toEqual({ BatchGetItem: Math.ceil(n / 100) });
    expect(result.excluded).toEqual({ total: 35, invalid: 0, recentlyEnriched: 15, crmExcluded: 20 });

    // Through HTTP, the quote adds only its fixed reads (API key, campaign, organization) to the same BatchGetItem count.
    const quoted = await countDynamoDbCalls(() => call(api(), QUOTE, { apiKey, body: { campaignId } }));
    expect(quoted.result.status).toBe(200);
    expect(quoted.result.data.accounts.excluded).toEqual({ total: 30, invalid: 0, recentlyEnriched: 10, crmExcluded: 20 });
    expect(quoted.calls.BatchGetItem).toBe(Math.ceil(n / 100));
  });
});

describe('migration of per-account history (lib/migrations/account-history.ts)', () => {
  it('turns ENRICHED items into markers and CRM items into a CRM list, deletes them, and changes nothing the second time', async () => {
    const { organizationId } = await newOrganization({ smbCredits: 0 });
    const p = uniquePrefix();
    const [older, newer] = [new Date(Date.now() - 3 * DAY_MS).toISOString(), new Date(Date.now() - DAY_MS).toISOString()];
    const [campaignA, campaignB] = [newCampaignId(), newCampaignId()];
    const legacy = [
      ...[`${p}_1`, `${p}_2`].map((accountId) => ({ ...keys.accountEnrichment(organizationId, accountId), type: 'accountEnrichment', accountId, lastEnrichedAt: older, campaignId: campaignA })),
      { ...keys.accountEnrichment(organizationId, `${p}_3`), type: 'accountEnrichment', accountId: `${p}_3`, lastEnrichedAt: newer, campaignId: campaignB },
      ...[`${p}_3`, `${p}_4`].map((accountId) => ({ ...keys.crmTarget(organizationId, accountId), type: 'crmTarget', accountId, addedAt: older })),
    ];
    await batchPut(ddb, config.tableName, legacy);

    const history = accountHistory();
    const first = await migrateAccountHistory({ client: ddb, tableName: config.tableName, history });
    expect(first).toMatchObject({ enrichmentItems: 3, crmItems: 2 });
    const ids = [1, 2, 3, 4, 5].map((i) => `${p}_${i}`);
    const facts = await history.getFacts(organizationId, ids);
    expect(ids.map((id) => facts.get(id) ?? null)).toEqual([
      { lastEnrichedAt: older, crmTarget: false },
      { lastEnrichedAt: older, crmTarget: false },
      { lastEnrichedAt: newer, crmTarget: true },
      { crmTarget: true },
      null,
    ]);
    expect(await batchGet(ddb, config.tableName, legacy.map(({ pk, sk }) => ({ pk, sk })))).toEqual([]);
    expect(await migrateAccountHistory({ client: ddb, tableName: config.tableName, history })).toEqual({ markers: 0, enrichmentItems: 0, crmItems: 0 });
  });
});
