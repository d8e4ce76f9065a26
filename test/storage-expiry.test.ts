/**
 * Stored objects of a campaign, from launch to deletion (issue #13 items 2
 * and 4; docs/data-model.md), end to end through the API and the
 * real workflow definition run locally, looking at what is left on s3rver:
 *
 * - launch writes one account object per workflow batch next to the eligible list;
 * - a campaign that expires loses every attempt and evaluation object (its account list stays);
 * - a failed or canceled attempt leaves no result parts or batch objects, even
 *   when a batch still running writes its part after the cancel's compensation;
 * - a new evaluation deletes the one it replaces;
 * - the reconciler expires (and deletes) what a dead execution left past its expiry.
 *
 * The result access period is shortened through `RESULTS_ACCESS_PERIOD_SECONDS`
 * (lib/config.ts), which the in-process CompleteEnrichment task reads.
 */
import { ACCOUNT_FIELDS } from '../lib/warehouse/fields';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { s3 } from '../lib/aws';
import { config } from '../lib/config';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { expireResults, findContactsBatch } from '../lib/enrichment/steps';
import { objectKeys } from '../lib/objects';
import {
  accountLists,
  campaigns,
  embeddedWarehouse,
  enrichment,
  objects,
  organizations,
  outcomes,
  reconcileDependencies,
  results,
  useWarehouse,
  workflow,
} from '../lib/root';
import { reconcileEnrichments } from '../lib/enrichment/reconcile';
import type { Warehouse } from '../lib/warehouse/warehouse';
import { call, newOrganization, useApi, waitForWorkflowTasks } from './support/api';
import {
  account,
  activeAccounts,
  contact,
  createApiCampaign,
  enrich,
  gate,
  getCampaign,
  importAccounts,
  NO_ERASURE,
  ledgerOf,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();

afterEach(() => useWarehouse(undefined));

/** Every key under a prefix of the data bucket, sorted. */
async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) keys.push(object.Key!);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

const readText = async (key: string) =>
  await (await s3().send(new GetObjectCommand({ Bucket: config.bucketName, Key: key }))).Body!.transformToString('utf8');

/** The campaign's keys, relative to `campaigns/<orgId>/<campaignId>/`. */
async function campaignKeys(organizationId: string, campaignId: string): Promise<string[]> {
  const root = `campaigns/${organizationId}/${campaignId}/`;
  return (await keysUnder(root)).map((key) => key.slice(root.length));
}

