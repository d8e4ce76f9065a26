/**
 * Enrich (launch) a campaign end to end (docs/README.md#a-campaigns-life-in-one-paragraph,
 * docs/limits.md, docs/errors.md, docs/launch.md, docs/csv.md): real HTTP
 * against the local API server, DynamoDB Local, the local S3 endpoint and the
 * real workflow definition run locally.
 *
 * Every figure is spelled out from a warehouse the test defines (account IDs
 * prefixed per test, since the warehouse is global to the table), never
 * computed with the code under test. Slow launches and slow contact steps
 * are made with warehouse adapters that hold a call until the test lets it go.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { accountListKey } from '../lib/account-lists/account-list';
import { createCampaign } from '../lib/campaigns/use-cases';
import type { CampaignRecord } from '../lib/campaigns/model';
import { newCampaignId } from '../lib/ids';
import { accountHistory, accountLists, campaigns, ledger as creditLedger, organizations } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  DAY_MS,
  ENRICH,
  ISO_UTC,
  account,
  activeAccounts,
  balance,
  contact,
  createApiCampaign,
  describeOrg,
  enrich,
  expectError,
  gate,
  getCampaign,
  historyBucketPrefix,
  importAccounts,
  ledgerOf,
  pollUntil,
  useTestWarehouses,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();

/** Installs a test warehouse adapter for this test only. */
const useTestWarehouse = useTestWarehouses();

const campaignDeps = () => ({ campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() });

