/**
 * Attempts that fail, are canceled, are completed twice, or expire (docs/README.md#a-campaigns-life-in-one-paragraph;
 * docs/launch.md, docs/csv.md, README.md#operator-cli), end to end through the
 * real workflow definition run locally.
 *
 * Faults are injected at the warehouse port (`useWarehouse`), the operator
 * cancel is the very function `npm run ops -- campaign:cancel` calls, and the
 * workflow steps are also called directly to prove they are idempotent.
 * Executions are awaited one by one through DescribeExecution, so a test
 * never depends on other executions of the file ending.
 */
import { DescribeExecutionCommand, type DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { sfn } from '../lib/aws';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { config } from '../lib/config';
import { compensateAttempt, completeEnrichment } from '../lib/enrichment/steps';
import { accountHistory, campaigns, enrichment, useWarehouse, workflow } from '../lib/root';
import { call, newOrganization, useApi, waitForWorkflowState, waitForWorkflowTasks } from './support/api';
import {
  DAY_MS,
  ISO_UTC,
  LIST,
  account,
  activeAccounts,
  balance,
  contact,
  createApiCampaign,
  describeOrg,
  enrich,
  expectError,
  getCampaign,
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

/** What the CompleteEnrichment task passes its step (functions/workflow-complete.ts). */
const completionDeps = () => ({
  campaigns: campaigns(),
  enrichment: enrichment(),
  resultsAccessPeriodSeconds: config.resultsAccessPeriodSeconds,
});
const cancelDeps = () => ({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() });

/** Reads an execution of the local Step Functions endpoint. */
const describeExecution = (executionArn: string) => sfn().send(new DescribeExecutionCommand({ executionArn }));

/** Waits until one execution is no longer RUNNING. */
const waitForExecutionEnd = (executionArn: string, timeoutMs = 15_000): Promise<DescribeExecutionCommandOutput> =>
  pollUntil(
    () => describeExecution(executionArn),
    (out) => out.status !== 'RUNNING',
    { timeoutMs },
  );

/** Creates and launches a campaign over the accounts; returns its IDs and its current attempt as stored. */
async function launch(apiKey: string, organizationId: string, accountIds: string[]) {
  const campaignId = await createApiCampaign(api(), apiKey, accountIds);
  const res = await enrich(api(), apiKey, campaignId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.data.status).toBe('enriching');
  const stored = await campaigns().get(organizationId, campaignId);
  // A fast-failing attempt can be compensated (its attempt cleared) before this read: its charge entry keeps the attempt's ID,
  // and the compensation wrote its start into lastEnrichment (the charge entry's createdAt is its own write time, later).
  const charge = (await ledgerOf(organizationId, campaignId)).entries.find((entry: { kind: string }) => entry.kind === 'charge') as {
    attemptId: string;
    createdAt: string;
  };
  const attempt = stored?.attempt ?? {
    id: charge.attemptId,
    startedAt: stored!.lastEnrichment!.startedAt,
    executionArn: workflow().executionArnOf(charge.attemptId),
  };
  expect(attempt.id).toBe(charge.attemptId);
  expect(attempt.executionArn).toBe(workflow().executionArnOf(attempt.id));
  return { campaignId, attempt, launched: res.data };
}

/** IDs of an organization's campaigns listed with a status filter (all pages). */
async function listedIds(apiKey: string, status: string): Promise<{ id: string; status: string }[]> {
  const items: { id: string; status: string }[] = [];
  let cursor: string | undefined;
  do {
    const res = await call(api(), LIST, { apiKey, body: { filters: { status }, limit: 100, ...(cursor ? { cursor } : {}) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.data.campaigns.map((c: { id: string; status: string }) => ({ id: c.id, status: c.status })));
    cursor = res.data.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

describe('a failing attempt', () => {
  it('is compensated: back to draft with lastEnrichment failed, full refund, capacity released; it can be launched again', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 4);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 50, maxEnrichingAccounts: 100 });
    useTestWarehouse({ failAccounts: true });

    const { campaignId, attempt, launched } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    expect(launched.credits).toEqual({ charged: 4, remaining: 46 });

    const execution = await waitForExecutionEnd(attempt.executionArn);
    expect(execution.status).toBe('FAILED');

    const res = await getCampaign(api(), apiKey, campaignId);
    expect(res.data).toEqual({
      ...launched,
      status: 'draft',
      credits: { charged: 0, remaining: 50 },
      lastEnrichment: { status: 'failed', startedAt: attempt.startedAt, endedAt: expect.stringMatching(ISO_UTC), refunded: true },
    });
    const { startedAt, endedAt } = res.data.lastEnrichment;
    expect(Date.parse(endedAt)).toBeGreaterThanOrEqual(Date.parse(startedAt));
    expect(await balance(organizationId)).toBe(50);
    expect((await describeOrg(api(), apiKey)).enrichment).toEqual({ enrichingAccounts: 0, maxEnrichingAccounts: 100 });

    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries).toEqual([
      {
        id: expect.stringMatching(/^led_/),
        organizationId,
        campaignId,
        attemptId: attempt.id,
        kind: 'charge',
        reason: 'launch',
        amount: -4,
        createdAt: expect.stringMatching(ISO_UTC),
        note: null,
        // The launching key (docs/authentication.md "Per-key credit limits"): its refund names it too.
        keyId: expect.stringMatching(/^key_/),
      },
      {
        id: expect.stringMatching(/^led_/),
        organizationId,
        campaignId,
        attemptId: attempt.id,
        kind: 'refund',
        reason: 'failed',
        amount: 4,
        createdAt: expect.stringMatching(ISO_UTC),
        note: null,
        keyId: ledger.entries[0]!.keyId,
      },
    ]);
    // Entries are dated when written (issue #31): the charge at or after the attempt started, the refund at or after it ended.
    expect(ledger.entries[0]!.createdAt >= attempt.startedAt && ledger.entries[1]!.createdAt >= endedAt).toBe(true);
    expect(ledger.charged).toBe(0);
    // The list indexes follow the state.
    expect((await listedIds(apiKey, 'draft')).map((c) => c.id)).toContain(campaignId);
    expect((await listedIds(apiKey, 'enriching')).map((c) => c.id)).not.toContain(campaignId);

    // With the warehouse healthy again, the same campaign launches and completes.
    useWarehouse(undefined);
    const again = await enrich(api(), apiKey, campaignId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.data).toMatchObject({ status: 'enriching', credits: { charged: 4, remaining: 46 } });
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.credits).toEqual({ charged: 4, remaining: 46 });
    expect(done.results).toEqual({ totalAccounts: 4, totalContactsFound: 4, pctAccountsWithContact: 1, pctAccountsWithMobile: 0 });
    const after = await ledgerOf(organizationId, campaignId);
    expect(after.charged).toBe(4);
    expect(after.entries).toHaveLength(3);
    expect(new Set(after.entries.map((e) => e.attemptId)).size).toBe(2);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
  });
});

