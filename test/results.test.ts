/**
 * Results as they arrive (docs/results.md), end to end through HTTP against
 * the local stack (DynamoDB Local, the S3 endpoint, the workflow): the
 * sequence is gap-free and never reused while a reader races the workflow's
 * batches in any completion order; a failed attempt's results go with it and
 * a reader holding its position is told; a page's contacts are the export's
 * rows with raw values; the long poll answers as soon as a batch lands.
 */
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCampaignEnrichmentClient } from '../client/index';
import { useWarehouse } from '../lib/root';
import { ACCOUNT_FIELDS } from '../lib/warehouse/fields';
import { call, newOrganization, useApi } from './support/api';
import {
  account,
  contact,
  createApiCampaign,
  enrich,
  expectError,
  importAccounts,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';
import { BATCH, gatedWarehouse, indexOf, launchedNumbered, type Item } from './support/results';

const api = useApi();
const RESULTS = '/v1/campaigns/results';
const EXPORT = '/v1/campaigns/export';
const results = (apiKey: string, body: Record<string, unknown>) => call(api(), RESULTS, { apiKey, body });

describe('POST /v1/campaigns/results', () => {
  it('a reader racing the workflow (any batch completion order, any page sizes, reconnects from its last afterSeq) reads every eligible account once: seq 1..N, no gap, no duplicate, each batch in one contiguous run', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]),
        fc.array(fc.integer({ min: 1, max: 1_000 }), { minLength: 8, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        async (order, limits, reconnects) => {
          const gated = gatedWarehouse((id) => Math.floor(indexOf(id) / BATCH));
          const { apiKey, campaignId, accounts } = await launchedNumbered(api(), 2 * BATCH + 500, gated);
          await gated.arrived(3);

          const seen: Item[] = [];
          let afterSeq = 0;
          let attemptId: string | undefined;
          let step = 0;
          const readSome = async () => {
            const limit = limits[step % limits.length]!;
            // A reader that drops its connection starts again from the last afterSeq it kept (here: nothing lost, it re-asks).
            if (reconnects[step % reconnects.length])
              await results(apiKey, { campaignId, afterSeq, limit: 1 }).then((r) => expect(r.status).toBe(200));
            step++;
            const res = await results(apiKey, { campaignId, afterSeq, limit });
            expect(res.status, JSON.stringify(res.body)).toBe(200);
            // One attempt throughout: every page names the same one.
            if (attemptId !== undefined) expect(res.data.attemptId).toBe(attemptId);
            attemptId = res.data.attemptId;
            expect(res.data.lastSeq).toBe(res.data.accounts.length > 0 ? res.data.accounts.at(-1).seq : afterSeq);
            expect(res.data.processed).toBeGreaterThanOrEqual(res.data.lastSeq);
            seen.push(...(res.data.accounts as Item[]));
            afterSeq = res.data.lastSeq;
            return res.data;
          };
          let released = 0;
          for (const batch of order) {
            await readSome();
            gated.release(batch);
            released += batch === 2 ? 500 : BATCH;
            // The next batch is let through once this one is readable, so the completion order is the one drawn.
            await pollUntil(
              () => results(apiKey, { campaignId, limit: 1 }),
              (r) => r.data.processed >= released,
            );
            await readSome();
          }
          let last = await readSome();
          while (!last.complete || last.lastSeq < last.eligible) last = await readSome();
          expect(last.status).toBe('enriched');

          expect(seen.map((item) => item.seq)).toEqual(Array.from({ length: accounts.length }, (_, i) => i + 1));
          expect(new Set(seen.map((item) => item.accountId)).size).toBe(accounts.length);
          expect(seen.map((item) => item.accountId).sort()).toEqual(accounts.map((a) => a.accountId).sort());
          // Seqs follow the order the batches became readable; within a batch, the eligible list's order.
          const batchesInSeqOrder = [...new Set(seen.map((item) => Math.floor(indexOf(item.accountId) / BATCH)))];
          expect(batchesInSeqOrder).toEqual(order);
          for (let i = 1; i < seen.length; i++) {
            const [a, b] = [seen[i - 1]!, seen[i]!];
            if (Math.floor(indexOf(a.accountId) / BATCH) === Math.floor(indexOf(b.accountId) / BATCH))
              expect(indexOf(b.accountId)).toBe(indexOf(a.accountId) + 1);
          }
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
  });

  it('a failed attempt takes its results with it; a new launch starts at seq 1 with another attemptId; a reader holding the old attempt is told (409 past the new attempt’s accounts, another attemptId otherwise), never mixed', async () => {
    const gated = gatedWarehouse((id) => Math.floor(indexOf(id) / BATCH));
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 200, gated);
    await gated.arrived(2);
    gated.release(0);
    const first = await results(apiKey, { campaignId, waitSeconds: 20, limit: 1_000 });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.data.accounts.length).toBe(BATCH);
    const oldAttempt: string = first.data.attemptId;
    const oldAfterSeq: number = first.data.lastSeq;

    gated.fail([1]);
    gated.release(1);
    await waitForStatus(api(), apiKey, campaignId, 'draft');
    // The attempt failed: its results went with it.
    expectError(await results(apiKey, { campaignId, afterSeq: oldAfterSeq }), 409, 'results_not_ready');

    useWarehouse(undefined);
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    // A reader still holding the old position is told by the answer's attemptId: another attempt, whose seqs start at 1.
    const told = await results(apiKey, { campaignId, afterSeq: oldAfterSeq, limit: 1_000 });
    expect(told.status, JSON.stringify(told.body)).toBe(200);
    expect(told.data.attemptId).not.toBe(oldAttempt);
    // A position beyond the new attempt's accounts cannot be of this attempt: refused, never an empty page.
    expectError(await results(apiKey, { campaignId, afterSeq: accounts.length + 1 }), 409, 'results_not_ready');
    const fresh = await results(apiKey, { campaignId, limit: 1_000 });
    expect(fresh.status).toBe(200);
    expect(fresh.data.attemptId).toBe(told.data.attemptId);
    expect(fresh.data.accounts[0].seq).toBe(1);
    const rest = await results(apiKey, { campaignId, afterSeq: fresh.data.lastSeq, limit: 1_000 });
    expect(rest.data.attemptId).toBe(fresh.data.attemptId);
    const all = [...fresh.data.accounts, ...rest.data.accounts] as Item[];
    expect(all.map((item) => item.seq)).toEqual(Array.from({ length: accounts.length }, (_, i) => i + 1));
    expect(rest.data.complete).toBe(true);
  });

  it('long poll: an idle wait answers as soon as a batch becomes readable, with what is there', async () => {
    const gated = gatedWarehouse(() => 0);
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), 30, gated);
    await gated.arrived(1);
    const empty = await results(apiKey, { campaignId });
    expect(empty.data).toMatchObject({ status: 'enriching', eligible: 30, processed: 0, complete: false, lastSeq: 0, accounts: [] });
    const waiting = results(apiKey, { campaignId, waitSeconds: 20 });
    gated.release(0);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.data.accounts.map((item: Item) => item.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it("the page's contacts equal the export's rows for the same accounts and filters, with raw values (no spreadsheet prefix)", async () => {
    const prefix = uniquePrefix();
    const tricky = account(`${prefix}_tricky`, 'active', [
      {
        ...contact(`${prefix}_c1`, { mobile: true }),
        firstName: '=HYPERLINK("x")',
        lastName: '+1 555',
        title: '-VP, "Sales"',
        seniority: 'vp',
      },
      { ...contact(`${prefix}_c2`, { email: false }), seniority: 'director', directPhone: '+15550001111' },
      { ...contact(`${prefix}_c3`), seniority: null, department: '@ops' },
    ]);
    tricky.name = '@Acme, Inc.';
    const plain = account(`${prefix}_plain`, 'active', [contact(`${prefix}_c4`, { mobile: true })]);
    const none = account(`${prefix}_none`, 'active', []);
    await importAccounts([tricky, plain, none]);
    const { apiKey } = await newOrganization({ smbCredits: 10_000 });
    const campaignId = await createApiCampaign(api(), apiKey, [tricky.accountId, plain.accountId, none.accountId]);
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');

    for (const selection of [{}, { hasMobilePhone: true }, { hasEmail: true, maxContactsPerAccount: 1 }, { maxContactsPerAccount: 0 }]) {
      const page = await results(apiKey, { campaignId, ...selection });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.data.complete).toBe(true);
      const exported = await call(api(), EXPORT, { apiKey, body: { campaignId, ...selection } });
      const csv = await (await fetch(exported.data.url)).text();
      const rows: Record<string, string>[] = parse(csv.replace(/^\uFEFF/, ''), { columns: true });
      const unprefix = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);
      const fromExport = rows
        .filter((row) => row.contact_id !== '')
        .map((row) => ({
          accountId: row.account_id,
          contactId: row.contact_id,
          firstName: unprefix(row.first_name!),
          lastName: unprefix(row.last_name!),
          jobTitle: unprefix(row.job_title!),
          department: unprefix(row.department!),
          directPhone: row.direct_phone,
        }));
      const fromPage = (page.data.accounts as Item[]).flatMap((item) =>
        item.contacts.map((c) => ({
          accountId: item.accountId,
          contactId: c.contactId,
          firstName: c.firstName ?? '',
          lastName: c.lastName ?? '',
          jobTitle: c.jobTitle ?? '',
          department: c.department ?? '',
          directPhone: c.directPhone ?? '',
        })),
      );
      expect(fromPage).toEqual(fromExport);
      expect(new Set((page.data.accounts as Item[]).map((item) => item.accountId))).toEqual(new Set(rows.map((row) => row.account_id)));
    }
    const all = (await results(apiKey, { campaignId })).data.accounts as Item[];
    const item = all.find((a) => a.accountId === tricky.accountId)!;
    expect(item.outcome).toBe('found');
    // Every account field with a JSON key (lib/warehouse/fields.ts) under that key, the stored value as it is: no prefix.
    expect(item.account).toEqual(
      Object.fromEntries(ACCOUNT_FIELDS.filter((field) => 'json' in field).map((field) => [field.json, tricky[field.key]])),
    );
    expect(item.account).toMatchObject({ name: '@Acme, Inc.', industry: 'Software', employeeCount: 120, country: 'US' });
    expect(item.contacts[0]).toMatchObject({
      firstName: '=HYPERLINK("x")',
      lastName: '+1 555',
      jobTitle: '-VP, "Sales"',
      seniority: 'vp',
      mobilePhone: '+15551234567',
    });
    expect(item.contacts.map((c) => c.contactId)).toEqual([`${prefix}_c1`, `${prefix}_c2`, `${prefix}_c3`]);
    expect(all.find((a) => a.accountId === none.accountId)).toMatchObject({ outcome: 'not_found', contacts: [] });
  });

  it("refuses what it cannot answer: a draft 409, another organization's campaign 404, bad fields 400 naming the field", async () => {
    const prefix = uniquePrefix();
    await importAccounts([account(`${prefix}_a`, 'active', [contact(`${prefix}_c`)])]);
    const { apiKey } = await newOrganization({ smbCredits: 100 });
    const other = await newOrganization({ smbCredits: 100 });
    const campaignId = await createApiCampaign(api(), apiKey, [`${prefix}_a`]);
    expectError(await results(apiKey, { campaignId }), 409, 'results_not_ready');
    expectError(await results(other.apiKey, { campaignId }), 404, 'not_found');
    for (const [field, value] of [
      ['limit', 0],
      ['limit', 1_001],
      ['waitSeconds', 21],
      ['afterSeq', -1],
      ['attemptId', 'att_x'],
      ['hasEmail', 'yes'],
    ] as const) {
      const res = await results(apiKey, { campaignId, [field]: value });
      expect(res.status).toBe(400);
      expect(res.body.error!.code).toBe('invalid_request');
      expect(JSON.stringify(res.body.error)).toContain(field);
    }
  });

  it("the client's results(campaignId, {follow: true}) yields every account once, in seq order, while the campaign enriches, and resumes after dropped connections", async () => {
    const gated = gatedWarehouse((id) => Math.floor(indexOf(id) / BATCH));
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 100, gated);
    await gated.arrived(2);
    // Every second results call loses its connection before reaching the server; the client asks again from where it was.
    let calls = 0;
    let dropped = 0;
    const dropping = async (request: Request) => {
      if (new URL(request.url).pathname === RESULTS && ++calls % 2 === 0) {
        dropped++;
        throw new TypeError('fetch failed: connection reset');
      }
      return fetch(request);
    };
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey, fetch: dropping, initialBackoffMs: 10 });
    const seqs: number[] = [];
    const ids: string[] = [];
    gated.release(0);
    for await (const item of client.results(campaignId, { follow: true })) {
      seqs.push(item.seq);
      ids.push(item.accountId);
      // The second batch is let through only once the reader has the first: the rest arrives while it follows.
      if (seqs.length === 1) gated.release(1);
    }
    expect(seqs).toEqual(Array.from({ length: accounts.length }, (_, i) => i + 1));
    expect(ids.slice().sort()).toEqual(accounts.map((a) => a.accountId).sort());
    expect(dropped).toBeGreaterThanOrEqual(1);
  });
});
