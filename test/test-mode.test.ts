/**
 * Test mode (docs/test-mode.md; issue #32), end to end through HTTP against the
 * local stack: test keys act on the organization's test twin, every answer
 * to one carries `Test-Mode: true`, the built-in warehouse's magic account
 * IDs give their outcomes, counts and refunds, live and test never see each
 * other's data, and no test traffic moves a live credit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { API_KEY_PATTERN, REVOKED_TEST_API_KEY, TEST_API_KEY_PATTERN } from '../lib/ids';
import { apiKeys, organizations } from '../lib/root';
import { TEST_TWIN_CREDITS, TEST_TWIN_MAX_ENRICHING_ACCOUNTS } from '../lib/organizations/store';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
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
  waitForStatus,
} from './enrichment/support';
import { startReceiver, webhookHeaders, type Receiver } from './webhooks/receiver';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.2';

const api = useApi({ webhooks: { intervalMs: 100 } });
const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A live organization (with `smbCredits`) and a test key of its twin (created here, as `key:create --test` does). */
async function livePair(smbCredits = 10_000) {
  const live = await newOrganization({ name: `Live ${uniquePrefix()}`, smbCredits });
  const twin = await organizations().testTwin(live.organizationId);
  const testKey = await apiKeys().create(twin.id);
  return { ...live, twinId: twin.id, testKey };
}

const QUOTE = '/v1/campaigns/quote';
const ACCOUNTS = '/v1/campaigns/accounts';
const EXPORT = '/v1/campaigns/export';
const LEDGER = '/v1/org/ledger';
const DESCRIBE = '/v1/org/describe';

const isTestAnswer = (res: ApiResponse) => res.headers.get('test-mode') === 'true';

/** Every item of the table that belongs to an organization: its partition, and items that name it (keys, records). */
async function itemsOf(organizationId: string): Promise<string[]> {
  const items: string[] = [];
  const pages = paginateScan(
    { client: ddb },
    {
      TableName: config.tableName,
      ConsistentRead: true,
      FilterExpression: 'pk = :pk OR organizationId = :id',
      ExpressionAttributeValues: { ':pk': `ORG#${organizationId}`, ':id': organizationId },
    },
  );
  for await (const page of pages)
    for (const item of page.Items ?? []) items.push(JSON.stringify(item, (_k, v: unknown) => (v instanceof Set ? [...v].sort() : v)));
  return items.sort();
}