describe('an operator cancel (campaign:cancel)', () => {
  it('stops the execution and compensates the attempt as canceled; only an enriching campaign can be canceled', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 3);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 30, maxEnrichingAccounts: 50 });
    const held = useTestWarehouse({ holdAccounts: true });

    const { campaignId, attempt, launched } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    await held.called('getAccounts');
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(3);

    expect(await cancelEnrichment(cancelDeps(), campaignId)).toEqual({ campaignId, status: 'canceled' });
    expect((await describeExecution(attempt.executionArn)).status).toBe('ABORTED');

    const expected = {
      ...launched,
      status: 'draft',
      credits: { charged: 0, remaining: 30 },
      lastEnrichment: { status: 'canceled', startedAt: attempt.startedAt, endedAt: expect.stringMatching(ISO_UTC), refunded: true },
    };
    const canceled = await getCampaign(api(), apiKey, campaignId);
    expect(canceled.data).toEqual(expected);
    expect(Date.parse(canceled.data.lastEnrichment.endedAt)).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt));
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([
      ['charge', 'launch', -3],
      ['refund', 'canceled', 3],
    ]);
    expect(ledger.charged).toBe(0);

    // The held contact call now returns: the stopped execution must not complete or refund again.
    held.release();
    await waitForWorkflowTasks(attempt.executionArn!);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(expected);
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(2);
    expect(await balance(organizationId)).toBe(30);

    // A repeated cancel (docs/launch.md#canceling) answers the same and moves nothing.
    expect(await cancelEnrichment(cancelDeps(), campaignId)).toEqual({ campaignId, status: 'canceled' });
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(2);
    await expect(cancelEnrichment(cancelDeps(), 'camp_111111111111111111111')).rejects.toMatchObject({ code: 'not_found' });
    expect(await balance(organizationId)).toBe(30);

    // A canceled campaign launches again.
    useWarehouse(undefined);
    expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(done.credits).toEqual({ charged: 3, remaining: 27 });
    await expect(cancelEnrichment(cancelDeps(), campaignId)).rejects.toThrow(/"enriched"/);
  });
});

