/**
 * The enrichment reconciler (lib/enrichment/reconcile.ts; docs/reliability.md
 * "Crash windows"): each crash window, reproduced, ends — after a reconciler
 * pass and without any client call — in `enriched`, or in `draft` with a full
 * refund, with the balance, the capacity and the ledger exact.
 */
import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, sfn } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { sumOf } from '../lib/credits/ledger';
import { enrichCampaign } from '../lib/enrichment/launch';
import { reconcileEnrichments, type ReconcileDependencies } from '../lib/enrichment/reconcile';
import type { ExecutionStatus } from '../lib/enrichment/workflow';
import { completeEnrichment } from '../lib/enrichment/steps';
import {
  accountHistory,
  accountLists,
  campaigns,
  enrichment,
  launchDependencies,
  ledger,
  organizations,
  reconcileDependencies,
  workflow,
} from '../lib/root';
import { newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  describeOrg,
  enrich,
  getCampaign,
  importAccounts,
  pollUntil,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

/** The reconciler as deployed, with no grace period (the launches here are seconds old) and, optionally, what the workflow reports. */
const deps = (overrides: { status?: (arn: string) => Promise<ExecutionStatus> } = {}): ReconcileDependencies => {
  const base = reconcileDependencies();
  return { ...base, graceSeconds: 0, workflow: { ...base.workflow, ...(overrides.status ? { status: overrides.status } : {}) } };
};

/** Balance = Σ ledger, capacity back to 0, and the campaign's charge = −Σ its entries. */
async function expectExact(organizationId: string, apiKey: string, campaignId: string, charged: number) {
  const audit = await ledger().audit(organizationId);
  expect(audit!.balance).toBe(audit!.ledgerSum);
  expect((await describeOrg(api(), apiKey)).enrichment.enrichingAccounts).toBe(0);
  const campaign = (await getCampaign(api(), apiKey, campaignId)).data;
  expect(campaign.credits.charged).toBe(charged);
  expect(0 - sumOf(await ledger().entriesOf(organizationId, campaignId))).toBe(charged);
}

async function fixture(accounts = 3) {
  const p = uniquePrefix();
  const list = activeAccounts(p, accounts);
  await importAccounts(list);
  const org = await newOrganization({ smbCredits: 100, maxEnrichingAccounts: 50 });
  const campaignId = await createApiCampaign(
    api(),
    org.apiKey,
    list.map((a) => a.accountId),
  );
  return { ...org, campaignId };
}

describe('the enrichment reconciler closes each crash window', () => {
  it('the launching Lambda died between the charge and StartExecution: the reconciler starts the attempt, which completes charged once', async () => {
    const f = await fixture();
    const died = new Error('the Lambda was killed');
    const dying = {
      ...launchDependencies(f.organizationId),
      workflow: { ...workflow(), start: () => Promise.reject(died) },
      // Its own clean-up dies with it.
      enrichment: { ...enrichment(), compensate: () => Promise.reject(died) },
    };
    await expect(enrichCampaign(dying, f.organizationId, f.campaignId)).rejects.toThrow(died);
    const stuck = await campaigns().get(f.organizationId, f.campaignId);
    expect(stuck?.status).toBe('enriching');
    expect(await workflow().status(stuck!.attempt!.executionArn)).toBe('MISSING');

    // Within the grace period nothing happens (the launch may still be starting it).
    expect((await reconcileEnrichments({ ...deps(), graceSeconds: 3_600 }, { organizationId: f.organizationId })).repairs).toEqual([]);

    const report = await reconcileEnrichments(deps(), { organizationId: f.organizationId });
    expect(report.repairs).toEqual([
      {
        organizationId: f.organizationId,
        campaignId: f.campaignId,
        attemptId: stuck!.attempt!.id,
        action: 'started',
        execution: 'MISSING',
      },
    ]);
    await waitForStatus(api(), f.apiKey, f.campaignId, 'enriched');
    await expectExact(f.organizationId, f.apiKey, f.campaignId, 3);
    // A second pass finds nothing to do.
    expect((await reconcileEnrichments(deps(), { organizationId: f.organizationId })).repairs).toEqual([]);
  });

  it('StopExecution called outside the product on a running attempt: the reconciler compensates it as canceled, full refund', async () => {
    const f = await fixture();
    const held = useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), f.apiKey, f.campaignId)).status).toBe(200);
    await held.called('getAccounts');
    const attempt = (await campaigns().get(f.organizationId, f.campaignId))!.attempt!;
    await sfn().send(new StopExecutionCommand({ executionArn: attempt.executionArn, cause: 'stopped from the console' }));
    held.release();
    expect(await workflow().status(attempt.executionArn)).toBe('ABORTED');
    expect((await campaigns().get(f.organizationId, f.campaignId))?.status).toBe('enriching');

    const report = await reconcileEnrichments(deps(), { organizationId: f.organizationId });
    expect(report.repairs.map((r) => r.action)).toEqual(['compensated_canceled']);
    const campaign = await waitForStatus(api(), f.apiKey, f.campaignId, 'draft');
    expect(campaign.lastEnrichment).toMatchObject({ status: 'canceled', refunded: true });
    await expectExact(f.organizationId, f.apiKey, f.campaignId, 0);
  });

  it('an execution that ended FAILED outside its Catch (or TIMED_OUT): compensated as failed', async () => {
    const f = await fixture();
    const held = useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), f.apiKey, f.campaignId)).status).toBe(200);
    await held.called('getAccounts');
    const attempt = (await campaigns().get(f.organizationId, f.campaignId))!.attempt!;
    // What DescribeExecution answers after an execution timeout.
    const report = await reconcileEnrichments(
      deps({ status: async (arn) => (arn === attempt.executionArn ? 'TIMED_OUT' : workflow().status(arn)) }),
      { organizationId: f.organizationId },
    );
    expect(report.repairs.map((r) => r.action)).toEqual(['compensated_failed']);
    held.release();
    const campaign = await waitForStatus(api(), f.apiKey, f.campaignId, 'draft');
    expect(campaign.lastEnrichment).toMatchObject({ status: 'failed', refunded: true });
    // The held execution, once released, finds its attempt gone and moves nothing.
    await pollUntil(
      () => workflow().status(attempt.executionArn),
      (status) => status !== 'RUNNING',
    );
    await expectExact(f.organizationId, f.apiKey, f.campaignId, 0);
  });

  it('a cancel that died between StopExecution and its compensation is finished as canceled and never resumed, even when the execution is gone (a local restart)', async () => {
    const f = await fixture();
    const held = useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), f.apiKey, f.campaignId)).status).toBe(200);
    await held.called('getAccounts');
    const attempt = (await campaigns().get(f.organizationId, f.campaignId))!.attempt!;
    // campaign:cancel's first two steps, then it dies.
    expect(await enrichment().requestCancel(f.organizationId, f.campaignId, attempt.id, new Date())).toBe(true);
    await workflow().stop(attempt.executionArn, 'Canceled by an operator');
    held.release();

    // After a restart the local execution is gone: the reconciler must not start it again.
    const report = await reconcileEnrichments(
      deps({ status: async (arn) => (arn === attempt.executionArn ? 'MISSING' : workflow().status(arn)) }),
      { organizationId: f.organizationId },
    );
    expect(report.repairs.map((r) => r.action)).toEqual(['compensated_canceled']);
    const campaign = await waitForStatus(api(), f.apiKey, f.campaignId, 'draft');
    expect(campaign.lastEnrichment).toMatchObject({ status: 'canceled', refunded: true });
    await expectExact(f.organizationId, f.apiKey, f.campaignId, 0);
    expect((await ledger().entriesOf(f.organizationId, f.campaignId)).map((e) => [e.kind, e.reason])).toEqual([
      ['charge', 'launch'],
      ['refund', 'canceled'],
    ]);
  });

  it('an enriched campaign whose execution was lost (a local restart) is not run again: no workflow start, no credit moved', async () => {
    const f = await fixture();
    expect((await enrich(api(), f.apiKey, f.campaignId)).status).toBe(200);
    await waitForStatus(api(), f.apiKey, f.campaignId, 'enriched');
    // Its recording finished (no pending recency left on the organization).
    await pollUntil(
      () => organizations().get(f.organizationId),
      (org) => !org?.pendingRecency?.some((p) => p.campaignId === f.campaignId),
    );
    const before = await ledger().entriesOf(f.organizationId);
    const attempt = (await campaigns().get(f.organizationId, f.campaignId))!.attempt!;
    const started: string[] = [];
    const base = deps({ status: async (arn) => (arn === attempt.executionArn ? 'MISSING' : workflow().status(arn)) });
    const report = await reconcileEnrichments(
      {
        ...base,
        workflow: { ...base.workflow, start: async (input) => (started.push(JSON.stringify(input)), `arn:started:${started.length}`) },
      },
      { organizationId: f.organizationId },
    );
    expect(report.repairs).toEqual([]);
    expect(started).toEqual([]);
    expect(await ledger().entriesOf(f.organizationId)).toEqual(before);
    expect((await getCampaign(api(), f.apiKey, f.campaignId)).data.status).toBe('enriched');
  });

  it('an enriched campaign whose recording was pending at the crash is recorded by the reconciler itself: no workflow start, no result part rewritten, no credit moved', async () => {
    const f = await fixture();
    // The launch charges but its execution never starts; the completion then lands by the step itself, and the
    // process "dies" before FinishRecording: the campaign is enriched, its recency pending on the organization.
    const launched = await enrichCampaign(
      { ...launchDependencies(f.organizationId), workflow: { ...workflow(), start: async () => 'arn:never-started' } },
      f.organizationId,
      f.campaignId,
    );
    expect(launched).toBeDefined();
    const attempt = (await campaigns().get(f.organizationId, f.campaignId))!.attempt!;
    const { completedAt } = await completeEnrichment(
      { campaigns: campaigns(), enrichment: enrichment(), resultsAccessPeriodSeconds: config.resultsAccessPeriodSeconds },
      {
        organizationId: f.organizationId,
        campaignId: f.campaignId,
        attemptId: attempt.id,
        batchResults: [{ index: 0, accounts: 3, accountsWithContact: 3, accountsWithMobile: 0, contacts: 3 }],
      },
    );
    const pendingBefore = (await organizations().get(f.organizationId))!.pendingRecency ?? [];
    expect(pendingBefore.map((p) => p.campaignId)).toEqual([f.campaignId]);
    const eligible: string[] = [];
    await accountLists().forEachId(attempt.eligibleObjectKey, (id) => eligible.push(id));
    expect(eligible).toHaveLength(3);
    const recordedBefore = await accountHistory().getFacts(f.organizationId, eligible, { recency: true, enrichedAfter: 0 });
    expect(recordedBefore.size).toBe(0);
    const ledgerBefore = await ledger().entriesOf(f.organizationId);

    const started: string[] = [];
    const base = deps({ status: async (arn) => (arn === attempt.executionArn ? 'MISSING' : workflow().status(arn)) });
    const report = await reconcileEnrichments(
      {
        ...base,
        workflow: { ...base.workflow, start: async (input) => (started.push(JSON.stringify(input)), `arn:started:${started.length}`) },
      },
      { organizationId: f.organizationId },
    );
    expect(started).toEqual([]);
    expect(report.repairs).toEqual([
      { organizationId: f.organizationId, campaignId: f.campaignId, attemptId: attempt.id, action: 'recorded', execution: 'MISSING' },
    ]);
    expect((await organizations().get(f.organizationId))!.pendingRecency ?? []).toEqual([]);
    const recorded = await accountHistory().getFacts(f.organizationId, eligible, { recency: true, enrichedAfter: 0 });
    expect([...recorded.values()].map((facts) => facts.lastEnrichedAt)).toEqual(eligible.map(() => completedAt));
    expect(await ledger().entriesOf(f.organizationId)).toEqual(ledgerBefore);
    expect((await getCampaign(api(), f.apiKey, f.campaignId)).data.status).toBe('enriched');
    // A second pass finds nothing left to do.
    expect((await reconcileEnrichments(base, { organizationId: f.organizationId })).repairs).toEqual([]);
  });

  it('reports capacity held outside any attempt as drift, and nothing for a healthy organization', async () => {
    const f = await fixture();
    const held = useTestWarehouse({ holdAccounts: true });
    expect((await enrich(api(), f.apiKey, f.campaignId)).status).toBe(200);
    await held.called('getAccounts');
    const healthy = await reconcileEnrichments(deps(), { organizationId: f.organizationId });
    expect(healthy).toMatchObject({ organizations: 1, enriching: 1, repairs: [], capacityDrift: [] });

    await ddb.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.organization(f.organizationId),
        UpdateExpression: 'SET enrichingAccounts = enrichingAccounts + :seven',
        ExpressionAttributeValues: { ':seven': 7 },
      }),
    );
    const drifted = await reconcileEnrichments(deps(), { organizationId: f.organizationId });
    expect(drifted.capacityDrift).toEqual([{ organizationId: f.organizationId, enrichingAccounts: 10, expected: 3 }]);
    await ddb.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.organization(f.organizationId),
        UpdateExpression: 'SET enrichingAccounts = enrichingAccounts - :seven',
        ExpressionAttributeValues: { ':seven': 7 },
      }),
    );
    held.release();
    await waitForStatus(api(), f.apiKey, f.campaignId, 'enriched');
  });
});
