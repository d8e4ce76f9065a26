/**
 * `POST /v1/campaigns/accounts` recounts `contactsFound` from the stored
 * result parts while suppressions are in force (docs/privacy.md): on a
 * campaign whose batch was made readable in parts (`test_slow_` accounts,
 * docs/test-mode.md "Slow accounts": parts of at most 100 accounts), the
 * recount reads every part of the batch. End to end through HTTP against the
 * local stack: the same suppressions on a split campaign and on an unsplit
 * one (`test_found_`, one part per batch) give the same counts per account,
 * the same campaign counts, and the counts the export's rows and the results
 * page show. Counts only, never durations.
 */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { apiKeys, organizations, sequence } from '../lib/root';
import { testContacts } from '../lib/test-mode/accounts';
import { call, newOrganization, useApi } from './support/api';
import { createApiCampaign, enrich, uniquePrefix, waitForStatus } from './enrichment/support';

const api = useApi();
const ACCOUNTS = 150;

/** A test key of a fresh organization's twin (the test warehouse: 3 contacts per found account, from its ID). */
async function testKey(): Promise<string> {
  const live = await newOrganization({ name: `Live ${uniquePrefix()}`, smbCredits: 10 });
  const twin = await organizations().testTwin(live.organizationId);
  return apiKeys().create(twin.id);
}