describe('enrich: evaluation, charge, completion', () => {
  it('buckets a known warehouse exactly, charges eligible accounts, refunds those without contacts and releases capacity', async () => {
    const p = uniquePrefix();
    const id = (name: string) => `${p}_${name}`;
    await importAccounts([
      account(id('a1'), 'active', [contact(id('a1_c1'), { mobile: true }), contact(id('a1_c2'))]),
      account(id('a2'), 'active', [contact(id('a2_c1'))]),
      account(id('a3'), 'active', []),
      account(id('a4'), 'active', [contact(id('a4_c1')), contact(id('a4_c2'), { mobile: true }), contact(id('a4_c3'), { email: false })]),
      account(id('a5'), 'active', []),
      account(id('closed'), 'closed', [contact(id('closed_c1'), { mobile: true })]),
      account(id('closedCrm'), 'closed', [contact(id('closedCrm_c1'))]),
      account(id('inactive'), 'inactive', [contact(id('inactive_c1'))]),
      account(id('recent'), 'active', [contact(id('recent_c1'))]),
      account(id('recentCrm'), 'active', [contact(id('recentCrm_c1'))]),
      account(id('crm'), 'active', [contact(id('crm_c1'))]),
    ]);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const startingBalance = 100;

    // A previous campaign of this organization enriches `recent` and `recentCrm` (2 credits, both have contacts).
    const previous = await createApiCampaign(api(), apiKey, [id('recent'), id('recentCrm')]);
    expect((await enrich(api(), apiKey, previous)).status).toBe(200);
    const previousDone = await waitForStatus(api(), apiKey, previous, 'enriched');
    expect(previousDone.credits.charged).toBe(2);

    // CRM targets: a closed account (invalid wins), a recently enriched one (recency wins), and a plain one.
    await accountHistory().addCrmTargets(organizationId, [id('closedCrm'), id('recentCrm'), id('crm')]);

    const submitted = [
      id('a1'),
      id('a2'),
      id('a3'),
      id('a4'),
      id('a5'),
      id('closed'),
      id('closedCrm'),
      id('inactive'),
      id('unknown1'),
      id('unknown2'),
      id('recent'),
      id('recentCrm'),
      id('crm'),
      id('a1'),
      id('unknown1'), // duplicates are collapsed
    ];
    const campaignId = await createApiCampaign(api(), apiKey, submitted, 30);

    const held = useTestWarehouse({ holdAccounts: true });
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    const expectedAccounts = {
      requested: 13,
      eligible: 5,
      excluded: { total: 8, invalid: 5, recentlyEnriched: 2, crmExcluded: 1 },
    };
    expect(launched.data).toEqual({
      id: campaignId,
      status: 'enriching',
      createdVia: 'api',
      name: 'Campaign 15',
      accounts: expectedAccounts,
      credits: { charged: 5, remaining: startingBalance - 2 - 5 },
      excludeEnrichedWithinDays: 30,
      lastEnrichment: null,
      createdAt: expect.stringMatching(ISO_UTC),
    });
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(5);

    // A top-up while the attempt runs.
    await creditLedger().adjust(organizationId, 50);
    await held.called('getAccounts');
    const midway = await getCampaign(api(), apiKey, campaignId);
    expect(midway.data).toMatchObject({ status: 'enriching', credits: { charged: 5, remaining: 143 }, accounts: expectedAccounts });
    held.release();

    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done).toEqual({
      id: campaignId,
      status: 'enriched',
      createdVia: 'api',
      name: 'Campaign 15',
      accounts: expectedAccounts,
      // 3 of the 5 eligible accounts had a contact: 2 credits come back.
      credits: { charged: 3, remaining: 145 },
      excludeEnrichedWithinDays: 30,
      lastEnrichment: null,
      createdAt: launched.data.createdAt,
      completedAt: expect.stringMatching(ISO_UTC),
      resultsExpireAt: expect.stringMatching(ISO_UTC),
      results: { totalAccounts: 5, totalContactsFound: 6, pctAccountsWithContact: 3 / 5, pctAccountsWithMobile: 2 / 5 },
    });
    expect(Date.parse(done.resultsExpireAt) - Date.parse(done.completedAt)).toBe(30 * DAY_MS);
    expect(Date.parse(done.completedAt)).toBeGreaterThan(Date.parse(done.createdAt));
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({ enrichingAccounts: 0, maxEnrichingAccounts: 5_000 });

    // Ledger: one charge for the eligible accounts, one refund for those without contacts.
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries).toEqual([
      {
        id: expect.stringMatching(/^led_/),
        organizationId,
        campaignId,
        attemptId: expect.stringMatching(/^att_/),
        kind: 'charge',
        reason: 'launch',
        amount: -5,
        createdAt: expect.stringMatching(ISO_UTC),
        note: null,
        keyId: expect.stringMatching(/^key_/),
      },
      {
        id: expect.stringMatching(/^led_/),
        organizationId,
        campaignId,
        attemptId: ledger.entries[0]!.attemptId,
        kind: 'refund',
        reason: 'no_contacts_found',
        amount: 2,
        createdAt: expect.stringMatching(ISO_UTC),
        note: null,
        keyId: ledger.entries[0]!.keyId,
      },
    ]);
    // Entries are dated when written (issue #31): the refund in the completion's transaction, at or after completedAt.
    expect(ledger.entries[1]!.createdAt >= done.completedAt).toBe(true);
    expect(ledger.charged).toBe(done.credits.charged);

    // Money is conserved: balance + everything charged = starting balance + top-ups.
    const previousLedger = await ledgerOf(organizationId, previous);
    expect(previousLedger.charged).toBe(2);
    expect((await balance(organizationId)) + previousLedger.charged + ledger.charged).toBe(startingBalance + 50);
  });

  it('returns the campaign unchanged on a repeat call while enriching, with no new charge', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 4));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const campaignId = await createApiCampaign(api(), apiKey, [`${p}_0`, `${p}_1`, `${p}_2`, `${p}_3`]);
    const held = useTestWarehouse({ holdAccounts: true });

    const first = await enrich(api(), apiKey, campaignId);
    expect(first.status).toBe(200);
    expect(first.data).toMatchObject({ status: 'enriching', credits: { charged: 4, remaining: 16 } });
    await held.called('getAccounts');

    for (let i = 0; i < 3; i++) {
      const again = await enrich(api(), apiKey, campaignId);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.data).toEqual(first.data);
    }
    expect(await balance(organizationId)).toBe(16);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(4);
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([['charge', -4]]);

    held.release();
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.credits).toEqual({ charged: 4, remaining: 16 });
    // Once enriched, another call is refused: enrichment does not start twice.
    expectError(await enrich(api(), apiKey, campaignId), 409, 'campaign_not_enrichable', { status: 'enriched' });
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(1);
  });

  it('answers enrichment_pending while another call evaluates the launch, then the first one charges once', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 3));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(api(), apiKey, [`${p}_0`, `${p}_1`, `${p}_2`]);
    const held = useTestWarehouse({ holdStatuses: true });

    const first = enrich(api(), apiKey, campaignId);
    await held.called('getAccountStatuses');

    const second = await enrich(api(), apiKey, campaignId);
    expectError(second, 409, 'enrichment_pending');
    expect(second.error?.details).toBeUndefined();
    // The campaign is still a draft and nothing was charged meanwhile.
    const during = await getCampaign(api(), apiKey, campaignId);
    expect(during.data).toMatchObject({ status: 'draft', credits: { charged: 0, remaining: 10 } });
    expect(await balance(organizationId)).toBe(10);

    held.release();
    const launched = await first;
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data).toMatchObject({
      status: 'enriching',
      accounts: { requested: 3, eligible: 3 },
      credits: { charged: 3, remaining: 7 },
    });
    expect(held.calls.getAccountStatuses).toBe(1);

    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.credits).toEqual({ charged: 3, remaining: 7 });
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(ledger.charged).toBe(3);
  });

  it('takes over a launch lock whose holder died once it has expired (docs/errors.md), and not before', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 2));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(api(), apiKey, [`${p}_0`, `${p}_1`]);
    const setLock = (expiresAt: Date) =>
      ddb.send(
        new UpdateCommand({
          TableName: config.tableName,
          Key: keys.campaign(organizationId, campaignId),
          UpdateExpression: 'SET launchLock = :lock',
          ExpressionAttributeValues: { ':lock': { token: 'dead-holder', expiresAt: expiresAt.toISOString() } },
        }),
      );

    await setLock(new Date(Date.now() + 30_000));
    expectError(await enrich(api(), apiKey, campaignId), 409, 'enrichment_pending');
    expect(await balance(organizationId)).toBe(10);

    await setLock(new Date(Date.now() - 1_000));
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 8 } });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
  });
});

