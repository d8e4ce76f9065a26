/**
 * The credit ledger (README.md#operator-cli `org:credits --note`, `credits:reconcile`;
 * docs/launch.md#the-credit-ledger `POST /v1/org/ledger` and its invariant): every movement of a balance
 * is an entry written in the same transaction, the balance always equals the
 * sum of the organization's entries, and a campaign's `credits.charged`
 * equals minus the sum of its own.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { sumOf, type LedgerEntry } from '../lib/credits/ledger';
import { createLedgerStore } from '../lib/credits/store';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { campaigns, enrichment, ledger, workflow } from '../lib/root';
import { ensureTable } from '../infra/local/table';
import { environmentOutsideLambda } from '../infra/local/lambda-context';
import { call, newOrganization, useApi } from './support/api';
import {
  account,
  contact,
  createApiCampaign,
  enrich,
  expectError,
  getCampaign,
  importAccounts,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();
const LEDGER = '/v1/org/ledger';
const ROOT = path.resolve(import.meta.dirname, '..');

/** Every page of the ledger operation for a key, following nextCursor. */
async function allPages(apiKey: string, body: Record<string, unknown> = {}): Promise<{ entries: any[]; pages: number }> {
  const entries: any[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await call(api(), LEDGER, { apiKey, body: { ...body, ...(cursor ? { cursor } : {}) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    entries.push(...res.data.entries);
    cursor = res.data.nextCursor ?? undefined;
    pages++;
  } while (cursor);
  return { entries, pages };
}

/** An entry as the ledger operation shows it. */
const shown = ({ organizationId: _organizationId, keyId: _keyId, ...entry }: LedgerEntry) => entry;
/** Newest first: createdAt, then id, descending. */
const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);

describe('every credit movement is on the ledger', () => {
  it('across three organizations (grants, launches, partial refunds, a failed and a canceled attempt, operator additions and removals): balance = Σ entries, charged = −Σ campaign entries', async () => {
    const p = uniquePrefix();
    // 3 accounts with contacts and 2 without: a launch charges 5 and refunds 2 at completion.
    const withContacts = [0, 1, 2].map((i) => account(`${p}_c${i}`, 'active', [contact(`${p}_ct${i}`, { email: true })]));
    const without = [0, 1].map((i) => account(`${p}_n${i}`));
    await importAccounts([...withContacts, ...without]);
    const ids = [...withContacts, ...without].map((a) => a.accountId);

    const orgs = await Promise.all([100, 200, 300].map((smbCredits) => newOrganization({ smbCredits, maxEnrichingAccounts: 100 })));
    const campaignIds: string[][] = orgs.map(() => []);

    for (const [i, org] of orgs.entries()) {
      await ledger().adjust(org.organizationId, 50, `top-up ${i}`);
      await ledger().adjust(org.organizationId, -20, `correction ${i}`);
      const campaignId = await createApiCampaign(api(), org.apiKey, ids);
      expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
      const done = await waitForStatus(api(), org.apiKey, campaignId, 'enriched');
      expect(done.credits.charged).toBe(3);
      campaignIds[i]!.push(campaignId);
    }

    // Organization 2: a failed attempt (the contact step fails): full refund.
    useTestWarehouse({ failAccounts: true });
    const failed = await createApiCampaign(api(), orgs[1]!.apiKey, ids);
    expect((await enrich(api(), orgs[1]!.apiKey, failed)).status).toBe(200);
    await pollDraft(orgs[1]!.apiKey, failed, 'failed');
    campaignIds[1]!.push(failed);

    // Organization 3: a canceled attempt: full refund.
    const held = useTestWarehouse({ holdAccounts: true });
    const canceled = await createApiCampaign(api(), orgs[2]!.apiKey, ids);
    expect((await enrich(api(), orgs[2]!.apiKey, canceled)).status).toBe(200);
    await held.called('getAccounts');
    expect(await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, canceled)).toMatchObject({
      status: 'canceled',
    });
    held.release();
    await pollDraft(orgs[2]!.apiKey, canceled, 'canceled');
    campaignIds[2]!.push(canceled);

    for (const [i, org] of orgs.entries()) {
      const entries = await ledger().entriesOf(org.organizationId);
      const describe = await call(api(), '/v1/org/describe', { apiKey: org.apiKey });
      // The balance is the sum of every entry, and the ledger operation shows exactly those entries, newest first.
      expect(describe.data.credits.smb).toBe(sumOf(entries));
      expect(await ledger().audit(org.organizationId)).toMatchObject({ balance: sumOf(entries), ledgerSum: sumOf(entries) });
      const listed = await allPages(org.apiKey, { limit: 3 });
      expect(listed.entries).toEqual([...entries].sort(newestFirst).map(shown));
      // The opening grant and the two notes.
      expect(entries.filter((e) => e.kind === 'adjustment').map((e) => [e.reason, e.amount, e.note])).toEqual([
        ['initial_grant', [100, 200, 300][i], null],
        ['operator', 50, `top-up ${i}`],
        ['operator', -20, `correction ${i}`],
      ]);
      for (const campaignId of campaignIds[i]!) {
        const own = entries.filter((e) => e.campaignId === campaignId);
        const campaign = await getCampaign(api(), org.apiKey, campaignId);
        expect(campaign.data.credits.charged).toBe(0 - sumOf(own));
        expect(own.every((e) => e.attemptId !== null && e.note === null)).toBe(true);
      }
    }
    // What each organization's ledger says happened.
    const shapes = await Promise.all(
      orgs.map(async (org) =>
        (await ledger().entriesOf(org.organizationId)).filter((e) => e.campaignId).map((e) => [e.kind, e.reason, e.amount]),
      ),
    );
    expect(shapes[0]).toEqual([
      ['charge', 'launch', -5],
      ['refund', 'no_contacts_found', 2],
    ]);
    expect(shapes[1]).toEqual(
      expect.arrayContaining([
        ['charge', 'launch', -5],
        ['refund', 'no_contacts_found', 2],
        ['refund', 'failed', 5],
      ]),
    );
    expect(shapes[1]).toHaveLength(4);
    expect(shapes[2]).toEqual(expect.arrayContaining([['refund', 'canceled', 5]]));
    expect(shapes[2]).toHaveLength(4);
    // Balances: grant + 50 − 20 − 3 (the net charge of the enriched campaign).
    expect(
      await Promise.all(orgs.map(async (org) => (await call(api(), '/v1/org/describe', { apiKey: org.apiKey })).data.credits.smb)),
    ).toEqual([127, 227, 327]);
  });

  it('an operator removal below the balance is refused, and an adjustment of 0 moves nothing; neither writes an entry', async () => {
    const org = await newOrganization({ smbCredits: 10 });
    await expect(ledger().adjust(org.organizationId, -11, 'too much')).rejects.toThrow(RangeError);
    // Zero moves nothing: the balance, and no entry.
    expect(await ledger().adjust(org.organizationId, 0, 'nothing')).toEqual({ balance: 10 });
    await expect(ledger().adjust('org_111111111111111111111', 5)).rejects.toThrow(/not found|organization/i);
    expect((await ledger().entriesOf(org.organizationId)).map((e) => e.reason)).toEqual(['initial_grant']);
  });
});

/** Waits until a campaign is back in draft after an attempt that ended as `status`. */
async function pollDraft(apiKey: string, campaignId: string, status: 'failed' | 'canceled') {
  const campaign = await waitForStatus(api(), apiKey, campaignId, 'draft');
  expect(campaign.lastEnrichment).toMatchObject({ status, refunded: true });
  expect(campaign.credits.charged).toBe(0);
}

describe('POST /v1/org/ledger', () => {
  let org: { organizationId: string; apiKey: string };
  let other: { organizationId: string; apiKey: string };
  let campaignA: string;
  let campaignB: string;

  beforeAll(async () => {
    const p = uniquePrefix();
    const accounts = [account(`${p}_a`, 'active', [contact(`${p}_ca`)]), account(`${p}_b`)];
    await importAccounts(accounts);
    org = await newOrganization({ smbCredits: 500 });
    other = await newOrganization({ smbCredits: 70 });
    campaignA = await createApiCampaign(
      api(),
      org.apiKey,
      accounts.map((a) => a.accountId),
    );
    campaignB = await createApiCampaign(api(), org.apiKey, [accounts[0]!.accountId]);
    for (const campaignId of [campaignA, campaignB]) {
      expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
      await waitForStatus(api(), org.apiKey, campaignId, 'enriched');
    }
    for (let i = 0; i < 5; i++) await ledger().adjust(org.organizationId, i + 1, `adjustment ${i}`);
  });

  it('lists every entry newest first, as the store holds them', async () => {
    const stored = await ledger().entriesOf(org.organizationId);
    expect(stored).toHaveLength(1 + 3 + 5);
    const res = await call(api(), LEDGER, { apiKey: org.apiKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ entries: [...stored].sort(newestFirst).map(shown), nextCursor: null });
    expect(Object.keys(res.data.entries[0]).sort()).toEqual([
      'amount',
      'attemptId',
      'campaignId',
      'createdAt',
      'id',
      'kind',
      'note',
      'reason',
    ]);
  });

  it('filters by campaign, by kind and by both (AND), in every encoding', async () => {
    const stored = (await ledger().entriesOf(org.organizationId)).sort(newestFirst).map(shown);
    const byCampaign = await call(api(), LEDGER, { apiKey: org.apiKey, body: { filters: { campaignId: campaignA } } });
    expect(byCampaign.data.entries).toEqual(stored.filter((e) => e.campaignId === campaignA));
    expect(byCampaign.data.entries.map((e: any) => e.kind)).toEqual(['refund', 'charge']);
    const refunds = await call(api(), LEDGER, {
      apiKey: org.apiKey,
      form: new URLSearchParams({ 'filters[kind]': 'refund', limit: '50' }),
    });
    expect(refunds.data.entries).toEqual(stored.filter((e) => e.kind === 'refund'));
    const form = new FormData();
    form.append('filters[kind]', 'charge');
    form.append('filters[campaignId]', campaignB);
    const both = await call(api(), LEDGER, { apiKey: org.apiKey, multipart: form });
    expect(both.data.entries).toEqual(stored.filter((e) => e.kind === 'charge' && e.campaignId === campaignB));
    expect(both.data.entries).toHaveLength(1);
    const adjustments = await call(api(), LEDGER, { apiKey: org.apiKey, body: { filters: { kind: 'adjustment' } } });
    expect(adjustments.data.entries.map((e: any) => e.reason)).toEqual([
      'operator',
      'operator',
      'operator',
      'operator',
      'operator',
      'initial_grant',
    ]);
  });

  it('pages are stable under concurrent writes: every entry that existed is seen once, in order', async () => {
    const before = (await ledger().entriesOf(org.organizationId)).sort(newestFirst).map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // Another movement lands between every two pages.
      const [res] = await Promise.all([
        call(api(), LEDGER, { apiKey: org.apiKey, body: { limit: 2, ...(cursor ? { cursor } : {}) } }),
        ledger().adjust(org.organizationId, 1, `during page ${pages}`),
      ]);
      expect(res.status).toBe(200);
      seen.push(...res.data.entries.map((e: any) => e.id));
      cursor = res.data.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toEqual(before);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(before.length / 2));
  });

  it("never shows another organization's entries, even filtered by its campaign", async () => {
    const mine = await allPages(org.apiKey);
    const theirs = await allPages(other.apiKey);
    expect(theirs.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([['adjustment', 'initial_grant', 70]]);
    expect(theirs.entries.some((e) => mine.entries.some((m) => m.id === e.id))).toBe(false);
    const foreign = await call(api(), LEDGER, { apiKey: other.apiKey, body: { filters: { campaignId: campaignA } } });
    expect(foreign.data).toEqual({ entries: [], nextCursor: null });
  });

  it('refuses a cursor that was altered, belongs to another organization, or comes with other filters or limit', async () => {
    const first = await call(api(), LEDGER, { apiKey: org.apiKey, body: { limit: 2 } });
    const cursor = first.data.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const next = await call(api(), LEDGER, { apiKey: org.apiKey, body: { limit: 2, cursor } });
    expect(next.status).toBe(200);
    const altered = `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'BB' : 'AA'}`;
    for (const [apiKey, body] of [
      [other.apiKey, { limit: 2, cursor }],
      [org.apiKey, { limit: 3, cursor }],
      [org.apiKey, { limit: 2, cursor, filters: { kind: 'charge' } }],
      [org.apiKey, { limit: 2, cursor: altered }],
    ] as const) {
      const res = await call(api(), LEDGER, { apiKey, body });
      expectError(res, 400, 'invalid_request');
      expect(res.error!.details.issues.some((issue: string) => issue.startsWith('cursor:'))).toBe(true);
    }
    // A campaign-list cursor is not a ledger cursor.
    const list = await call(api(), '/v1/campaigns/list', { apiKey: org.apiKey, body: { limit: 1 } });
    expectError(
      await call(api(), LEDGER, { apiKey: org.apiKey, body: { limit: 1, cursor: list.data.nextCursor } }),
      400,
      'invalid_request',
    );
  });

  it('refuses bad input naming the field', async () => {
    for (const [body, field] of [
      [{ filters: { kind: 'bonus' } }, 'filters.kind'],
      [{ filters: { campaignId: 'camp_x' } }, 'filters.campaignId'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ filters: { status: 'draft' } }, 'filters'],
    ] as const) {
      const res = await call(api(), LEDGER, { apiKey: org.apiKey, body });
      expectError(res, 400, 'invalid_request');
      expect(res.error!.details.issues.join('\n')).toContain(field);
    }
  });
});