const post = async (apiKey: string, path: string, body: unknown) => {
  const res = await call(api(), path, { apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.data;
};

/** An enriched campaign of `ACCOUNTS` accounts `<kind><prefix>_<index>`; its IDs in index order. */
async function enrichedCampaign(apiKey: string, kind: 'test_slow_' | 'test_found_') {
  const prefix = uniquePrefix();
  const ids = Array.from({ length: ACCOUNTS }, (_, i) => `${kind}${prefix}_${String(i).padStart(4, '0')}`);
  const campaignId = await createApiCampaign(api(), apiKey, ids);
  const launched = await enrich(api(), apiKey, campaignId);
  expect(launched.status, JSON.stringify(launched.body)).toBe(200);
  await waitForStatus(api(), apiKey, campaignId, 'enriched');
  const { attemptId } = await post(apiKey, '/v1/campaigns/results', { campaignId, limit: 1 });
  return { campaignId, ids, attemptId: attemptId as string };
}

/** The emails suppressed for account `index`: its first contact's on every third, its second's on every fifth. */
const suppressedEmails = (accountId: string, index: number) => {
  const [first, second] = testContacts(accountId);
  return [...(index % 3 === 0 ? [first!.email!] : []), ...(index % 5 === 0 ? [second!.email!] : [])];
};

/** `contactsFound` of every account, by index (pages of 40: several pages per part). */
async function accountCounts(apiKey: string, campaignId: string, ids: readonly string[]) {
  const found = new Map<string, number | null>();
  let cursor: string | undefined;
  do {
    const page = await post(apiKey, '/v1/campaigns/accounts', { campaignId, limit: 40, ...(cursor ? { cursor } : {}) });
    for (const a of page.accounts as { accountId: string; contactsFound: number | null }[]) found.set(a.accountId, a.contactsFound);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  expect(found.size).toBe(ids.length);
  return ids.map((id) => found.get(id));
}

/** Contacts per account in the export's rows, by index. */
async function exportCounts(apiKey: string, campaignId: string, ids: readonly string[]) {
  const exported = await post(apiKey, '/v1/campaigns/export', { campaignId });
  const file = await fetch(exported.url);
  expect(file.status).toBe(200);
  const [header, ...rows] = parse((await file.text()).replace(/^\uFEFF/, ''), { record_delimiter: '\r\n' }) as string[][];
  const accountColumn = header!.indexOf('account_id');
  const contactColumn = header!.indexOf('contact_id');
  expect(accountColumn).toBeGreaterThanOrEqual(0);
  expect(contactColumn).toBeGreaterThanOrEqual(0);
  const counts = new Map<string, number>();
  for (const row of rows) if (row[contactColumn]) counts.set(row[accountColumn]!, (counts.get(row[accountColumn]!) ?? 0) + 1);
  return ids.map((id) => counts.get(id) ?? 0);
}

/** Contacts per account on the results pages, by index. */
async function resultsCounts(apiKey: string, campaignId: string, ids: readonly string[]) {
  const counts = new Map<string, number>();
  // `complete` says every account has its seq; the pages go on until the last seq was read.
  for (let afterSeq = 0, eligible = 1; afterSeq < eligible;) {
    const page = await post(apiKey, '/v1/campaigns/results', { campaignId, afterSeq, limit: 64 });
    for (const item of page.accounts as { accountId: string; contacts: unknown[] }[]) counts.set(item.accountId, item.contacts.length);
    expect(page.complete).toBe(true);
    afterSeq = page.lastSeq;
    eligible = page.eligible;
  }
  return ids.map((id) => counts.get(id));
}

describe('campaigns/accounts with suppressions in force', () => {
  it('recounts a campaign whose batch was made readable in parts as the unsplit one, the export and the results page', async () => {
    const apiKey = await testKey();
    const split = await enrichedCampaign(apiKey, 'test_slow_');
    const whole = await enrichedCampaign(apiKey, 'test_found_');
    // The split campaign's one batch was made readable in parts of at most 100 accounts; the other's in one.
    const splitRanges = await sequence().rangesAfter(split.campaignId, split.attemptId, 0, ACCOUNTS);
    expect(splitRanges.length).toBeGreaterThanOrEqual(2);
    expect(splitRanges.every((range) => range.chunk !== undefined && range.toSeq - range.fromSeq + 1 <= 100)).toBe(true);
    const wholeRanges = await sequence().rangesAfter(whole.campaignId, whole.attemptId, 0, ACCOUNTS);
    expect(wholeRanges.map((range) => range.chunk)).toEqual([undefined]);

    const unsuppressed = await accountCounts(apiKey, split.campaignId, split.ids);
    expect(unsuppressed).toEqual(split.ids.map(() => 3));
    const campaignBefore = (await post(apiKey, '/v1/campaigns/get', { campaignId: split.campaignId })).results;

    // After both campaigns were enriched: their stored parts still hold the contacts the suppressions name.
    const identifiers = [...split.ids, ...whole.ids].flatMap((id, i) =>
      suppressedEmails(id, i % ACCOUNTS).map((value) => ({ type: 'email', value })),
    );
    expect(identifiers.length).toBe(2 * (50 + 30));
    await post(apiKey, '/v1/privacy/suppressions/create', { identifiers, reason: 'opt_out' });

    const expected = split.ids.map((id, i) => 3 - suppressedEmails(id, i).length);
    expect(expected.filter((n) => n === 1).length).toBe(10); // every fifteenth loses both
    const splitCounts = await accountCounts(apiKey, split.campaignId, split.ids);
    const wholeCounts = await accountCounts(apiKey, whole.campaignId, whole.ids);
    expect(splitCounts).toEqual(expected);
    expect(splitCounts).toEqual(wholeCounts);
    expect(await exportCounts(apiKey, split.campaignId, split.ids)).toEqual(splitCounts);
    expect(await resultsCounts(apiKey, split.campaignId, split.ids)).toEqual(splitCounts);

    // The campaign's counts: the split campaign's equal the unsplit one's, and the suppressions do not rewrite them.
    const splitCampaign = (await post(apiKey, '/v1/campaigns/get', { campaignId: split.campaignId })).results;
    const wholeCampaign = (await post(apiKey, '/v1/campaigns/get', { campaignId: whole.campaignId })).results;
    expect(splitCampaign).toEqual(campaignBefore);
    expect(splitCampaign).toEqual(wholeCampaign);
  });
});