describe('workflow steps are idempotent', () => {
  it('compensateAttempt twice: the second is a no-op; the execution that resumes later changes nothing', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 4);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const held = useTestWarehouse({ holdAccounts: true });
    const { campaignId, attempt } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    await held.called('getAccounts');
    expect(await balance(organizationId)).toBe(16);

    const input = { organizationId, campaignId, attemptId: attempt.id, reason: 'failed' as const };
    expect(await compensateAttempt({ enrichment: enrichment() }, input)).toEqual({ compensated: true });
    expect(await compensateAttempt({ enrichment: enrichment() }, input)).toEqual({ compensated: false });
    expect(await compensateAttempt({ enrichment: enrichment() }, { ...input, reason: 'canceled' })).toEqual({ compensated: false });

    expect(await balance(organizationId)).toBe(20);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'failed', 4],
    ]);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toMatchObject({
      status: 'draft',
      credits: { charged: 0 },
      lastEnrichment: { status: 'failed', refunded: true },
    });

    // The execution resumes, finds its attempt superseded and ends without moving money.
    held.release();
    const execution = await waitForExecutionEnd(attempt.executionArn);
    expect(execution.status).toBe('FAILED');
    expect(await balance(organizationId)).toBe(20);
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(2);
    expect((await getCampaign(api(), apiKey, campaignId)).data.status).toBe('draft');
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
  });

  it('identical compensations racing move the money once', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 5);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const held = useTestWarehouse({ holdAccounts: true });
    const { campaignId, attempt } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    await held.called('getAccounts');

    const input = { organizationId, campaignId, attemptId: attempt.id, reason: 'failed' as const };
    const now = new Date();
    const results = await Promise.all([1, 2, 3].map(() => compensateAttempt({ enrichment: enrichment() }, input, now)));
    expect(results.some((r) => r.compensated)).toBe(true);
    expect(await balance(organizationId)).toBe(20);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([
      ['charge', 'launch', -5],
      ['refund', 'failed', 5],
    ]);
  });

  it('an operator cancel racing the failure compensation: one wins, the other is a no-op, money moves once', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 5);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const held = useTestWarehouse({ holdAccounts: true });
    const { campaignId, attempt } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    await held.called('getAccounts');

    // The workflow's CompensateAttempt (reason failed) and campaign:cancel's compensation (reason canceled) at once.
    const input = { organizationId, campaignId, attemptId: attempt.id };
    const settled = await Promise.allSettled([
      compensateAttempt({ enrichment: enrichment() }, { ...input, reason: 'failed' }),
      compensateAttempt({ enrichment: enrichment() }, { ...input, reason: 'canceled' }),
    ]);
    expect(settled.map((s) => (s.status === 'rejected' ? String(s.reason) : 'ok'))).toEqual(['ok', 'ok']);
    const outcomes = settled.map((s) => (s as PromiseFulfilledResult<{ compensated: boolean }>).value.compensated);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(await balance(organizationId)).toBe(20);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    const ledger = await ledgerOf(organizationId, campaignId);
    expect(ledger.entries.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(ledger.charged).toBe(0);
  });

  it('completeEnrichment twice (and racing): one completion time, one refund; the workflow reuses them', async () => {
    const p = uniquePrefix();
    const ids = [`${p}_0`, `${p}_1`, `${p}_2`, `${p}_3`];
    await importAccounts([
      account(ids[0]!, 'active', [contact(`${p}_c1`, { mobile: true }), contact(`${p}_c2`)]),
      account(ids[1]!, 'active', [contact(`${p}_c3`)]),
      account(ids[2]!, 'active', []),
      account(ids[3]!, 'active', []),
    ]);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 20 });
    const held = useTestWarehouse({ holdAccounts: true });
    const { campaignId, attempt } = await launch(apiKey, organizationId, ids);
    await held.called('getAccounts');
    expect(await balance(organizationId)).toBe(16);

    // What the contact step would report for this warehouse.
    const input = {
      organizationId,
      campaignId,
      attemptId: attempt.id,
      batchResults: [{ index: 0, accounts: 4, accountsWithContact: 2, accountsWithMobile: 1, contacts: 3 }],
    };
    const t1 = new Date();
    const first = await completeEnrichment(completionDeps(), input, t1);
    expect(first).toEqual({ completedAt: t1.toISOString(), resultsExpireAt: new Date(t1.getTime() + 30 * DAY_MS).toISOString() });
    const racing = await Promise.all([1, 2, 3].map((s) => completeEnrichment(completionDeps(), input, new Date(t1.getTime() + s * 1_000))));
    for (const again of racing) expect(again).toEqual(first);

    expect(await balance(organizationId)).toBe(18);
    const ledger = await ledgerOf(organizationId, campaignId);
    // One charge, one refund (dated when written, issue #31: the racing completions wrote nothing).
    expect(ledger.entries.map((e) => [e.kind, e.reason, e.amount])).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 2],
    ]);
    expect(ledger.entries[0]!.createdAt >= attempt.startedAt).toBe(true);
    const enriched = await getCampaign(api(), apiKey, campaignId);
    expect(enriched.data).toMatchObject({
      status: 'enriched',
      credits: { charged: 2, remaining: 18 },
      completedAt: first.completedAt,
      resultsExpireAt: first.resultsExpireAt,
      results: { totalAccounts: 4, totalContactsFound: 3, pctAccountsWithContact: 0.5, pctAccountsWithMobile: 0.25 },
    });
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);

    // The workflow now runs its own CompleteEnrichment (a rerun) and records the stored completion time.
    held.release();
    const facts = await pollUntil(
      () => accountHistory().getFacts(organizationId, ids),
      (f) => ids.every((id) => f.get(id)?.lastEnrichedAt !== undefined),
    );
    for (const id of ids) expect(facts.get(id)?.lastEnrichedAt).toBe(first.completedAt);
    expect(await balance(organizationId)).toBe(18);
    expect((await ledgerOf(organizationId, campaignId)).entries).toHaveLength(2);
    expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(enriched.data);
  });
});