/** Per-account outcomes of a campaign's last evaluation, by account ID. */
async function outcomesOf(apiKey: string, campaignId: string): Promise<Record<string, { outcome: string; contactsFound: number | null }>> {
  const res = await call(api(), ACCOUNTS, { apiKey, body: { campaignId, limit: 1000 } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Object.fromEntries(
    res.data.accounts.map((a: { accountId: string; outcome: string; contactsFound: number | null }) => [
      a.accountId,
      { outcome: a.outcome, contactsFound: a.contactsFound },
    ]),
  );
}

describe('test keys and the test twin', () => {
  it("a test key is cek_test_ + 40 characters, acts on the twin, and describe shows the live organization with the twin's test credits and capacity, marked Test-Mode: true", async () => {
    const { organizationId, apiKey, testKey, twinId } = await livePair();
    expect(testKey).toMatch(TEST_API_KEY_PATTERN);
    expect(testKey).toMatch(API_KEY_PATTERN);
    expect(apiKey).not.toMatch(TEST_API_KEY_PATTERN);

    const test = await call(api(), DESCRIBE, { apiKey: testKey });
    expect(test.status, JSON.stringify(test.body)).toBe(200);
    expect(isTestAnswer(test)).toBe(true);
    const live = await call(api(), DESCRIBE, { apiKey });
    expect(live.headers.get('test-mode')).toBeNull();
    expect(test.data.organization).toEqual(live.data.organization);
    expect(test.data.organization.id).toBe(organizationId);
    expect(test.data.credits.smb).toBe(TEST_TWIN_CREDITS);
    expect(test.data.enrichment).toEqual({ enrichingAccounts: 0, maxEnrichingAccounts: TEST_TWIN_MAX_ENRICHING_ACCOUNTS });
    expect(live.data.credits.smb).toBe(10_000);

    // Linked both ways; a second call finds the same twin (no second grant).
    expect((await organizations().get(organizationId))?.testOrganizationId).toBe(twinId);
    expect((await organizations().get(twinId))?.liveOrganizationId).toBe(organizationId);
    expect((await organizations().testTwin(organizationId)).id).toBe(twinId);
    const ledger = await call(api(), LEDGER, { apiKey: testKey });
    expect(ledger.data.entries.map((e: { kind: string; reason: string; amount: number }) => [e.kind, e.reason, e.amount])).toEqual([
      ['adjustment', 'initial_grant', TEST_TWIN_CREDITS],
    ]);
  });

  it('every answer to a test key carries Test-Mode: true, refusals included; the documented revoked test key answers revoked_api_key', async () => {
    const { testKey } = await livePair();
    const invalid = await call(api(), '/v1/campaigns/get', { apiKey: testKey, body: { campaignId: 'nope' } });
    expectError(invalid, 400, 'invalid_request');
    expect(isTestAnswer(invalid)).toBe(true);
    const missing = await call(api(), '/v1/campaigns/get', { apiKey: testKey, body: { campaignId: 'camp_111111111111111111111' } });
    expectError(missing, 404, 'not_found');
    expect(isTestAnswer(missing)).toBe(true);
    const unknown = await call(api(), DESCRIBE, { apiKey: `cek_test_${'1'.repeat(40)}` });
    expectError(unknown, 401, 'invalid_api_key');
    expect(isTestAnswer(unknown)).toBe(true);
    const revoked = await call(api(), DESCRIBE, { apiKey: REVOKED_TEST_API_KEY });
    expectError(revoked, 401, 'revoked_api_key');
    expect(isTestAnswer(revoked)).toBe(true);
    const route = await call(api(), '/v1/nowhere', { apiKey: testKey });
    expectError(route, 404, 'not_found');
    expect(isTestAnswer(route)).toBe(true);

    await apiKeys().revoke(testKey);
    const gone = await call(api(), DESCRIBE, { apiKey: testKey });
    expectError(gone, 401, 'revoked_api_key');
    expect(isTestAnswer(gone)).toBe(true);
  });

  it('an unknown live organization has no twin, nor does a twin', async () => {
    await expect(organizations().testTwin('org_111111111111111111111')).rejects.toMatchObject({ code: 'not_found' });
    const { twinId } = await livePair();
    await expect(organizations().testTwin(twinId)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('concurrent first uses create one twin with one grant of test credits', async () => {
    const live = await newOrganization({ name: `Race ${uniquePrefix()}` });
    const twins = await Promise.all(Array.from({ length: 5 }, () => organizations().testTwin(live.organizationId)));
    expect(new Set(twins.map((t) => t.id)).size).toBe(1);
    const testKey = await apiKeys().create(twins[0]!.id);
    const ledger = await call(api(), LEDGER, { apiKey: testKey });
    expect(ledger.data.entries).toHaveLength(1);
    expect((await call(api(), DESCRIBE, { apiKey: testKey })).data.credits.smb).toBe(TEST_TWIN_CREDITS);
  });
});

describe('the built-in test warehouse (docs/test-mode.md)', () => {
  it('each magic ID gives its outcome, counts and refunds', async () => {
    const { organizationId, testKey } = await livePair();
    const p = uniquePrefix();
    const ids = {
      found1: `test_found_${p}1`,
      found2: `test_found_${p}2`,
      nocontacts: `test_nocontacts_${p}`,
      closed: `test_closed_${p}`,
      inactive: `test_inactive_${p}`,
      crm: `test_crm_${p}`,
      recent: `test_recent_${p}`,
      other: `acc_${p}`,
      otherTest: `test_other_${p}`,
    };
    const before = await itemsOf(organizationId);
    const campaignId = await createApiCampaign(api(), testKey, Object.values(ids), 30);

    const quote = await call(api(), QUOTE, { apiKey: testKey, body: { campaignId } });
    expect(quote.data.accounts).toEqual({
      requested: 9,
      eligible: 3,
      excluded: { total: 6, invalid: 4, recentlyEnriched: 1, crmExcluded: 1 },
    });
    expect(quote.data.outcome).toBe('launchable');

    const launched = await enrich(api(), testKey, campaignId);
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(isTestAnswer(launched)).toBe(true);
    const enriched = await waitForStatus(api(), testKey, campaignId, 'enriched');
    expect(enriched.accounts).toEqual({
      requested: 9,
      eligible: 3,
      excluded: { total: 6, invalid: 4, recentlyEnriched: 1, crmExcluded: 1 },
    });
    // 3 charged, the account without contacts refunded.
    expect(enriched.credits).toEqual({ charged: 2, remaining: TEST_TWIN_CREDITS - 2 });
    expect(enriched.results).toEqual({
      totalAccounts: 3,
      totalContactsFound: 6,
      pctAccountsWithContact: 2 / 3,
      pctAccountsWithMobile: 2 / 3,
    });

    expect(await outcomesOf(testKey, campaignId)).toEqual({
      [ids.found1]: { outcome: 'found', contactsFound: 3 },
      [ids.found2]: { outcome: 'found', contactsFound: 3 },
      [ids.nocontacts]: { outcome: 'not_found', contactsFound: 0 },
      [ids.closed]: { outcome: 'invalid', contactsFound: null },
      [ids.inactive]: { outcome: 'invalid', contactsFound: null },
      [ids.crm]: { outcome: 'crm_excluded', contactsFound: null },
      [ids.recent]: { outcome: 'recently_enriched', contactsFound: null },
      [ids.other]: { outcome: 'invalid', contactsFound: null },
      [ids.otherTest]: { outcome: 'invalid', contactsFound: null },
    });
    const ledger = await call(api(), LEDGER, { apiKey: testKey, body: { filters: { campaignId } } });
    expect(ledger.data.entries.map((e: { kind: string; reason: string; amount: number }) => [e.kind, e.reason, e.amount])).toEqual([
      ['refund', 'no_contacts_found', 1],
      ['charge', 'launch', -3],
    ]);

    // The 3 contacts of a found account: email and mobile, email only, neither.
    const exported = await call(api(), EXPORT, { apiKey: testKey, body: { campaignId } });
    expect(exported.data.rows).toEqual({ accounts: 3, contacts: 6 });
    expect((await call(api(), EXPORT, { apiKey: testKey, body: { campaignId, hasMobilePhone: true } })).data.rows).toEqual({
      accounts: 3,
      contacts: 2,
    });
    expect((await call(api(), EXPORT, { apiKey: testKey, body: { campaignId, hasEmail: true } })).data.rows).toEqual({
      accounts: 3,
      contacts: 4,
    });

    // Nothing of it reached the live organization.
    expect(await itemsOf(organizationId)).toEqual(before);
  });

  it('test_recent_ is recently_enriched only with excludeEnrichedWithinDays ≥ 1', async () => {
    const { testKey } = await livePair();
    const p = uniquePrefix();
    const recentOf = async (days: number | null) => {
      const campaignId = await createApiCampaign(api(), testKey, [`test_recent_${p}`, `test_found_${p}`], days);
      return (await call(api(), QUOTE, { apiKey: testKey, body: { campaignId } })).data.accounts.excluded.recentlyEnriched;
    };
    expect(await recentOf(null)).toBe(0);
    expect(await recentOf(0)).toBe(0);
    expect(await recentOf(1)).toBe(1);
    expect(await recentOf(3650)).toBe(1);
  });

  it('a test_fail_ account fails the attempt: draft, lastEnrichment failed and refunded, the whole charge back, campaign.enrichment_failed sent', async () => {
    const { testKey } = await livePair();
    const hook = await startReceiver();
    receivers.push(hook);
    const endpoint = await call(api(), '/v1/webhooks/create', {
      apiKey: testKey,
      body: { url: hook.url, events: ['campaign.enrichment_failed'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
    const p = uniquePrefix();
    const campaignId = await createApiCampaign(api(), testKey, [`test_found_${p}`, `test_fail_${p}`]);
    expect((await enrich(api(), testKey, campaignId)).status).toBe(200);
    const failed = await pollUntil(
      () => getCampaign(api(), testKey, campaignId),
      // get reads the campaign and the balance in one BatchGetItem, two reads: the refund's balance may show a poll later.
      (r) => r.data?.status === 'draft' && r.data.lastEnrichment !== null && r.data.credits.remaining === TEST_TWIN_CREDITS,
    );
    expect(failed.data.lastEnrichment).toMatchObject({ status: 'failed', refunded: true });
    expect(failed.data.credits).toEqual({ charged: 0, remaining: TEST_TWIN_CREDITS });
    const ledger = await call(api(), LEDGER, { apiKey: testKey, body: { filters: { campaignId } } });
    expect(ledger.data.entries.map((e: { kind: string; reason: string; amount: number }) => [e.kind, e.reason, e.amount])).toEqual([
      ['refund', 'failed', 2],
      ['charge', 'launch', -2],
    ]);
    const [request] = await hook.received(1);
    const event = new Webhook(endpoint.data.secret).verify(request!.body, webhookHeaders(request!)) as {
      type: string;
      data: { campaign: { id: string } };
    };
    expect(event.type).toBe('campaign.enrichment_failed');
    expect(event.data.campaign.id).toBe(campaignId);
  });
});

describe('live and test never see each other', () => {
  let pair: Awaited<ReturnType<typeof livePair>>;
  let liveCampaign: string;
  let testCampaign: string;
  beforeAll(async () => {
    pair = await livePair();
    const p = uniquePrefix();
    await importAccounts([account(`${p}_live`, 'active', [contact(`${p}_live_c`, { mobile: true })])]);
    liveCampaign = await createApiCampaign(api(), pair.apiKey, [`${p}_live`]);
    testCampaign = await createApiCampaign(api(), pair.testKey, [`test_found_${p}`]);
    expect((await enrich(api(), pair.apiKey, liveCampaign)).status).toBe(200);
    expect((await enrich(api(), pair.testKey, testCampaign)).status).toBe(200);
    await waitForStatus(api(), pair.apiKey, liveCampaign, 'enriched');
    await waitForStatus(api(), pair.testKey, testCampaign, 'enriched');
  });

  it('a test key cannot read, list, export, enrich, quote or see the accounts of a live campaign, and the reverse', async () => {
    for (const [apiKey, foreign, own] of [
      [pair.testKey, liveCampaign, testCampaign],
      [pair.apiKey, testCampaign, liveCampaign],
    ] as const) {
      for (const path of ['/v1/campaigns/get', '/v1/campaigns/enrich', EXPORT, QUOTE, ACCOUNTS, '/v1/campaigns/update']) {
        const res = await call(api(), path, { apiKey, body: { campaignId: foreign, ...(path.endsWith('update') ? { name: 'x' } : {}) } });
        expectError(res, 404, 'not_found');
      }
      const listed = await call(api(), '/v1/campaigns/list', { apiKey, body: { limit: 100 } });
      expect(listed.data.campaigns.map((c: { id: string }) => c.id)).toEqual([own]);
    }
  });

  it('cursors, uploads, ledgers and webhook endpoints stay on their side', async () => {
    // A live cursor is refused on the test side (signed per organization).
    await createApiCampaign(api(), pair.apiKey, ['acc_x']);
    const page = await call(api(), '/v1/campaigns/list', { apiKey: pair.apiKey, body: { limit: 1 } });
    expect(page.data.nextCursor).not.toBeNull();
    expectError(
      await call(api(), '/v1/campaigns/list', { apiKey: pair.testKey, body: { limit: 1, cursor: page.data.nextCursor } }),
      400,
      'invalid_request',
    );

    // A live upload cannot be used to create a test campaign.
    const upload = await call(api(), '/v1/uploads/create', { apiKey: pair.apiKey, body: {} });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    await fetch(upload.data.url, { method: 'PUT', body: 'test_found_1\n' });
    expectError(
      await call(api(), '/v1/campaigns/create', { apiKey: pair.testKey, body: { name: 'x', accountIdsUploadId: upload.data.uploadId } }),
      400,
      'invalid_request',
    );

    // Webhook endpoints: each side lists only its own; deleting the other's is not_found.
    const hook = await startReceiver();
    receivers.push(hook);
    const liveEndpoint = await call(api(), '/v1/webhooks/create', { apiKey: pair.apiKey, body: { url: hook.url } });
    expect((await call(api(), '/v1/webhooks/list', { apiKey: pair.testKey })).data.endpoints).toEqual([]);
    expectError(
      await call(api(), '/v1/webhooks/delete', { apiKey: pair.testKey, body: { endpointId: liveEndpoint.data.id } }),
      404,
      'not_found',
    );

    // Ledgers: the test ledger holds its grant and its own campaign's charge, nothing live.
    const testLedger = await call(api(), LEDGER, { apiKey: pair.testKey, body: { limit: 1000 } });
    expect(
      testLedger.data.entries.every((e: { campaignId: string | null }) => e.campaignId === null || e.campaignId === testCampaign),
    ).toBe(true);
    const liveLedger = await call(api(), LEDGER, { apiKey: pair.apiKey, body: { limit: 1000 } });
    expect(liveLedger.data.entries.some((e: { campaignId: string | null }) => e.campaignId === testCampaign)).toBe(false);
  });

  it('a test endpoint receives no event of a live campaign, and the reverse', async () => {
    const fresh = await livePair();
    const liveHook = await startReceiver();
    const testHook = await startReceiver();
    receivers.push(liveHook, testHook);
    expect(
      (
        await call(api(), '/v1/webhooks/create', {
          apiKey: fresh.apiKey,
          body: { url: `${liveHook.url}/live`, events: ['campaign.enriched'] },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(api(), '/v1/webhooks/create', {
          apiKey: fresh.testKey,
          body: { url: `${testHook.url}/test`, events: ['campaign.enriched'] },
        })
      ).status,
    ).toBe(200);
    const p = uniquePrefix();
    await importAccounts([account(`${p}_live`, 'active', [contact(`${p}_c`)])]);
    const live = await createApiCampaign(api(), fresh.apiKey, [`${p}_live`]);
    const test = await createApiCampaign(api(), fresh.testKey, [`test_found_${p}`]);
    await enrich(api(), fresh.apiKey, live);
    await enrich(api(), fresh.testKey, test);
    const [toLive] = await liveHook.received(1);
    const [toTest] = await testHook.received(1);
    expect(JSON.parse(toLive!.body).data.campaign.id).toBe(live);
    expect(JSON.parse(toTest!.body).data.campaign.id).toBe(test);
    // Each side's delivery log holds only its own message.
    const deliveries = async (apiKey: string) =>
      (await call(api(), '/v1/webhooks/deliveries', { apiKey, body: {} })).data.deliveries as { eventType?: string }[];
    expect(await deliveries(fresh.apiKey)).toHaveLength(1);
    expect(await deliveries(fresh.testKey)).toHaveLength(1);
  });
});

describe('a full run in test mode', () => {
  it('from create to CSV download, webhooks verified, with 0 live ledger entries and the live balance unchanged', async () => {
    // A live organization with no credits: its ledger is empty, and stays so.
    const { organizationId, apiKey, testKey } = await livePair(0);
    const liveBefore = await itemsOf(organizationId);
    expect((await call(api(), LEDGER, { apiKey })).data.entries).toEqual([]);

    const hook = await startReceiver();
    receivers.push(hook);
    const endpoint = await call(api(), '/v1/webhooks/create', { apiKey: testKey, body: { url: hook.url, events: ['campaign.enriched'] } });
    expect(endpoint.status).toBe(200);
    expect(isTestAnswer(endpoint)).toBe(true);

    const p = uniquePrefix();
    const accountIds = [
      ...Array.from({ length: 2_500 }, (_, i) => `test_found_${p}_${i}`),
      ...Array.from({ length: 500 }, (_, i) => `test_nocontacts_${p}_${i}`),
    ];
    const created = await call(api(), '/v1/campaigns/create', {
      apiKey: testKey,
      body: { name: 'Test run', accountIds },
      headers: { 'idempotency-key': `run-${p}` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(isTestAnswer(created)).toBe(true);
    const campaignId = created.data.id as string;
    expect((await enrich(api(), testKey, campaignId)).status).toBe(200);
    const enriched = await waitForStatus(api(), testKey, campaignId, 'enriched');
    expect(enriched.credits).toEqual({ charged: 2_500, remaining: TEST_TWIN_CREDITS - 2_500 });
    expect(enriched.results).toEqual({
      totalAccounts: 3_000,
      totalContactsFound: 7_500,
      pctAccountsWithContact: 2_500 / 3_000,
      pctAccountsWithMobile: 2_500 / 3_000,
    });

    const [request] = await hook.received(1);
    const event = new Webhook(endpoint.data.secret).verify(request!.body, webhookHeaders(request!)) as {
      type: string;
      data: { campaign: { id: string; status: string } };
    };
    expect(event.type).toBe('campaign.enriched');
    expect(event.data.campaign).toMatchObject({ id: campaignId, status: 'enriched' });

    const exported = await call(api(), EXPORT, { apiKey: testKey, body: { campaignId, maxContactsPerAccount: 1 } });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    expect(isTestAnswer(exported)).toBe(true);
    expect(exported.data.rows).toEqual({ accounts: 3_000, contacts: 2_500 });
    const csv = await (await fetch(exported.data.url)).text();
    const lines = csv.trimEnd().split('\r\n');
    expect(lines).toHaveLength(1 + 3_000);
    expect(lines.find((line) => line.includes(`test_found_${p}_0,`))).toContain(`ada@test-found-${p.toLowerCase()}-0.example.com`);

    expect((await call(api(), LEDGER, { apiKey })).data.entries).toEqual([]);
    expect((await call(api(), DESCRIBE, { apiKey })).data.credits.smb).toBe(0);
    expect(await itemsOf(organizationId)).toEqual(liveBefore);
  });
});

describe('the README client example', () => {
  it('runs as written in test mode (a test key, test_ IDs): enriched, exported, and the second enrich refused', async () => {
    const { testKey } = await livePair(0);
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('The same with the TypeScript client'));
    const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(section)![1]!;
    expect(block).toContain('process.env.TEST_KEY');
    const script = block
      .replace("from './client/index'", `from ${JSON.stringify(path.join(ROOT, 'client/index.ts'))}`)
      .replace("'http://127.0.0.1:3000'", JSON.stringify(api()));
    const dir = mkdtempSync(path.join(tmpdir(), 'readme-client-'));
    const file = path.join(dir, 'example.mts');
    writeFileSync(file, script);
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, TEST_KEY: testKey } });
      expect(stdout).toContain('totalAccounts: 3');
      expect(stdout).toContain('campaign_not_enrichable 409');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
