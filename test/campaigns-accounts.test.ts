/**
 * `POST /v1/campaigns/accounts` (docs/launch.md, docs/pagination.md) end to end over HTTP
 * against DynamoDB Local, the local S3 endpoint and the real workflow:
 * every requested account exactly once in submission order with the outcome
 * the fixture says, `contactsFound` equal to the export's contact rows,
 * outcome filters, cursor misuse, the error cases, and progress while a run
 * whose contact step the test lets through one batch at a time is enriching.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { accountHistory, ledger, organizations } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import {
  account,
  contact,
  createApiCampaign,
  enrich,
  expectError,
  getCampaign,
  importAccounts,
  pollUntil,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';
import {
  ACCOUNTS,
  accountsPage,
  allAccounts,
  bucketFixture,
  installSteppedWarehouse,
  type AccountRow,
} from './enrichment/outcomes-support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

let stepped: ReturnType<typeof installSteppedWarehouse> | undefined;
afterEach(() => {
  stepped?.restore();
  stepped = undefined;
});

/** Contact rows per account of an unfiltered export of the campaign (docs/csv.md). */
async function exportedContactRows(apiKey: string, campaignId: string): Promise<Map<string, number>> {
  const res = await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const text = await (await fetch(res.data.url)).text();
  const rows = parse(text, { bom: true, columns: true }) as Record<string, string>[];
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.account_id!, (counts.get(row.account_id!) ?? 0) + (row.contact_id ? 1 : 0));
  return counts;
}