describe('enrich: recency exclusion (docs/launch.md)', () => {
  it('excludes accounts this organization enriched within excludeEnrichedWithinDays; 0 and null exclude nothing', async () => {
    const p = uniquePrefix();
    const ids = Array.from({ length: 5 }, (_, i) => `${p}_${i}`);
    await importAccounts(activeAccounts(p, 5));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });

    const first = await createApiCampaign(api(), apiKey, [ids[0]!, ids[1]!]);
    expect((await enrich(api(), apiKey, first)).status).toBe(200);
    await waitForStatus(api(), apiKey, first, 'enriched');
    // An enrichment 40 days ago: outside a 30-day window, inside a 60-day one.
    await accountHistory().recordEnrichment(organizationId, [ids[4]!], new Date(Date.now() - 40 * DAY_MS).toISOString());
    // The launches below stay enriching, so none of them adds to the history the next one reads.
    useTestWarehouse({ holdAccounts: true });

    const launchWith = async (days: number | null) => {
      const campaignId = await createApiCampaign(api(), apiKey, ids, days);
      const res = await enrich(api(), apiKey, campaignId);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.data;
    };

    const within30 = await launchWith(30);
    expect(within30.accounts).toEqual({
      requested: 5,
      eligible: 3,
      excluded: { total: 2, invalid: 0, recentlyEnriched: 2, crmExcluded: 0 },
    });
    expect(within30.credits.charged).toBe(3);

    const within60 = await launchWith(60);
    expect(within60.accounts).toEqual({
      requested: 5,
      eligible: 2,
      excluded: { total: 3, invalid: 0, recentlyEnriched: 3, crmExcluded: 0 },
    });

    for (const days of [0, null]) {
      const none = await launchWith(days);
      expect(none.accounts).toEqual({ requested: 5, eligible: 5, excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 } });
      expect(none.credits.charged).toBe(5);
    }

    // Another organization's enrichments do not count.
    const other = await newOrganization({ smbCredits: 10 });
    const otherCampaign = await createApiCampaign(api(), other.apiKey, [ids[0]!, ids[1]!], 30);
    const otherLaunch = await enrich(api(), other.apiKey, otherCampaign);
    expect(otherLaunch.status).toBe(200);
    expect(otherLaunch.data.accounts).toEqual({
      requested: 2,
      eligible: 2,
      excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
    });
  });

  it('excludes the accounts of a campaign as soon as it reads enriched, even before its history entries are written', async () => {
    const p = uniquePrefix();
    const ids = [`${p}_0`, `${p}_1`];
    await importAccounts(activeAccounts(p, 2));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });

    // FinishRecording's write of the history buckets waits until the test opens the gate.
    const markerWrite = gate();
    const name = `heldHistoryWrite${uniquePrefix()}`;
    ddb.middlewareStack.add(
      (next) => async (args) => {
        const item = (args.input as { Item?: { pk?: unknown } } | undefined)?.Item;
        if (String(item?.pk).startsWith(historyBucketPrefix(organizationId))) await markerWrite.promise;
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const first = await createApiCampaign(api(), apiKey, ids);
      expect((await enrich(api(), apiKey, first)).status).toBe(200);
      const { completedAt } = await waitForStatus(api(), apiKey, first, 'enriched');
      // Between completion and history write: the completion waits on the organization item, and no entry exists.
      expect((await organizations().get(organizationId))!.pendingRecency).toEqual([
        expect.objectContaining({ campaignId: first, completedAt }),
      ]);
      expect(await accountHistory().getFacts(organizationId, ids)).toEqual(new Map());

      // docs/launch.md: an account counts as recently enriched once the campaign reached `enriched`.
      const second = await createApiCampaign(api(), apiKey, ids, 30);
      const res = await enrich(api(), apiKey, second);
      expectError(res, 422, 'no_eligible_accounts', { requested: 2 });
      expect((await getCampaign(api(), apiKey, second)).data.accounts).toEqual({
        requested: 2,
        eligible: 0,
        excluded: { total: 2, invalid: 0, recentlyEnriched: 2, crmExcluded: 0 },
      });
      expect(await balance(organizationId)).toBe(8);

      // The history written, the pending completion leaves the organization item; the history alone still excludes.
      markerWrite.open();
      await pollUntil(
        () => organizations().get(organizationId),
        (org) => org?.pendingRecency === undefined,
      );
      const facts = await accountHistory().getFacts(organizationId, ids);
      expect(ids.map((id) => facts.get(id)?.lastEnrichedAt)).toEqual([completedAt, completedAt]);
      expectError(await enrich(api(), apiKey, second), 422, 'no_eligible_accounts', { requested: 2 });
    } finally {
      markerWrite.open();
      ddb.middlewareStack.remove(name);
    }
  });
});