describe('npm run ops -- credits:reconcile', () => {
  const run = promisify(execFile);
  /** Runs the operator CLI against `tableName` as a child process; never throws on a non-zero exit. */
  async function ops(tableName: string, ...args: string[]) {
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ['--import', 'tsx', 'infra/ops.ts', ...args, '--table', tableName, '--bucket', config.bucketName],
        {
          cwd: ROOT,
          // The CLI runs outside the local Lambda emulation of this process.
          env: { ...environmentOutsideLambda(), TABLE_NAME: tableName },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
  }

  it('reports no drift on a clean stack, and exits 1 naming the organization once a balance moves behind the ledger', async () => {
    // A stack of its own: a fresh table on the same DynamoDB Local.
    const tableName = `reconcile-${randomBytes(4).toString('hex')}`;
    await ensureTable(dynamodb, tableName);

    const created = await ops(tableName, 'org:create', '--name', 'Reconciled', '--smb-credits', '100');
    expect(created.code, created.stderr).toBe(0);
    const { organizationId } = JSON.parse(created.stdout) as { organizationId: string };
    const second = JSON.parse((await ops(tableName, 'org:create', '--name', 'Other', '--smb-credits', '0')).stdout) as {
      organizationId: string;
    };
    const adjusted = await ops(tableName, 'org:credits', '--org', organizationId, '--add', '-30', '--note', 'invoice 7 refunded by card');
    expect(JSON.parse(adjusted.stdout)).toEqual({ organizationId, smb: 70, adjustmentId: expect.stringMatching(/^adj_/) });
    const entries = await createLedgerStore({ client: ddb, tableName }).entriesOf(organizationId);
    expect(entries.map((e) => [e.kind, e.reason, e.amount, e.note])).toEqual([
      ['adjustment', 'initial_grant', 100, null],
      ['adjustment', 'operator', -30, 'invoice 7 refunded by card'],
    ]);

    const clean = await ops(tableName, 'credits:reconcile');
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ organizations: 2, drift: [], campaignDrift: [] });

    // A write that moves the balance without an entry (what lib/credits never does).
    await ddb.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.organization(organizationId),
        UpdateExpression: 'SET smbCredits = smbCredits + :five',
        ExpressionAttributeValues: { ':five': 5 },
      }),
    );
    const drifted = await ops(tableName, 'credits:reconcile');
    expect(drifted.code).toBe(1);
    expect(drifted.stderr).toContain(organizationId);
    expect(drifted.stderr).not.toContain(second.organizationId);
    expect(JSON.parse(drifted.stdout)).toEqual({
      organizations: 2,
      drift: [{ organizationId, balance: 75, ledgerSum: 70, entries: 2, drift: 5 }],
      campaignDrift: [],
    });
    const one = await ops(tableName, 'credits:reconcile', '--org', second.organizationId);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ organizations: 1, drift: [], campaignDrift: [] });
  });

  it('exits 1 naming the campaign whose credits.charged changed behind the ledger (issue #31)', async () => {
    const tableName = `reconcile-${randomBytes(4).toString('hex')}`;
    await ensureTable(dynamodb, tableName);
    const { organizationId } = JSON.parse((await ops(tableName, 'org:create', '--name', 'Campaigns', '--smb-credits', '10')).stdout) as {
      organizationId: string;
    };
    const campaignId = `camp_${'2'.repeat(21)}`;
    // A campaign that was never charged: credits.charged 0 and no entry agree.
    await ddb.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...keys.campaign(organizationId, campaignId), type: 'campaign', id: campaignId, organizationId, creditsCharged: 0 },
      }),
    );
    const clean = await ops(tableName, 'credits:reconcile', '--org', organizationId);
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ organizations: 1, drift: [], campaignDrift: [] });

    // Its credits.charged moved without an entry: the balance still equals the ledger, the campaign does not.
    await ddb.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.campaign(organizationId, campaignId),
        UpdateExpression: 'SET creditsCharged = :three',
        ExpressionAttributeValues: { ':three': 3 },
      }),
    );
    const drifted = await ops(tableName, 'credits:reconcile');
    expect(drifted.code).toBe(1);
    expect(drifted.stderr).toContain(`campaign ${campaignId}: charged 3 credits, ledger 0 credits (drift 3)`);
    expect(JSON.parse(drifted.stdout)).toEqual({
      organizations: 1,
      drift: [],
      campaignDrift: [{ organizationId, campaignId, charged: 3, ledgerCharged: 0, drift: 3 }],
    });
  });
});