describe('accounts: outcomes of an enriched campaign', () => {
  it('lists every requested account once, in submission order, with its outcome and the export’s contact count; filters by one and several outcomes', async () => {
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    const fixture = await bucketFixture(organizationId);
    const campaignId = await createApiCampaign(api(), apiKey, fixture.submitted, 30);
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.accounts).toEqual(fixture.accounts);

    const expectedSummary = { invalid: 4, recently_enriched: 2, crm_excluded: 1, pending: 0, found: 2, not_found: 2 };
    // Limit 3 over 11 accounts: 4 pages, the last one short; every ID exactly once, in the order first submitted.
    const walked = await allAccounts(api(), apiKey, { campaignId, limit: 3 });
    expect(walked.pages).toEqual([3, 3, 3, 2]);
    expect(walked.accounts).toEqual(fixture.expected);
    expect(walked.summary).toEqual(expectedSummary);
    // The default page holds them all.
    const first = await accountsPage(api(), apiKey, { campaignId });
    expect(first.data).toEqual({ accounts: fixture.expected, nextCursor: null, summary: expectedSummary });

    // contactsFound is the account's contact rows in the unfiltered export; excluded accounts are not in it.
    const rows = await exportedContactRows(apiKey, campaignId);
    const processed = fixture.expected.filter((row) => row.contactsFound !== null);
    expect(new Map(processed.map((row) => [row.accountId, row.contactsFound]))).toEqual(rows);
    // The summary agrees with the campaign's results.
    expect(expectedSummary.found + expectedSummary.not_found).toBe(done.results.totalAccounts);
    expect(expectedSummary.found / done.results.totalAccounts).toBe(done.results.pctAccountsWithContact);
    expect(processed.reduce((sum, row) => sum + row.contactsFound!, 0)).toBe(done.results.totalContactsFound);

    const only = (...outcomes: string[]) => fixture.expected.filter((row) => outcomes.includes(row.outcome));
    for (const outcome of ['invalid', 'recently_enriched', 'crm_excluded', 'found', 'not_found']) {
      const res = await allAccounts(api(), apiKey, { campaignId, filters: { outcome }, limit: 2 });
      expect(res.accounts, outcome).toEqual(only(outcome));
      expect(res.summary, outcome).toEqual(expectedSummary);
    }
    const several = await allAccounts(api(), apiKey, {
      campaignId,
      filters: { outcome: ['not_found', 'crm_excluded', 'found'] },
      limit: 2,
    });
    expect(several.accounts).toEqual(only('found', 'not_found', 'crm_excluded'));
    expect(several.pages).toEqual([2, 2, 1]);
    // No account matches: an empty last page.
    const pending = await accountsPage(api(), apiKey, { campaignId, filters: { outcome: 'pending' } });
    expect(pending.data).toEqual({ accounts: [], nextCursor: null, summary: expectedSummary });

    // A form body is the same request: filters[outcome] repeated, the limit as text.
    const form = new URLSearchParams([
      ['campaignId', campaignId],
      ['filters[outcome]', 'found'],
      ['filters[outcome]', 'invalid'],
      ['limit', '4'],
    ]);
    const asForm = await call(api(), ACCOUNTS, { apiKey, form });
    expect(asForm.status, JSON.stringify(asForm.body)).toBe(200);
    expect(asForm.data.accounts).toEqual(only('found', 'invalid').slice(0, 4));
    const asJson = await accountsPage(api(), apiKey, { campaignId, filters: { outcome: ['invalid', 'found'] }, limit: 4 });
    expect(asJson.data).toEqual(asForm.data);
    // The form's cursor continues the JSON request (the same filters and limit).
    const rest = await accountsPage(api(), apiKey, {
      campaignId,
      filters: { outcome: ['found', 'invalid'] },
      limit: 4,
      cursor: asForm.data.nextCursor,
    });
    expect(rest.data.accounts).toEqual(only('found', 'invalid').slice(4));
    expect(rest.data.nextCursor).toBeNull();
  });

  it('refuses cursor misuse, bad input, foreign campaigns, never-evaluated and expired campaigns', async () => {
    const p = uniquePrefix();
    await importAccounts([
      account(`${p}_a`, 'active', [contact(`${p}_a_1`)]),
      account(`${p}_b`, 'active', []),
      account(`${p}_c`, 'closed', []),
    ]);
    const { organizationId, apiKey } = await newOrganization();
    const other = await newOrganization();
    const ids = [`${p}_a`, `${p}_b`, `${p}_c`];
    const campaignId = await createApiCampaign(api(), apiKey, ids);
    const sibling = await createApiCampaign(api(), apiKey, ids);

    // Never evaluated: results_not_ready.
    const never = await accountsPage(api(), apiKey, { campaignId });
    expectError(never, 409, 'results_not_ready');
    // It points to the launch, which keeps the outcomes; quote keeps none, so it is not the way forward.
    expect(never.error!.message).toMatch(/POST \/v1\/campaigns\/enrich/);
    expect(never.error!.message).not.toMatch(/call .*quote/);

    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    expect((await enrich(api(), apiKey, sibling)).status).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    await waitForStatus(api(), apiKey, sibling, 'enriched');

    const page = await accountsPage(api(), apiKey, { campaignId, filters: { outcome: ['found', 'invalid'] }, limit: 1 });
    expect(page.data.accounts).toEqual([{ accountId: `${p}_a`, outcome: 'found', contactsFound: 1 }]);
    const cursor = page.data.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const next = await accountsPage(api(), apiKey, { campaignId, filters: { outcome: ['invalid', 'found'] }, limit: 1, cursor });
    expect(next.data.accounts).toEqual([{ accountId: `${p}_c`, outcome: 'invalid', contactsFound: null }]);
    expect(next.data.nextCursor).toBeNull();

    const misuse = async (body: Record<string, unknown>, key: string, issue: RegExp) => {
      const res = await call(api(), ACCOUNTS, { apiKey: key, body });
      expectError(res, 400, 'invalid_request');
      expect(res.error?.details.issues.join('\n')).toMatch(issue);
    };
    const filters = { outcome: ['found', 'invalid'] };
    await misuse({ campaignId, filters, limit: 2, cursor }, apiKey, /^cursor: .*another limit/);
    await misuse({ campaignId, filters: { outcome: 'found' }, limit: 1, cursor }, apiKey, /^cursor: .*other filters/);
    await misuse({ campaignId, limit: 1, cursor }, apiKey, /^cursor: .*other filters/);
    await misuse({ campaignId: sibling, filters, limit: 1, cursor }, apiKey, /^cursor: .*another campaign/);
    await misuse(
      { campaignId, filters, limit: 1, cursor: `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}` },
      apiKey,
      /^cursor: .*altered/,
    );
    await misuse({ campaignId, filters, limit: 1, cursor: 'not-a-cursor' }, apiKey, /^cursor: /);
    await misuse({ campaignId, filters, limit: 1, cursor }, other.apiKey, /^cursor: .*another organization/);
    await misuse({ campaignId, limit: 0 }, apiKey, /^limit: /);
    await misuse({ campaignId, limit: 1001 }, apiKey, /^limit: /);
    await misuse({ campaignId, filters: { outcome: 'enriched' } }, apiKey, /^filters\.outcome/);
    await misuse({ campaignId, filters: { status: 'enriched' } }, apiKey, /filters/);
    await misuse({ filters }, apiKey, /^campaignId: /);
    // limit 1000 is the largest page.
    expect((await accountsPage(api(), apiKey, { campaignId, limit: 1000 })).status).toBe(200);

    // Another organization's campaign is not found, whatever its state.
    expectError(await accountsPage(api(), other.apiKey, { campaignId }), 404, 'not_found', { resource: 'campaign', id: campaignId });

    // Expired (resultsExpireAt reached, before the workflow rewrites it): results_expired.
    await ddb.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.campaign(organizationId, campaignId),
        UpdateExpression: 'SET resultsExpireAt = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1_000).toISOString() },
      }),
    );
    expect((await getCampaign(api(), apiKey, campaignId)).data.status).toBe('expired');
    expectError(await accountsPage(api(), apiKey, { campaignId }), 410, 'results_expired');
  });

  it('shows a refused launch’s evaluation with its eligible accounts pending, and a failed attempt’s too', async () => {
    const p = uniquePrefix();
    await importAccounts([
      account(`${p}_a`, 'active', [contact(`${p}_a_1`)]),
      account(`${p}_b`, 'active', [contact(`${p}_b_1`)]),
      account(`${p}_c`, 'inactive', []),
    ]);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 1 });
    await accountHistory().addCrmTargets(organizationId, [`${p}_b`]);
    const ids = [`${p}_c`, `${p}_a`, `${p}_b`, `${p}_d`];
    const campaignId = await createApiCampaign(api(), apiKey, ids);
    const expected: AccountRow[] = [
      { accountId: `${p}_c`, outcome: 'invalid', contactsFound: null },
      { accountId: `${p}_a`, outcome: 'pending', contactsFound: null },
      { accountId: `${p}_b`, outcome: 'crm_excluded', contactsFound: null },
      { accountId: `${p}_d`, outcome: 'invalid', contactsFound: null },
    ];
    const pendingSummary = { invalid: 2, recently_enriched: 0, crm_excluded: 1, pending: 1, found: 0, not_found: 0 };

    // A launch that fails: compensated, back to draft; its eligible account reads pending again.
    useTestWarehouse({ failAccounts: true });
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    const failed = await waitForStatus(api(), apiKey, campaignId, 'draft');
    expect(failed.lastEnrichment).toMatchObject({ status: 'failed', refunded: true });
    expect((await accountsPage(api(), apiKey, { campaignId })).data).toEqual({
      accounts: expected,
      nextCursor: null,
      summary: pendingSummary,
    });

    // A refused launch (no credits left after a debit) replaces it: still pending, never processed.
    await ledger().adjust(organizationId, -1);
    expectError(await enrich(api(), apiKey, campaignId), 402, 'insufficient_credits', { available: 0, required: 1, shortfall: 1 });
    const refused = await accountsPage(api(), apiKey, { campaignId, filters: { outcome: 'pending' } });
    expect(refused.data).toEqual({ accounts: [expected[1]], nextCursor: null, summary: pendingSummary });
  });
});