describe('result expiry (docs/lifetimes.md)', () => {
  it('an enriched campaign reads expired at resultsExpireAt everywhere, and the workflow rewrites the stored status', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 2);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });

    const previousPeriod = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    process.env.RESULTS_ACCESS_PERIOD_SECONDS = '3';
    let launchedCampaign: Awaited<ReturnType<typeof launch>>;
    let done: any;
    try {
      launchedCampaign = await launch(
        apiKey,
        organizationId,
        accounts.map((a) => a.accountId),
      );
      done = await waitForStatus(api(), apiKey, launchedCampaign.campaignId, 'enriched');
    } finally {
      if (previousPeriod === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
      else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previousPeriod;
    }
    const { campaignId, attempt } = launchedCampaign;
    expect(Date.parse(done.resultsExpireAt) - Date.parse(done.completedAt)).toBe(3_000);
    expect((await listedIds(apiKey, 'enriched')).map((c) => c.id)).toContain(campaignId);

    const expired = await waitForStatus(api(), apiKey, campaignId, 'expired');
    expect(expired).toEqual({
      id: campaignId,
      status: 'expired',
      createdVia: 'api',
      name: done.name,
      accounts: done.accounts,
      credits: { charged: 2, remaining: 8 },
      excludeEnrichedWithinDays: null,
      lastEnrichment: null,
      createdAt: done.createdAt,
      resultsExpireAt: done.resultsExpireAt,
    });
    expect(Date.parse(expired.resultsExpireAt)).toBeLessThanOrEqual(Date.now());
    expect(await listedIds(apiKey, 'expired')).toContainEqual({ id: campaignId, status: 'expired' });
    expect((await listedIds(apiKey, 'enriched')).map((c) => c.id)).not.toContain(campaignId);
    expectError(await call(api(), '/v1/campaigns/export', { apiKey, body: { campaignId } }), 410, 'results_expired');

    // The execution waited until resultsExpireAt, then ExpireResults stored the new status.
    const execution = await waitForExecutionEnd(attempt.executionArn);
    expect(execution.status).toBe('SUCCEEDED');
    const stored = await campaigns().get(organizationId, campaignId);
    expect(stored?.status).toBe('expired');
    expect(await listedIds(apiKey, 'expired')).toContainEqual({ id: campaignId, status: 'expired' });
    expect((await getCampaign(api(), apiKey, campaignId)).data).toEqual(expired);
  });

  it('with the default 30-day access period the execution keeps waiting for resultsExpireAt (ExpireResults does not run early)', async () => {
    const p = uniquePrefix();
    const accounts = activeAccounts(p, 1);
    await importAccounts(accounts);
    const { organizationId, apiKey } = await newOrganization({ smbCredits: 10 });
    const { campaignId, attempt } = await launch(
      apiKey,
      organizationId,
      accounts.map((a) => a.accountId),
    );
    const done = await waitForStatus(api(), apiKey, campaignId, 'enriched');
    expect(Date.parse(done.resultsExpireAt) - Date.parse(done.completedAt)).toBe(30 * DAY_MS);
    // The execution has passed WaitForResultsExpiry (overridden to 0 locally) and waits in ExpireResults until the expiry.
    await pollUntil(
      () => accountHistory().getFacts(organizationId, [accounts[0]!.accountId]),
      (f) => f.size === 1,
    );
    await waitForWorkflowState(attempt.executionArn!, 'ExpireResults');

    expect((await describeExecution(attempt.executionArn)).status).toBe('RUNNING');
    expect((await campaigns().get(organizationId, campaignId))?.status).toBe('enriched');
  });
});