describe('enrich: refusals (docs/launch.md order)', () => {
  /** Asserts a refused launch left the campaign a draft with its counts, charged nothing and wrote no ledger entry. */
  async function expectRefusedDraft(apiKey: string, organizationId: string, campaignId: string, accounts: unknown, remaining: number) {
    const res = await getCampaign(api(), apiKey, campaignId);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ status: 'draft', accounts, credits: { charged: 0, remaining }, lastEnrichment: null });
    expect(res.data.completedAt).toBeUndefined();
    expect(await balance(organizationId)).toBe(remaining);
    expect((await ledgerOf(organizationId, campaignId)).entries).toEqual([]);
  }

  it('no_eligible_accounts: 422 with details.requested; counts kept, nothing charged', async () => {
    const p = uniquePrefix();
    await importAccounts([
      account(`${p}_closed`, 'closed', [contact(`${p}_c`)]),
      account(`${p}_inactive`, 'inactive'),
      account(`${p}_crm`, 'active', [contact(`${p}_c2`)]),
    ]);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 50 });
    await accountHistory().addCrmTargets(organizationId, [`${p}_crm`]);
    const campaignId = await createApiCampaign(api(), apiKey, [`${p}_closed`, `${p}_inactive`, `${p}_unknown`, `${p}_crm`]);

    expectError(await enrich(api(), apiKey, campaignId), 422, 'no_eligible_accounts', { requested: 4 });
    await expectRefusedDraft(
      apiKey,
      organizationId,
      campaignId,
      { requested: 4, eligible: 0, excluded: { total: 4, invalid: 3, recentlyEnriched: 0, crmExcluded: 1 } },
      50,
    );
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
  });

  it('insufficient_credits: 402 with available, required, shortfall; a later launch works once topped up', async () => {
    const p = uniquePrefix();
    await importAccounts([...activeAccounts(p, 5), account(`${p}_closed`, 'closed')]);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 3 });
    const campaignId = await createApiCampaign(api(), apiKey, [...activeAccounts(p, 5).map((a) => a.accountId), `${p}_closed`]);
    const counts = { requested: 6, eligible: 5, excluded: { total: 1, invalid: 1, recentlyEnriched: 0, crmExcluded: 0 } };

    expectError(await enrich(api(), apiKey, campaignId), 402, 'insufficient_credits', { available: 3, required: 5, shortfall: 2 });
    await expectRefusedDraft(apiKey, organizationId, campaignId, counts, 3);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);

    // The refusal released the launch lock: the same campaign launches once credits suffice.
    await creditLedger().adjust(organizationId, 2);
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data).toMatchObject({ status: 'enriching', accounts: counts, credits: { charged: 5, remaining: 0 } });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
  });

  it('concurrency_limit_exceeded: 429 with limit, inFlight (incl. other surfaces), requested', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 5));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100, maxEnrichingAccounts: 10 });
    await organizations().setCapacity(organizationId, { externalEnrichingAccounts: 7 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      activeAccounts(p, 5).map((a) => a.accountId),
    );
    const counts = { requested: 5, eligible: 5, excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 } };

    expectError(await enrich(api(), apiKey, campaignId), 429, 'concurrency_limit_exceeded', { limit: 10, inFlight: 7, requested: 5 });
    await expectRefusedDraft(apiKey, organizationId, campaignId, counts, 100);
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({ enrichingAccounts: 7, maxEnrichingAccounts: 10 });

    // Exactly at the ceiling is allowed.
    await organizations().setCapacity(organizationId, { externalEnrichingAccounts: 5 });
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({ enrichingAccounts: 10, maxEnrichingAccounts: 10 });
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({ enrichingAccounts: 5, maxEnrichingAccounts: 10 });
  });

  it('an organization short of both credits and capacity gets insufficient_credits first', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 4));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 1, maxEnrichingAccounts: 3 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      activeAccounts(p, 4).map((a) => a.accountId),
    );

    expectError(await enrich(api(), apiKey, campaignId), 402, 'insufficient_credits', { available: 1, required: 4, shortfall: 3 });
    await expectRefusedDraft(
      apiKey,
      organizationId,
      campaignId,
      { requested: 4, eligible: 4, excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 } },
      1,
    );
  });
});