describe('accounts: progress while enriching', () => {
  it('moves once per batch: pending falls and found + not_found rise between two polls; at completion pending is 0 and the totals equal results', async () => {
    // 2,100 requested accounts (3 chunks of the outcome list): 2,000 active of which every third has no contact,
    // 40 CRM targets all after position 1,000, and 100 unknown IDs; 1,960 eligible = 2 workflow batches.
    const p = uniquePrefix();
    const requested: string[] = [];
    const expected = new Map<string, { outcome: string; contactsFound: number | null }>();
    const warehouse = [];
    const crm: string[] = [];
    let active = 0;
    for (let position = 0; position < 2_100; position++) {
      const id = `${p}_${String(position).padStart(4, '0')}`;
      requested.push(id);
      if (position % 21 === 20) {
        expected.set(id, { outcome: 'invalid', contactsFound: null });
        continue;
      }
      const contacts = active % 3; // 0, 1 or 2 contacts
      active++;
      warehouse.push(
        account(
          id,
          'active',
          Array.from({ length: contacts }, (_, c) => contact(`${id}_${c}`)),
        ),
      );
      if (position >= 1_000 && crm.length < 40 && position % 7 === 0) {
        crm.push(id);
        expected.set(id, { outcome: 'crm_excluded', contactsFound: null });
      } else expected.set(id, { outcome: contacts > 0 ? 'found' : 'not_found', contactsFound: contacts });
    }
    expect(active).toBe(2_000);
    expect(crm).toHaveLength(40);
    await importAccounts(warehouse);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 5_000 });
    await accountHistory().addCrmTargets(organizationId, crm);
    const campaignId = await createApiCampaign(api(), apiKey, requested);

    stepped = installSteppedWarehouse();
    const launched = await enrich(api(), apiKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.data.accounts).toEqual({
      requested: 2_100,
      eligible: 1_960,
      excluded: { total: 140, invalid: 100, recentlyEnriched: 0, crmExcluded: 40 },
    });
    await stepped.startedAtLeast(2);

    const summaryNow = async () => {
      const res = await accountsPage(api(), apiKey, { campaignId, limit: 1 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.data.summary as Record<'invalid' | 'recently_enriched' | 'crm_excluded' | 'pending' | 'found' | 'not_found', number>;
    };
    const first = await summaryNow();
    expect(first).toEqual({ invalid: 100, recently_enriched: 0, crm_excluded: 40, pending: 1_960, found: 0, not_found: 0 });
    // While nothing is processed, every eligible account is pending.
    const pendingNow = await allAccounts(api(), apiKey, { campaignId, filters: { outcome: ['pending'] }, limit: 1_000 });
    expect(pendingNow.accounts).toHaveLength(1_960);

    // One batch through.
    stepped.releaseOne();
    const second = await pollUntil(summaryNow, (s) => s.found + s.not_found > 0);
    expect(second.pending).toBeLessThan(first.pending);
    expect(second.found + second.not_found).toBeGreaterThan(first.found + first.not_found);
    expect([1_000, 960]).toContain(second.found + second.not_found);
    expect(second.pending + second.found + second.not_found).toBe(1_960);
    expect((await getCampaign(api(), apiKey, campaignId)).data.status).toBe('enriching');
    // The processed batch's accounts are no longer pending; the other batch's still are.
    const halfway = await allAccounts(api(), apiKey, { campaignId, filters: { outcome: 'pending' }, limit: 1_000 });
    expect(halfway.accounts).toHaveLength(second.pending);
    expect(halfway.summary).toEqual(second);

    stepped.releaseAll();
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    const final = await summaryNow();
    expect(final.pending).toBe(0);
    expect(final.found + final.not_found).toBe(done.results.totalAccounts);
    expect(final.found / done.results.totalAccounts).toBe(done.results.pctAccountsWithContact);

    // Every requested ID exactly once, in submission order, pages crossing the chunk boundaries; outcome and contacts as built.
    const all = await allAccounts(api(), apiKey, { campaignId, limit: 700 });
    expect(all.pages).toEqual([700, 700, 700]);
    expect(all.accounts.map((row) => row.accountId)).toEqual(requested);
    expect(all.accounts).toEqual(requested.map((accountId) => ({ accountId, ...expected.get(accountId)! })));
    expect(all.accounts.reduce((sum, row) => sum + (row.contactsFound ?? 0), 0)).toBe(done.results.totalContactsFound);
    expect(all.summary).toEqual({
      invalid: 100,
      recently_enriched: 0,
      crm_excluded: 40,
      pending: 0,
      found: final.found,
      not_found: final.not_found,
    });

    // Filters skip chunks without a match and keep submission order across chunks.
    const crmPage = await allAccounts(api(), apiKey, { campaignId, filters: { outcome: 'crm_excluded' }, limit: 1_000 });
    expect(crmPage.accounts.map((row) => row.accountId)).toEqual(crm);
    const mixed = await allAccounts(api(), apiKey, { campaignId, filters: { outcome: ['invalid', 'not_found'] }, limit: 250 });
    expect(mixed.accounts).toEqual(all.accounts.filter((row) => row.outcome === 'invalid' || row.outcome === 'not_found'));
  });
});