/** Runs `body` with a result access period of `seconds`. */
async function withAccessPeriod<T>(seconds: number, body: () => Promise<T>): Promise<T> {
  const previous = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
  process.env.RESULTS_ACCESS_PERIOD_SECONDS = String(seconds);
  try {
    return await body();
  } finally {
    if (previous === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previous;
  }
}

/** Creates and launches an API campaign; returns its ID and attempt ID. */
async function launch(apiKey: string, organizationId: string, accountIds: string[]) {
  const campaignId = await createApiCampaign(api(), apiKey, accountIds);
  const res = await enrich(api(), apiKey, campaignId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // From the launch's charge entry: a fast-failing attempt can be compensated (its attempt cleared) before a read of the campaign.
  const charges = (await ledgerOf(organizationId, campaignId)).entries.filter((entry) => entry.kind === 'charge');
  expect(charges).toHaveLength(1);
  const attemptId = charges[0]!.attemptId!;
  return { campaignId, attemptId };
}

const accountsPage = (apiKey: string, campaignId: string) =>
  call(api(), '/v1/campaigns/accounts', { apiKey, body: { campaignId, limit: 1000 } });

describe('per-batch account objects (issue #13 item 2)', () => {
  it('launch writes one object per workflow batch, in eligible-list order, next to the whole eligible list; the workflow enriches from them', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 2_100);
    await importAccounts(accounts, NO_ERASURE);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 5_000 });
    const ids = accounts.map((a) => a.accountId);
    // An invalid ID in the list: it is not eligible, so it is in no batch.
    const { campaignId, attemptId } = await launch(apiKey, organizationId, [ids[0]!, `${p}_missing`, ...ids.slice(1)]);

    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.results).toMatchObject({ totalAccounts: 2_100, totalContactsFound: 2_100 });

    const batchKeys = await keysUnder(objectKeys.batchesPrefix(organizationId, campaignId, attemptId));
    expect(batchKeys).toEqual([0, 1, 2].map((i) => objectKeys.batchAccounts(organizationId, campaignId, attemptId, i)));
    // A header naming the fields, then one JSON array a line: each account's fields as the launch read them
    // (FindContacts reads only contacts, issue #29).
    const batches = await Promise.all(
      batchKeys.map(async (key) => {
        const [header, ...lines] = (await readText(key)).split('\n');
        return { fields: (JSON.parse(header!) as { fields: string[] }).fields, rows: lines.map((line) => JSON.parse(line) as unknown[]) };
      }),
    );
    expect(batches.map((b) => b.rows.length)).toEqual([1_000, 1_000, 100]);
    for (const batch of batches) expect(batch.fields).toEqual(ACCOUNT_FIELDS.map((field) => field.key));
    const accountIdAt = batches[0]!.fields.indexOf('accountId');
    expect(batches.flatMap((b) => b.rows).map((row) => row[accountIdAt])).toEqual(ids);
    const first = accounts[0]! as unknown as Record<string, unknown>;
    expect(batches[0]!.rows[0]).toEqual(batches[0]!.fields.map((key) => first[key]));
    expect((await readText(objectKeys.eligibleList(organizationId, campaignId, attemptId))).split('\n')).toEqual(ids);
  });
  it('a batch of an attempt launched before batch objects existed slices the eligible list', async () => {
    const p = uniquePrefix();
    // Account i has i contacts, so the contacts a batch finds tell which accounts it read.
    const accounts = Array.from({ length: 6 }, (_, i) =>
      account(
        `${p}_${i}`,
        'active',
        Array.from({ length: i }, (_, c) => contact(`${p}_${i}_${c}`)),
      ),
    );
    await importAccounts(accounts, NO_ERASURE);
    const ref = { organizationId: `org_${p}`, campaignId: `camp_${p}`, attemptId: `att_${p}` };
    const eligibleObjectKey = objectKeys.eligibleList(ref.organizationId, ref.campaignId, ref.attemptId);
    await accountLists().put(
      eligibleObjectKey,
      accounts.map((a) => a.accountId),
    );
    const summary = await findContactsBatch(
      { accountLists: accountLists(), warehouse: embeddedWarehouse(), results: results(), outcomes: outcomes() },
      { ...ref, eligibleObjectKey, batch: { index: 1, offset: 2, count: 3 } },
    );
    expect(summary).toEqual({ index: 1, accounts: 3, accountsWithContact: 3, accountsWithMobile: 0, contacts: 2 + 3 + 4 });
    expect(await keysUnder(objectKeys.resultsPrefix(ref.organizationId, ref.campaignId, ref.attemptId))).toHaveLength(1);
  });
});

