/**
 * `POST /v1/org/usage` (docs/authentication.md "Usage"), through HTTP against DynamoDB Local: requests counted per
 * key and UTC day in the limiter's own writes (refusals included), credits from the ledger.
 */
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { apiKeys, ledger, orgUsage, requestLimiter, usageDependencies, usageMonths } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';
import { activeAccounts, CREATE, DESCRIBE, ENRICH, GET, importAccounts, pollUntil, uniquePrefix } from './enrichment/support';

const api = useApi();
const USAGE = '/v1/org/usage';

describe('org/usage', () => {
  it('requests per key equal what each key sent (refusals included); credits per key equal the ledger entries with that keyId', async () => {
    // A window of 100 requests an hour for the whole organization: the reader's flood below ends in 429s.
    const org = await newOrganization({ smbCredits: 50, limits: { requests: 100, windowSeconds: 3600 } });
    const launcher = await apiKeys().create(org.organizationId, { scopes: ['campaigns:write', 'campaigns:launch', 'campaigns:read'] });
    const reader = await apiKeys().create(org.organizationId, { scopes: ['org:read'] });
    const auditor = await apiKeys().create(org.organizationId, { scopes: ['usage:read'] });
    const keyIdOf = async (secret: string) => (await apiKeys().find(secret))!.keyId!;

    // The launcher creates and launches a campaign (charges, and any refunds, on the ledger under its key); every
    // request it sends is counted here.
    let launcherSent = 0;
    let namingCampaign = 0;
    const asLauncher = (path: string, body: Record<string, unknown>) => {
      launcherSent++;
      if (typeof body.campaignId === 'string') namingCampaign++;
      return call(api(), path, { apiKey: launcher, body });
    };
    const list = activeAccounts(uniquePrefix(), 3);
    await importAccounts(list);
    const created = await asLauncher(CREATE, { name: 'Usage', accountIds: list.map((a) => a.accountId) });
    const campaignId = created.data.id as string;
    expect((await asLauncher(ENRICH, { campaignId })).status).toBe(200);
    await pollUntil(
      async () => (await asLauncher(GET, { campaignId })).data,
      (campaign) => campaign?.status === 'enriched',
      { intervalMs: 250 },
    );

    // Through HTTP with a usage:read key: the launcher's row (the auditor's own call is counted for the auditor).
    await requestLimiter().flush();
    const today = new Date().toISOString().slice(0, 10);
    const launcherId = await keyIdOf(launcher);
    const answer = await call(api(), USAGE, { apiKey: auditor, body: { from: today, to: today, groupBy: 'key' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.data.from).toBe(today);
    expect(answer.data.rows.find((row: { keyId: string }) => row.keyId === launcherId)).toMatchObject({ requests: launcherSent });

    // The reader sends until refused three times: the window's rest, then 429s.
    let readerSent = 0;
    let refused = 0;
    while (refused < 3) {
      const res = await call(api(), DESCRIBE, { apiKey: reader });
      readerSent++;
      if (res.status === 429) refused++;
    }

    await requestLimiter().flush();
    const byKey = await orgUsage(usageDependencies(), org.organizationId, { from: today, to: today, groupBy: 'key' });
    const rowOf = (keyId: string) => byKey.rows.find((row) => 'keyId' in row && row.keyId === keyId);
    expect(rowOf(await keyIdOf(reader))?.requests).toBe(readerSent);
    expect(rowOf(await keyIdOf(launcher))!.requests).toBe(launcherSent);

    // Credits per key: the ledger's entries with that keyId.
    const entries = await ledger().entriesOf(org.organizationId);
    const charged = -entries.filter((e) => e.keyId === launcherId && e.kind === 'charge').reduce((sum, e) => sum + e.amount, 0);
    const refunded = entries.filter((e) => e.keyId === launcherId && e.kind === 'refund').reduce((sum, e) => sum + e.amount, 0);
    expect(charged).toBeGreaterThan(0);
    expect(rowOf(launcherId)).toMatchObject({ creditsCharged: charged, creditsRefunded: refunded });
    expect(rowOf(await keyIdOf(reader))).toMatchObject({ creditsCharged: 0, creditsRefunded: 0 });

    // By campaign: the requests whose body named the campaign, and the campaign's credits.
    const byCampaign = await orgUsage(usageDependencies(), org.organizationId, { from: today, to: today, groupBy: 'campaign' });
    expect(namingCampaign).toBeGreaterThan(1);
    expect(byCampaign.rows).toEqual([{ campaignId, requests: namingCampaign, creditsCharged: charged, creditsRefunded: refunded }]);

    // By day: one row, every key's requests together and the same credits.
    await requestLimiter().flush();
    const byDay = await orgUsage(usageDependencies(), org.organizationId, { from: today, to: today, groupBy: 'day' });
    const keyRows = (await orgUsage(usageDependencies(), org.organizationId, { from: today, to: today, groupBy: 'key' })).rows;
    expect(byDay.rows).toEqual([
      {
        day: today,
        requests: keyRows.reduce((sum, row) => sum + row.requests!, 0),
        creditsCharged: charged,
        creditsRefunded: refunded,
      },
    ]);
  });

  it('refuses a range over 92 days apart or backwards, naming `to`; 92 days apart (93 days) is answered; a missing scope is 403', async () => {
    const org = await newOrganization();
    for (const body of [
      { from: '2026-01-01', to: '2026-04-04', groupBy: 'day' },
      { from: '2026-02-01', to: '2026-01-31', groupBy: 'key' },
    ]) {
      const res = await call(api(), USAGE, { apiKey: org.apiKey, body });
      expect(res.status).toBe(400);
      expect(res.error?.code).toBe('invalid_request');
      expect(JSON.stringify(res.error?.details)).toContain('to');
    }
    expect((await call(api(), USAGE, { apiKey: org.apiKey, body: { from: '2026-01-01', to: '2026-04-03', groupBy: 'day' } })).status).toBe(
      200,
    );
    const reader = await apiKeys().create(org.organizationId, { scopes: ['org:read'] });
    const res = await call(api(), USAGE, { apiKey: reader, body: { from: '2026-01-01', to: '2026-01-02', groupBy: 'day' } });
    expect(res.error).toMatchObject({ code: 'insufficient_scope', details: { required: 'usage:read' } });
  });

  it('by key over 92 days reads in proportion to the rows: at most 4 month items a key, whatever the days', async () => {
    const org = await newOrganization();
    // 3 keys and 2 campaigns with requests on every one of 92 days (2026-01-01 .. 2026-04-02: 4 months), written as the limiter writes them.
    const from = '2026-01-01';
    const to = '2026-04-02';
    const days = Array.from({ length: 92 }, (_, i) =>
      new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
    );
    expect(days.at(-1)).toBe(to);
    const keyIds = ['key_a', 'key_b', 'key_c'];
    const campaignIds = ['camp_a', 'camp_b'];
    const counts = [
      ...keyIds.flatMap((id, k) => days.map((day) => ({ kind: 'K' as const, id, day, n: k + 1 }))),
      ...campaignIds.flatMap((id, c) => days.map((day) => ({ kind: 'C' as const, id, day, n: 10 * (c + 1) }))),
    ];
    expect((await usageMonths().add(org.organizationId, counts)).failed).toEqual([]);

    // Every read the use case makes, with what it returned (SDK middleware on the shared client).
    const reads: { command: string; partition: string; items: number }[] = [];
    const name = 'usageReads';
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        // The document client's input (plain values) or the marshalled one ({ S }), whichever this step sees.
        const pk = (args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk'];
        const partition = typeof pk === 'string' ? pk : String((pk as { S?: string } | undefined)?.S ?? '');
        reads.push({ command: String(context.commandName), partition, items: (result.output as { Count?: number }).Count ?? 0 });
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      const byKey = await orgUsage(usageDependencies(), org.organizationId, { from, to, groupBy: 'key' });
      expect(byKey.rows).toEqual(keyIds.map((keyId, k) => ({ keyId, requests: 92 * (k + 1), creditsCharged: 0, creditsRefunded: 0 })));
      const usageReads = reads.filter((read) => read.partition === keys.usageMonths(org.organizationId));
      expect(usageReads).toHaveLength(1); // one Query
      expect(usageReads[0]!.items).toBe(3 * 4); // 4 month items per row, not 92 days × 3 keys
      expect(usageReads[0]!.items).toBeLessThanOrEqual(4 * byKey.rows.length);

      reads.length = 0;
      const oneDay = await orgUsage(usageDependencies(), org.organizationId, { from: '2026-02-10', to: '2026-02-10', groupBy: 'key' });
      expect(oneDay.rows.map((row) => row.requests)).toEqual([1, 2, 3]);
      expect(reads.filter((read) => read.partition === keys.usageMonths(org.organizationId))[0]!.items).toBe(3);

      reads.length = 0;
      const byCampaign = await orgUsage(usageDependencies(), org.organizationId, { from, to: '2026-01-31', groupBy: 'campaign' });
      expect(byCampaign.rows).toEqual(
        campaignIds.map((campaignId, c) => ({ campaignId, requests: 31 * 10 * (c + 1), creditsCharged: 0, creditsRefunded: 0 })),
      );
      expect(reads.filter((read) => read.partition === keys.usageMonths(org.organizationId))[0]!.items).toBe(2);
    } finally {
      ddb.middlewareStack.remove(name);
    }
  });
});