describe('enrich: campaigns that cannot be launched', () => {
  it('not_found for an unknown ID and for another organization’s campaign; invalid_request for a malformed ID', async () => {
    const { apiKey } = await newOrganization();
    const other = await newOrganization();
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 1));
    const othersCampaign = await createApiCampaign(api(), other.apiKey, [`${p}_0`]);
    const unknown = newCampaignId();

    expectError(await enrich(api(), apiKey, unknown), 404, 'not_found', { resource: 'campaign', id: unknown });
    expectError(await enrich(api(), apiKey, othersCampaign), 404, 'not_found', { resource: 'campaign', id: othersCampaign });
    // The other organization's campaign was not touched.
    expect((await getCampaign(api(), other.apiKey, othersCampaign)).data).toMatchObject({
      status: 'draft',
      accounts: { eligible: null, excluded: null },
    });

    for (const body of [{ campaignId: 'camp_123' }, { campaignId: 'not-a-campaign' }, {}, { campaignId: othersCampaign, extra: 1 }]) {
      const res = await call(api(), ENRICH, { apiKey, body });
      expectError(res, 400, 'invalid_request');
      expect(res.error?.details?.issues).toEqual(expect.arrayContaining([expect.stringMatching(/^(campaignId|body|extra)\b.*: \S/)]));
    }
  });

  it('campaign_not_enrichable with details.status for interface and data-cube drafts, tam_only, enriched and expired campaigns', async () => {
    const p = uniquePrefix();
    await importAccounts(activeAccounts(p, 2));
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const ids = [`${p}_0`, `${p}_1`];

    const uiDraft = await createCampaign(campaignDeps(), { organizationId, name: 'ui draft', accountIds: ids, createdVia: 'ui' });
    const cubeDraft = await createCampaign(campaignDeps(), {
      organizationId,
      name: 'cube draft',
      accountIds: ids,
      createdVia: 'data_cube',
    });
    const tamOnly = await createCampaign(campaignDeps(), {
      organizationId,
      name: 'tam',
      accountIds: ids,
      createdVia: 'ui',
      status: 'tam_only',
    });
    for (const [campaign, status] of [
      [uiDraft, 'draft'],
      [cubeDraft, 'draft'],
      [tamOnly, 'tam_only'],
    ] as const) {
      expectError(await enrich(api(), apiKey, campaign.id), 409, 'campaign_not_enrichable', { status });
      expect((await getCampaign(api(), apiKey, campaign.id)).data).toMatchObject({
        status,
        accounts: { eligible: null, excluded: null },
        credits: { charged: 0 },
      });
    }

    // A real enriched campaign with a short result access period, refused while enriched and once expired.
    const previousPeriod = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    process.env.RESULTS_ACCESS_PERIOD_SECONDS = '4';
    let done: any;
    const campaignId = await createApiCampaign(api(), apiKey, ids);
    try {
      expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
      done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    } finally {
      if (previousPeriod === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
      else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previousPeriod;
    }
    expect(Date.parse(done.resultsExpireAt) - Date.parse(done.completedAt)).toBe(4_000);
    expectError(await enrich(api(), apiKey, campaignId), 409, 'campaign_not_enrichable', { status: 'enriched' });
    await waitForStatus(api(), apiKey, campaignId, 'expired');
    expectError(await enrich(api(), apiKey, campaignId), 409, 'campaign_not_enrichable', { status: 'expired' });
    expect(await balance(organizationId)).toBe(18);
    expect((await ledgerOf(organizationId, campaignId)).charged).toBe(2);
  });

  it('campaign_not_enrichable for an interface campaign that is enriching (the repeat-call rule is for API launches)', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const id = newCampaignId();
    const record: CampaignRecord = {
      id,
      organizationId,
      name: 'launched from the interface',
      status: 'enriching',
      createdVia: 'ui',
      excludeEnrichedWithinDays: null,
      createdAt: new Date().toISOString(),
      accountsRequested: 3,
      accountsObjectKey: accountListKey(organizationId, id),
      accountsEligible: 3,
      accountsExcluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
      creditsCharged: 3,
      lastEnrichment: null,
    };
    await campaigns().create(record);
    expectError(await enrich(api(), apiKey, id), 409, 'campaign_not_enrichable', { status: 'enriching' });
  });
});