describe('storage expiry (issue #13 item 4)', () => {
  it('an expired campaign keeps only its account list: result parts, batch objects, eligible list and evaluation objects are deleted; a rerun deletes nothing more', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 1_200);
    await importAccounts(accounts, NO_ERASURE);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 5_000 });

    const { campaignId, attemptId } = await withAccessPeriod(3, async () => {
      const launched = await launch(
        apiKey,
        organizationId,
        accounts.map((a) => a.accountId),
      );
      await waitForStatus(api(), apiKey, launched.campaignId, 'enriched');
      return launched;
    });
    const attempt = `attempts/${attemptId}/`;
    const evaluation = `evaluations/${attemptId}/`;
    // While enriched: everything is there, and the results export. (Result parts: one or more objects per batch, whatever their format.)
    const stored = await campaignKeys(organizationId, campaignId);
    expect(stored.filter((key) => key.startsWith(`${attempt}results/`)).length).toBeGreaterThanOrEqual(2);
    expect(stored.filter((key) => !key.startsWith(`${attempt}results/`))).toEqual([
      'accounts.txt',
      `${attempt}batches/000000.jsonl`,
      `${attempt}batches/000001.jsonl`,
      `${attempt}eligible.txt`,
      `${evaluation}contacts/000000.json`,
      `${evaluation}contacts/000001.json`,
      `${evaluation}outcomes/000000.json`,
      `${evaluation}outcomes/000001.json`,
    ]);
    const exported = await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId } });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);

    await waitForStatus(api(), apiKey, campaignId, 'expired');
    // The workflow's ExpireResults step rewrites the status, then deletes.
    const left = await pollUntil(
      () => campaignKeys(organizationId, campaignId),
      (keys) => keys.length === 1,
    );
    expect(left).toEqual(['accounts.txt']);
    expect((await campaigns().get(organizationId, campaignId))!.status).toBe('expired');
    expect((await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId } })).status).toBe(410);
    expect((await accountsPage(apiKey, campaignId)).status).toBe(410);

    // The step again (a retried task): nothing left to delete, nothing changes.
    expect(
      await expireResults(
        { enrichment: enrichment(), campaigns: campaigns(), objects: objects() },
        { organizationId, campaignId, attemptId },
      ),
    ).toEqual({ expired: false, objectsDeleted: 0 });
    expect(await campaignKeys(organizationId, campaignId)).toEqual(['accounts.txt']);
  });

  it('a failed attempt leaves no result parts or batch objects; its outcomes and eligible list stay until a new evaluation replaces them', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 2_500);
    await importAccounts(accounts, NO_ERASURE);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10_000 });

    // Three batches: the first two find their contacts (their parts are written), the third fails.
    const inner = embeddedWarehouse();
    let calls = 0;
    const warehouse: Warehouse = {
      getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
      async getAccounts(ids) {
        if (++calls === 3) throw new Error('Injected warehouse failure');
        return inner.getAccounts(ids);
      },
    };
    useWarehouse(warehouse);
    const { campaignId, attemptId } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    const resultsPrefix = objectKeys.resultsPrefix(organizationId, campaignId, attemptId);
    const batchesPrefix = objectKeys.batchesPrefix(organizationId, campaignId, attemptId);

    await waitForStatus(api(), apiKey, campaignId, 'draft');
    expect((await getCampaign(api(), apiKey, campaignId)).data.lastEnrichment).toMatchObject({ status: 'failed', refunded: true });
    expect(
      await pollUntil(
        () => keysUnder(batchesPrefix),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
    expect(calls).toBe(3);
    expect(
      await pollUntil(
        () => keysUnder(resultsPrefix),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);

    // The evaluation's outcomes and the eligible list stay: a draft shows its most recent evaluation.
    // Its three outcome chunks, and the contact counts of whichever of the two good batches finished before the third
    // failed stopped the map (0 to 2 of them: that order is the workflow's, not this test's).
    const evaluation = await keysUnder(objectKeys.evaluationPrefix(organizationId, campaignId, attemptId));
    expect(evaluation.filter((key) => key.includes('/outcomes/'))).toHaveLength(3);
    expect(evaluation.filter((key) => key.includes('/contacts/')).length).toBeLessThanOrEqual(2);
    expect(evaluation.every((key) => key.includes('/outcomes/') || key.includes('/contacts/'))).toBe(true);
    expect(await keysUnder(objectKeys.eligibleList(organizationId, campaignId, attemptId))).toHaveLength(1);
    const page = await accountsPage(apiKey, campaignId);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.data.accounts).toHaveLength(1_000);

    // A new launch replaces the evaluation: the previous one's objects, and its attempt's, are deleted.
    useWarehouse(undefined);
    const again = await enrich(api(), apiKey, campaignId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    const secondAttempt = (await campaigns().get(organizationId, campaignId))!.attempt!.id;
    const keys = await campaignKeys(organizationId, campaignId);
    expect(keys.filter((key) => key.includes(attemptId))).toEqual([]);
    const second = keys.filter((key) => key.includes(secondAttempt) && !key.includes('/results/'));
    expect(second).toHaveLength(3 /* batches */ + 1 /* eligible */ + 3 /* outcomes */ + 3 /* contacts */);
    expect(keys.filter((key) => key.includes(`${secondAttempt}/results/`)).length).toBeGreaterThanOrEqual(3);
  });

  it('a canceled attempt leaves no result parts or batch objects, even from a batch that finishes after the compensation', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 1_500);
    await importAccounts(accounts, NO_ERASURE);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 5_000 });

    // The first batch completes, the second is held until after the cancel.
    const inner = embeddedWarehouse();
    const held = gate();
    const calls: string[][] = [];
    useWarehouse({
      getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
      async getAccounts(ids) {
        calls.push([...ids]);
        if (ids.length < 1_000) await held.promise;
        return inner.getAccounts(ids);
      },
    });
    const { campaignId, attemptId } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    const resultsPrefix = objectKeys.resultsPrefix(organizationId, campaignId, attemptId);
    await pollUntil(
      () => keysUnder(resultsPrefix),
      (keys) => keys.length === 1,
    );
    await pollUntil(
      () => Promise.resolve(calls.length),
      (n) => n === 2,
    );

    expect(
      await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow(), objects: objects() }, campaignId),
    ).toEqual({ campaignId, status: 'canceled' });
    expect(await keysUnder(resultsPrefix)).toEqual([]);
    expect(await keysUnder(objectKeys.batchesPrefix(organizationId, campaignId, attemptId))).toEqual([]);

    // The held batch returns after the cancel (its execution stopped): its part does not stay.
    held.open();
    await waitForWorkflowTasks(workflow().executionArnOf(attemptId));
    expect(await keysUnder(resultsPrefix)).toEqual([]);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toMatchObject({
      status: 'draft',
      lastEnrichment: { status: 'canceled', refunded: true },
    });
  });

  it('the reconciler expires a campaign whose execution died before its expiry, and deletes its objects', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 10);
    await importAccounts(accounts, NO_ERASURE);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 100 });
    // An hour of access; the reconciler is then run as of a time past the expiry.
    const { campaignId, attemptId } = await withAccessPeriod(3_600, async () => {
      const launched = await launch(
        apiKey,
        organizationId,
        accounts.map((a) => a.accountId),
      );
      await waitForStatus(api(), apiKey, launched.campaignId, 'enriched');
      return launched;
    });
    // The execution dies while it waits for the expiry (stopped outside the product): once its completion is recorded
    // in the history (stored `enriched` comes first; a slow machine could otherwise stop it before its recording, which
    // the reconciler then finishes: a 'recorded' repair, tested in enrichment-reconcile.test.ts).
    await pollUntil(
      () => organizations().get(organizationId),
      (org) => !org?.pendingRecency?.some((pending) => pending.campaignId === campaignId),
    );
    const stored = (await campaigns().get(organizationId, campaignId))!;
    await workflow().stop(stored.attempt!.executionArn, 'Stopped outside the product');
    await pollUntil(
      () => workflow().status(stored.attempt!.executionArn),
      (status) => status !== 'RUNNING',
    );
    const reconcile = (now: Date) => reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 60 }, { organizationId, now });

    // Before the expiry, and within the grace period after it: nothing to do.
    const expiresAt = Date.parse(stored.resultsExpireAt!);
    expect((await reconcile(new Date())).repairs).toEqual([]);
    expect((await reconcile(new Date(expiresAt + 30_000))).repairs).toEqual([]);
    expect((await campaigns().get(organizationId, campaignId))!.status).toBe('enriched');
    expect((await campaignKeys(organizationId, campaignId)).length).toBeGreaterThan(1);

    // Past it by more than the grace period: expired, and its objects deleted.
    const report = await reconcile(new Date(expiresAt + 61_000));
    expect(report.repairs).toEqual([{ organizationId, campaignId, attemptId, action: 'expired', execution: 'ABORTED' }]);
    expect((await campaigns().get(organizationId, campaignId))!.status).toBe('expired');
    expect(await campaignKeys(organizationId, campaignId)).toEqual(['accounts.txt']);
    // A second pass finds nothing to do.
    expect((await reconcile(new Date(expiresAt + 120_000))).repairs).toEqual([]);
  });
});
