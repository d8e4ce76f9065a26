/**
 * Faults (issue item 4): DynamoDB throttling and transient errors, lost
 * answers, transaction conflicts, S3 and Step Functions failures, injected
 * through SDK client middleware (support/faults.ts) into each step of the
 * launch, of the workflow and of the export. DynamoDB Local and s3rver never
 * raise these by themselves.
 *
 * Every scenario must end in a state the guide allows
 * (docs/README.md#a-campaigns-life-in-one-paragraph) with the money intact: the invariants of invariants.ts
 * (ledger = credits.charged, balance + charges = starting balance, capacity =
 * enriching campaigns) hold, no attempt is charged or refunded twice, and no
 * export ever serves a partial file.
 *
 * A task "killed between its write and its return" is a fault `when: 'after'`:
 * DynamoDB applies the write, the task throws on the way back. Named
 * `ThrottlingException` it takes the workflow's Retry path (TRANSIENT_ERRORS
 * of infra/workflow.ts); named otherwise it takes the Catch → compensation path.
 *
 * Scenarios are independent (own organization, own campaign, faults matched
 * on their own keys), so each group runs its tests concurrently.
 */
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { customAlphabet } from 'nanoid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3, sfn } from '../../lib/aws';
import { config } from '../../lib/config';
import { pendingRecencyAttribute } from '../../lib/history/recency-pending';
import { accountListKey } from '../../lib/account-lists/account-list';
import type { CampaignRecord } from '../../lib/campaigns/model';
import { resultPartKey, resultsPrefix } from '../../lib/results/parts';
import type { EnrichedAccount } from '../../lib/results/csv';
import { batchesOf } from '../../lib/enrichment/workflow';
import { reconcileEnrichments } from '../../lib/enrichment/reconcile';
import { newCampaignId } from '../../lib/ids';
import {
  accountHistory,
  campaigns,
  embeddedWarehouse,
  enrichment,
  ledger as creditLedger,
  organizations,
  reconcileDependencies,
  results,
  useWarehouse,
  workflow,
} from '../../lib/root';
import { LOCAL_STATE_MACHINE_ARN } from '../../infra/local/step-functions';
import { handler as completeHandler } from '../../functions/workflow-complete';
import { handler as compensateHandler } from '../../functions/workflow-compensate';
import { newOrganization, useApi, waitForWorkflowState } from '../support/api';
import { account, contact, historyBucketPrefix, importAccounts, pollUntil, uniquePrefix } from '../enrichment/support';
import { lambdaContext } from '../../infra/local/lambda-context';
import { OPERATIONS, envelopeViolations, sendJson, type RawAnswer } from './support/contract';
import {
  crash,
  injectFault,
  s3InternalError,
  throttling,
  throughputExceeded,
  transactionConflict,
  type Fault,
  type FaultSpec,
} from './support/faults';
import { checkInvariants, type OrganizationBook } from './support/invariants';
import { rawCampaignItem } from './support/fixtures';
import { missingAccount } from '../../lib/warehouse/schema';

const api = useApi();

/** Contact lookups fail for accounts whose ID contains `_fail_` (a failing attempt); everything else is the embedded warehouse. */
beforeAll(() => {
  const inner = embeddedWarehouse();
  useWarehouse({
    getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
    async getAccounts(ids) {
      if (ids.some((id) => id.includes('_fail_'))) throw new Error('Injected: the contact source is unavailable');
      return inner.getAccounts(ids);
    },
  });
});
afterAll(() => useWarehouse(undefined));

// ---------------------------------------------------------------------------
// Fixtures and readers
// ---------------------------------------------------------------------------

interface Fixture extends OrganizationBook {
  campaignId: string;
  accountIds: string[];
  prefix: string;
}

/**
 * A fresh organization (100 credits) and an API draft of `accounts` active
 * accounts, the first `withContacts` of them with a contact (the others are
 * refunded at completion); `fail` makes the attempt's contact step fail.
 */
async function fixture({ accounts = 4, withContacts = 3, fail = false } = {}): Promise<Fixture> {
  const prefix = uniquePrefix();
  const ids = Array.from({ length: accounts }, (_, i) => `${prefix}${fail ? '_fail_' : '_'}${i}`);
  await importAccounts(ids.map((id, i) => account(id, 'active', i < withContacts ? [contact(`${id}_c`, { mobile: true })] : [])));
  const { organizationId, apiKey } = await newOrganization({ name: `Faults ${prefix}`, smbCredits: 100 });
  const created = await sendJson(api(), OPERATIONS.create, apiKey, { name: `Faults ${prefix}`, accountIds: ids });
  if (created.status !== 200) throw new Error(created.text);
  return { organizationId, apiKey, startingBalance: 100, adjustments: 0, campaignId: created.body.data.id, accountIds: ids, prefix };
}

const enrichCall = (f: Fixture) => sendJson(api(), OPERATIONS.enrich, f.apiKey, { campaignId: f.campaignId });
const stored = (f: Fixture) => campaigns().get(f.organizationId, f.campaignId);
const ledger = (f: Fixture) => creditLedger().entriesOf(f.organizationId, f.campaignId);
const ledgerShape = async (f: Fixture) => (await ledger(f)).map((e) => [e.kind, e.reason, e.amount]);

/** Polls the stored campaign until `done` holds. */
const until = (f: Fixture, done: (c: CampaignRecord | undefined) => boolean, timeoutMs = 15_000) =>
  pollUntil(() => stored(f), done, { timeoutMs, intervalMs: 50 });

/** Waits for an execution to leave RUNNING. */
async function executionEnd(executionArn: string, timeoutMs = 15_000) {
  return pollUntil(
    () => sfn().send(new DescribeExecutionCommand({ executionArn })),
    (e) => e.status !== 'RUNNING',
    { timeoutMs, intervalMs: 50 },
  );
}

/** The execution of the campaign's latest attempt (from its ledger: the attempt may already be gone from the campaign). */
async function latestExecution(f: Fixture): Promise<string> {
  const charge = await pollUntil(
    () => ledger(f),
    (l) => l.some((e) => e.kind === 'charge'),
    { intervalMs: 50 },
  );
  return workflow().executionArnOf(charge.filter((e) => e.kind === 'charge').at(-1)!.attemptId!);
}

/** Waits until FinishRecording has written the recency marker of every account (so CompleteEnrichment, retried or not, is over). */
const recorded = (f: Fixture, ids = f.accountIds) =>
  pollUntil(
    () => accountHistory().getFacts(f.organizationId, ids),
    (facts) => ids.every((id) => facts.get(id)?.lastEnrichedAt),
    { intervalMs: 50 },
  );

/** Every invariant of the organization holds, with every attempt ended. */
async function expectInvariants(f: Fixture, options = { settled: true }) {
  const report = await checkInvariants(api(), [f], { settled: options.settled, quiescent: true, checkCeiling: true });
  expect(report.violations).toEqual([]);
}

/** An answer in the envelope; `internal_error` allowed (the fault may surface). */
function expectEnvelope(res: RawAnswer, op: keyof typeof OPERATIONS = 'enrich') {
  expect(envelopeViolations(op, res, { allow500: true })).toEqual([]);
}

/** Installs a fault for the duration of `fn` only (tests run concurrently: never remove someone else's). */
async function withFault<T>(spec: FaultSpec | FaultSpec[], fn: (faults: Fault[]) => Promise<T>): Promise<T> {
  const faults = (Array.isArray(spec) ? spec : [spec]).map(injectFault);
  try {
    return await fn(faults);
  } finally {
    for (const fault of faults) fault.remove();
  }
}

/**
 * The three money transactions of a campaign, told apart by what they write
 * (not by call order or request tokens, so a refactoring of the store keeps
 * the faults aimed): the launch charges (`:charge`), the completion sets
 * `enriched`, the compensation writes `lastEnrichment` (`:last`).
 */
// Recognised by the expression placeholders lib/db/expression.ts derives from attribute names.
/** The launch's first read: one BatchGetItem of the campaign, the organization item and (unverified) the API key. */
const firstRead = (f: Fixture) => (_input: unknown, text: string) =>
  text.includes(`CAMPAIGN#${f.campaignId}`) && text.includes(`ORG#${f.organizationId}"`) && text.includes('"ORG"');
const launchTransaction = (f: Fixture) => (_input: unknown, text: string) => text.includes(f.campaignId) && text.includes('":c_required"');
const completionTransaction = (f: Fixture) => (_input: unknown, text: string) =>
  text.includes(f.campaignId) && text.includes('":s_completedAt"');
const compensationTransaction = (f: Fixture) => (_input: unknown, text: string) =>
  text.includes(f.campaignId) && text.includes('":s_lastEnrichment"');

// ---------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------

describe.concurrent('launch: transient DynamoDB faults the SDK retries are invisible', () => {
  const steps: [string, (f: Fixture) => Omit<FaultSpec, 'error' | 'client'> & { client?: FaultSpec['client'] }][] = [
    [
      'the launch lock (the campaign read)',
      (f) => ({ command: 'UpdateItemCommand', match: (input, text) => text.includes(f.campaignId) && text.includes(':s_launchLock') }),
    ],
    // Launch reads the organization once, in the first BatchGetItem (with the campaign), before the evaluation. The key is
    // known to this process (the fixture created the campaign with it): the organization's list of active keys verifies it
    // in that same read, so there is no API-key read of its own to fault.
    ['the organization read', (f) => ({ command: 'BatchGetItemCommand', match: firstRead(f) })],
    [
      'the warehouse status read',
      (f) => ({
        command: 'BatchGetItemCommand',
        match: (input, text) => text.includes(`WAREHOUSE#ACCOUNT#${f.prefix}`) && !text.includes('CONTACTS'),
      }),
    ],
    // Recency and CRM targets are the organization's history buckets of the listed accounts (docs/data-model.md), read at every evaluation.
    [
      'the account history read',
      (f) => ({ command: 'BatchGetItemCommand', match: (input, text) => text.includes(historyBucketPrefix(f.organizationId)) }),
    ],
    ['the launch transaction', (f) => ({ command: 'TransactWriteItemsCommand', match: launchTransaction(f) })],
  ];
  it.each(steps)('throttling at %s: the launch succeeds, charged once, and completes', async (_label, where) => {
    const f = await fixture();
    await withFault({ client: 'dynamodb', layer: 'below-retries', times: 1, error: throttling, ...where(f) }, async ([fault]) => {
      const res = await enrichCall(f);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'enriching', credits: { charged: 4 } });
      expect(fault!.failed).toBe(1);
    });
    await until(f, (c) => c?.status === 'enriched');
    await recorded(f);
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 1],
    ]);
    await expectInvariants(f);
  });
});

describe.concurrent('launch: failures beyond the SDK’s retries at each step', () => {
  const steps: [string, (f: Fixture) => FaultSpec][] = [
    [
      'the launch lock (the campaign read)',
      (f) => ({
        client: 'dynamodb',
        command: 'UpdateItemCommand',
        match: (i, t) => t.includes(f.campaignId) && t.includes(':s_launchLock'),
        error: throttling,
      }),
    ],
    [
      'the organization read',
      (f) => ({ client: 'dynamodb', command: 'BatchGetItemCommand', match: firstRead(f), error: throughputExceeded }),
    ],
    [
      'reading the account list (S3)',
      (f) => ({ client: 's3', command: 'GetObjectCommand', match: accountListKey(f.organizationId, f.campaignId), error: s3InternalError }),
    ],
    [
      'the warehouse status read',
      (f) => ({
        client: 'dynamodb',
        command: 'BatchGetItemCommand',
        match: (i, t) => t.includes(`WAREHOUSE#ACCOUNT#${f.prefix}`),
        error: throttling,
      }),
    ],
    [
      'the account history read',
      (f) => ({
        client: 'dynamodb',
        command: 'BatchGetItemCommand',
        match: (i, t) => t.includes(historyBucketPrefix(f.organizationId)),
        error: throttling,
      }),
    ],
    [
      'writing the eligible list (S3)',
      (f) => ({
        client: 's3',
        command: 'PutObjectCommand',
        match: (i, t) => t.includes(f.campaignId) && t.includes('eligible.txt'),
        error: s3InternalError,
      }),
    ],
    [
      'the launch transaction (before it applies)',
      (f) => ({ client: 'dynamodb', command: 'TransactWriteItemsCommand', match: launchTransaction(f), error: throttling }),
    ],
    [
      'the launch transaction (nine conflicts, beyond the store’s own retries)',
      (f) => ({
        client: 'dynamodb',
        command: 'TransactWriteItemsCommand',
        match: launchTransaction(f),
        times: 9,
        error: transactionConflict,
      }),
    ],
  ];
  it.each(steps)('at %s: internal_error in the envelope, nothing charged, no lock left; the retry launches once', async (_label, spec) => {
    const f = await fixture();
    await withFault(spec(f), async ([fault]) => {
      const res = await enrichCall(f);
      expectEnvelope(res);
      expect(res.status, res.text).toBe(500);
      expect(fault!.failed).toBeGreaterThan(0);
    });
    const after = await rawCampaignItem(f.organizationId, f.campaignId);
    expect(after).toMatchObject({ status: 'draft', creditsCharged: 0 });
    expect(after?.launchLock).toBeUndefined();
    expect(await ledger(f)).toEqual([]);
    await expectInvariants(f);

    const retry = await enrichCall(f);
    expect(retry.status, retry.text).toBe(200);
    await until(f, (c) => c?.status === 'enriched');
    await recorded(f);
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 1],
    ]);
    await expectInvariants(f);
  });

  it('three transaction conflicts on the launch are retried by the store: one launch, one charge', async () => {
    const f = await fixture();
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', match: launchTransaction(f), times: 3, error: transactionConflict },
      async ([fault]) => {
        const res = await enrichCall(f);
        expect(res.status, res.text).toBe(200);
        expect(fault!.failed).toBe(3);
      },
    );
    await until(f, (c) => c?.status === 'enriched');
    expect((await ledger(f)).filter((e) => e.kind === 'charge')).toHaveLength(1);
    await recorded(f);
    await expectInvariants(f);
  });

  it('Step Functions refusing to start the execution: the charge is compensated at once (failed, refunded), and a retry launches', async () => {
    const f = await fixture();
    await withFault(
      {
        client: 'sfn',
        command: 'StartExecutionCommand',
        match: f.campaignId,
        error: () =>
          Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 } }),
      },
      async () => {
        const res = await enrichCall(f);
        expectEnvelope(res);
        expect(res.status).toBe(500);
      },
    );
    const after = await stored(f);
    expect(after).toMatchObject({ status: 'draft', creditsCharged: 0, lastEnrichment: { status: 'failed', refunded: true } });
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'failed', 4],
    ]);
    await expectInvariants(f);
    expect((await enrichCall(f)).status).toBe(200);
    await until(f, (c) => c?.status === 'enriched');
    await recorded(f);
    await expectInvariants(f);
  });

  it('the lock release failing after a refusal leaves a draft with nothing charged and a lock that expires within 60 s', async () => {
    const f = await fixture();
    // 4 eligible accounts need 4 credits; leave 2.
    await creditLedger().adjust(f.organizationId, -98);
    f.adjustments = -98;
    await withFault(
      {
        client: 'dynamodb',
        command: 'UpdateItemCommand',
        match: (i, t) => t.includes(f.campaignId) && t.includes('REMOVE #launchLock'),
        times: Number.POSITIVE_INFINITY,
        error: throttling,
      },
      async () => {
        const res = await enrichCall(f);
        expectEnvelope(res);
        // The refusal (402) or the release failure (500) may be what the caller sees; either way nothing moved.
        expect([402, 500]).toContain(res.status);
      },
    );
    const after = (await rawCampaignItem(f.organizationId, f.campaignId)) as { launchLock?: { expiresAt: string } } | undefined;
    expect(after).toMatchObject({ status: 'draft', creditsCharged: 0 });
    // The release failed, so the lock is there; it must expire within 60 s (docs/errors.md).
    expect(after?.launchLock).toBeDefined();
    expect(Date.parse(after!.launchLock!.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(await ledger(f)).toEqual([]);
    await expectInvariants(f);
  });

  it('the launch transaction applied but its answer lost (the Lambda died before starting the workflow): a retried enrich answers the campaign as it is, the reconciler gets the attempt to an end, charged once', async () => {
    const f = await fixture();
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: launchTransaction(f), error: throttling },
      async ([fault]) => {
        const res = await enrichCall(f);
        expectEnvelope(res);
        expect(fault!.failed).toBe(1);
      },
    );
    // The client retries, as it should after a 5xx: the campaign as it is (a repeat call starts nothing).
    const retry = await enrichCall(f);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.data).toMatchObject({ status: 'enriching', credits: { charged: 4 } });
    // The reconciler (every 5 minutes in AWS) starts the lost execution; here one pass, past the grace period.
    const report = await reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId: f.organizationId });
    expect(report.repairs.map((r) => r.action)).toEqual(['started']);
    // The attempt must end (enriched, or compensated back to draft), never stay enriching with the credits and the capacity held.
    const ended = await pollUntil(
      () => stored(f),
      (c) => c?.status !== 'enriching',
      { intervalMs: 100 },
    ).catch(() => undefined);
    expect(
      ended?.status ??
        'still enriching long after the reconciler pass (no execution was ever started for the attempt; credits and capacity held)',
    ).toMatch(/^(enriched|draft)$/);
    expect((await ledger(f)).filter((e) => e.kind === 'charge')).toHaveLength(1);
    await expectInvariants(f);
  });
});

// ---------------------------------------------------------------------------
// Workflow
// ---------------------------------------------------------------------------

describe.concurrent('workflow: throttling beyond the SDK’s retries in each task is retried by the state machine', () => {
  it('FindContactsBatch (warehouse contact read): enriched, money exact', async () => {
    const f = await fixture();
    await withFault(
      {
        client: 'dynamodb',
        command: 'BatchGetItemCommand',
        match: (i, t) => t.includes(`WAREHOUSE#ACCOUNT#${f.prefix}`) && t.includes('CONTACTS'),
        error: throttling,
      },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await until(f, (c) => c?.status === 'enriched');
        expect(fault!.failed).toBe(1);
      },
    );
    await recorded(f);
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 1],
    ]);
    await expectInvariants(f);
  });

  it('CompleteEnrichment (completion transaction, before it applies): enriched, one refund', async () => {
    const f = await fixture();
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', match: completionTransaction(f), error: throttling },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await until(f, (c) => c?.status === 'enriched');
        expect(fault!.failed).toBe(1);
      },
    );
    await recorded(f);
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 1],
    ]);
    await expectInvariants(f);
  });

  it('FinishRecording (a history bucket write, throttled beyond the SDK retries): every account recorded', async () => {
    const f = await fixture();
    await withFault(
      {
        client: 'dynamodb',
        command: 'PutItemCommand',
        match: (i, t) => t.includes(historyBucketPrefix(f.organizationId)),
        error: throttling,
      },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await recorded(f);
        expect(fault!.failed).toBe(1);
      },
    );
    await expectInvariants(f);
  });

  it('CompensateAttempt (compensation transaction of a failing attempt): back to draft, refunded once', async () => {
    const f = await fixture({ fail: true });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', match: compensationTransaction(f), error: throttling },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await until(f, (c) => c?.status === 'draft' && c.lastEnrichment !== null);
        expect(fault!.failed).toBe(1);
      },
    );
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'failed', 4],
    ]);
    await expectInvariants(f);
  });

  it('three transaction conflicts on the completion are retried by the store', async () => {
    const f = await fixture();
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', match: completionTransaction(f), times: 3, error: transactionConflict },
      async () => {
        expect((await enrichCall(f)).status).toBe(200);
        await until(f, (c) => c?.status === 'enriched');
      },
    );
    await recorded(f);
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'no_contacts_found', 1],
    ]);
    await expectInvariants(f);
  });

  it('S3 refusing the result part (SlowDown) is retried: the export has every account', async () => {
    const f = await fixture();
    await withFault(
      {
        client: 's3',
        command: 'PutObjectCommand',
        match: (i, t) => t.includes(f.campaignId) && t.includes('/results/'),
        error: () =>
          Object.assign(new Error('Please reduce your request rate.'), {
            name: 'SlowDown',
            $fault: 'server',
            $metadata: { httpStatusCode: 503 },
          }),
      },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await until(f, (c) => c?.status === 'enriched');
        expect(fault!.failed).toBe(1);
      },
    );
    const exported = await sendJson(api(), OPERATIONS.export, f.apiKey, { campaignId: f.campaignId });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data.rows).toEqual({ accounts: 4, contacts: 3 });
    await recorded(f);
    await expectInvariants(f);
  });
});

describe.concurrent('workflow: a task killed between its write and its return', () => {
  it('CompleteEnrichment, transient (Retry): the rerun finds the attempt completed and refunds nothing more', async () => {
    const f = await fixture({ accounts: 5, withContacts: 2 });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: completionTransaction(f), error: throttling },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        // FinishRecording runs only once CompleteEnrichment (its rerun) succeeded.
        await recorded(f);
        expect(fault!.failed).toBe(1);
      },
    );
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -5],
      ['refund', 'no_contacts_found', 3],
    ]);
    expect((await stored(f))?.creditsCharged).toBe(2);
    await expectInvariants(f);
  });

  it('CompleteEnrichment, fatal (Catch → CompensateAttempt): the compensation finds the attempt completed and refunds nothing; the campaign stays enriched', async () => {
    const f = await fixture({ accounts: 5, withContacts: 2 });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: completionTransaction(f), error: () => crash() },
      async () => {
        expect((await enrichCall(f)).status).toBe(200);
        const attempt = (await until(f, (c) => c?.status === 'enriched'))!.attempt!;
        const execution = await executionEnd(attempt.executionArn);
        expect(execution.status).toBe('FAILED');
      },
    );
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -5],
      ['refund', 'no_contacts_found', 3],
    ]);
    expect(await stored(f)).toMatchObject({ status: 'enriched', creditsCharged: 2, lastEnrichment: null });
    await expectInvariants(f);
  });

  it('CompleteEnrichment, fatal: the accounts of the completed attempt still count as recently enriched for the next launch (docs/launch.md)', async () => {
    const f = await fixture({ accounts: 3, withContacts: 3 });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: completionTransaction(f), error: () => crash() },
      async () => {
        expect((await enrichCall(f)).status).toBe(200);
        const attempt = (await until(f, (c) => c?.status === 'enriched'))!.attempt!;
        await executionEnd(attempt.executionArn);
      },
    );
    // The same accounts, 30-day recency: all three were enriched a moment ago by this organization.
    const again = await sendJson(api(), OPERATIONS.create, f.apiKey, {
      name: 'Again',
      accountIds: f.accountIds,
      excludeEnrichedWithinDays: 30,
    });
    const res = await sendJson(api(), OPERATIONS.enrich, f.apiKey, { campaignId: again.body.data.id });
    expect(res.status, `the next launch charged again for accounts enriched a moment ago: ${res.text}`).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'no_eligible_accounts', details: { requested: 3 } });
  });

  it('CompensateAttempt, transient (Retry): the rerun finds the attempt compensated and refunds nothing more', async () => {
    const f = await fixture({ fail: true });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: compensationTransaction(f), error: throttling },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        const execution = await executionEnd(await latestExecution(f));
        expect(execution.status).toBe('FAILED');
        expect(fault!.failed).toBe(1);
      },
    );
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'failed', 4],
    ]);
    expect(await stored(f)).toMatchObject({ status: 'draft', creditsCharged: 0, lastEnrichment: { status: 'failed', refunded: true } });
    await expectInvariants(f);
  });

  it('CompensateAttempt, fatal: the refund written before the crash stands, once; the campaign is a draft again', async () => {
    const f = await fixture({ fail: true });
    await withFault(
      { client: 'dynamodb', command: 'TransactWriteItemsCommand', when: 'after', match: compensationTransaction(f), error: () => crash() },
      async () => {
        expect((await enrichCall(f)).status).toBe(200);
        expect((await executionEnd(await latestExecution(f))).status).toBe('FAILED');
      },
    );
    expect(await ledgerShape(f)).toEqual([
      ['charge', 'launch', -4],
      ['refund', 'failed', 4],
    ]);
    await expectInvariants(f);
  });

  it('FinishRecording, transient after clearing the pending completion: the rerun finds it gone and the marker in place', async () => {
    const f = await fixture();
    await withFault(
      { client: 'dynamodb', command: 'UpdateItemCommand', when: 'after', match: pendingRecencyAttribute(f.campaignId), error: throttling },
      async ([fault]) => {
        expect((await enrichCall(f)).status).toBe(200);
        await recorded(f);
        await pollUntil(
          async () => fault!.failed,
          (n) => n >= 1,
          { intervalMs: 50 },
        );
      },
    );
    await pollUntil(
      () => organizations().get(f.organizationId),
      (org) => org?.pendingRecency === undefined,
      { intervalMs: 50 },
    );
    const done = (await stored(f))!;
    const facts = await accountHistory().getFacts(f.organizationId, f.accountIds);
    for (const id of f.accountIds) expect(facts.get(id)?.lastEnrichedAt).toBe(done.completedAt);
    await expectInvariants(f);
  });

  it('the whole execution run again for a completed attempt (a re-drive) moves no money', async () => {
    const f = await fixture({ accounts: 5, withContacts: 2 });
    expect((await enrichCall(f)).status).toBe(200);
    await recorded(f);
    const before = await ledgerShape(f);
    const done = (await stored(f))!;
    const attempt = done.attempt!;
    const input = {
      organizationId: f.organizationId,
      campaignId: f.campaignId,
      attemptId: attempt.id,
      eligibleObjectKey: attempt.eligibleObjectKey,
      batches: batchesOf(attempt.eligible),
      requestId: null,
    };
    // The same task Lambdas invoked again with their input, then a second execution of the whole state machine.
    await completeHandler(
      { ...input, batchResults: [{ index: 0, accounts: 5, accountsWithContact: 5, accountsWithMobile: 0, contacts: 5 }] },
      lambdaContext('WorkflowComplete', 'rerun'),
    );
    await compensateHandler({ ...input, reason: 'failed' }, lambdaContext('WorkflowCompensate', 'rerun'));
    const { executionArn } = await sfn().send(
      new StartExecutionCommand({ stateMachineArn: LOCAL_STATE_MACHINE_ARN, name: `${attempt.id}-redrive`, input: JSON.stringify(input) }),
    );
    // FindContacts, CompleteEnrichment and FinishRecording of the re-drive have run once it waits for the results' expiry.
    await waitForWorkflowState(executionArn!, 'ExpireResults');
    expect(await ledgerShape(f)).toEqual(before);
    expect(await stored(f)).toEqual(done);
    await expectInvariants(f);
    await workflow()
      .stop(executionArn!, 'test over')
      .catch(() => undefined);
  });
});

// ---------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------

const attemptSuffix = customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21);

/**
 * An enriched campaign whose CSV is larger than one upload part (5 MB):
 * two result parts of 1,500 accounts with 4 contacts each, written straight
 * to S3 and the table (12,000 contact rows, about 6.5 MB).
 */
async function largeEnriched(): Promise<{ organizationId: string; apiKey: string; campaignId: string }> {
  const { organizationId, apiKey } = await newOrganization({ name: 'Large export' });
  const campaignId = newCampaignId();
  const attemptId = `att_${attemptSuffix()}`;
  const pad = 'x'.repeat(280);
  const part = (p: number): EnrichedAccount[] =>
    Array.from({ length: 1_500 }, (_, i) => ({
      ...missingAccount(`big_${p}_${i}`),
      name: `Account ${p}-${i}`,
      domain: `a${i}.example.com`,
      industry: 'Software',
      employeeCount: 100,
      country: 'US',
      contacts: Array.from({ length: 4 }, (_, j) => ({
        ...contact(`big_${p}_${i}_${j}`, { mobile: true }),
        title: `Head of ${pad.slice(0, 40)}`,
        linkedinUrl: `https://linkedin.example/in/${pad}`,
      })),
    }));
  await Promise.all([0, 1].map((p) => results().putPart(resultsPrefix(organizationId, campaignId, attemptId), p, part(p))));
  const now = Date.now();
  await campaigns().create({
    id: campaignId,
    organizationId,
    name: 'Large export',
    status: 'enriched',
    createdVia: 'api',
    excludeEnrichedWithinDays: null,
    createdAt: new Date(now - 60_000).toISOString(),
    accountsRequested: 3_000,
    accountsObjectKey: accountListKey(organizationId, campaignId),
    accountsEligible: 3_000,
    accountsExcluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
    creditsCharged: 3_000,
    lastEnrichment: null,
    completedAt: new Date(now - 30_000).toISOString(),
    resultsExpireAt: new Date(now + 86_400_000).toISOString(),
    results: { totalAccounts: 3_000, totalContactsFound: 12_000, pctAccountsWithContact: 1, pctAccountsWithMobile: 1 },
    attempt: {
      id: attemptId,
      startedAt: new Date(now - 60_000).toISOString(),
      eligible: 3_000,
      charged: 3_000,
      creditsPerAccount: 1,
      eligibleObjectKey: `campaigns/${organizationId}/${campaignId}/attempts/${attemptId}/eligible.txt`,
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:faults:${attemptId}`,
    },
  });
  return { organizationId, apiKey, campaignId };
}

/** Export objects of a campaign (there must be none after a failed export). */
async function exportObjects(organizationId: string, campaignId: string): Promise<{ key: string; size: number }[]> {
  const page = await s3().send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: `exports/${organizationId}/${campaignId}/` }));
  return (page.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0 }));
}

/** Downloads an export and counts its data rows (CRLF records after the header; no field here contains a line break). */
async function rowsOf(url: string): Promise<number> {
  const text = await (await fetch(url)).text();
  return text.split('\r\n').filter((line) => line !== '').length - 1;
}

describe.concurrent('export: faults never serve a partial file', () => {
  let large: Awaited<ReturnType<typeof largeEnriched>>;
  beforeAll(async () => {
    large = await largeEnriched();
  });
  const exportLarge = () => sendJson(api(), OPERATIONS.export, large.apiKey, { campaignId: large.campaignId });

  it('a failure uploading the second part of a multipart upload: internal_error, the upload aborted, no object; the next export is whole', async () => {
    // Sequential within this group: the three large-export tests share one campaign's export prefix.
    await withFault(
      [
        {
          client: 's3',
          command: 'UploadPartCommand',
          match: (i) => i.PartNumber === 2 && String(i.Key).includes(large.campaignId),
          error: s3InternalError,
        },
        { client: 's3', command: 'AbortMultipartUploadCommand', match: large.campaignId, times: 0, error: s3InternalError },
      ],
      async ([fault, aborts]) => {
        const res = await exportLarge();
        expectEnvelope(res, 'export');
        expect(res.status).toBe(500);
        expect(fault!.failed).toBe(1);
        expect(aborts!.matched).toBe(1);
      },
    );
    expect(await exportObjects(large.organizationId, large.campaignId)).toEqual([]);

    const whole = await exportLarge();
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.data.rows).toEqual({ accounts: 3_000, contacts: 12_000 });
    expect(await rowsOf(whole.body.data.url)).toBe(12_000);

    // A result part that cannot be read midway (after the first part streamed): no object either.
    const before = await exportObjects(large.organizationId, large.campaignId);
    await withFault(
      {
        client: 's3',
        command: 'GetObjectCommand',
        match: (i) => String(i.Key).includes(large.campaignId) && String(i.Key).endsWith(resultPartKey('', 1)),
        error: s3InternalError,
      },
      async ([fault]) => {
        const res = await exportLarge();
        expectEnvelope(res, 'export');
        expect(res.status).toBe(500);
        expect(fault!.failed).toBe(1);
      },
    );
    expect(await exportObjects(large.organizationId, large.campaignId)).toEqual(before);

    // Completing the upload fails after S3 applied it: the caller gets no URL; any object left is whole, never partial.
    await withFault(
      { client: 's3', command: 'CompleteMultipartUploadCommand', when: 'after', match: large.campaignId, error: s3InternalError },
      async () => {
        const res = await exportLarge();
        expectEnvelope(res, 'export');
        expect(res.status).toBe(500);
      },
    );
    const left = (await exportObjects(large.organizationId, large.campaignId)).filter((o) => !before.some((b) => b.key === o.key));
    const complete = before[0]!.size;
    for (const o of left) expect(o.size).toBe(complete);
  });

  it('a small export whose single PutObject fails: internal_error, no object; DynamoDB throttling the SDK absorbs is invisible', async () => {
    const f = await fixture();
    expect((await enrichCall(f)).status).toBe(200);
    await until(f, (c) => c?.status === 'enriched');
    await withFault(
      { client: 's3', command: 'PutObjectCommand', match: `exports/${f.organizationId}/${f.campaignId}/`, error: s3InternalError },
      async ([fault]) => {
        const res = await sendJson(api(), OPERATIONS.export, f.apiKey, { campaignId: f.campaignId });
        expectEnvelope(res, 'export');
        expect(res.status).toBe(500);
        expect(fault!.failed).toBe(1);
      },
    );
    expect(await exportObjects(f.organizationId, f.campaignId)).toEqual([]);

    await withFault(
      { client: 'dynamodb', layer: 'below-retries', command: 'GetItemCommand', match: f.campaignId, times: 2, error: throttling },
      async ([fault]) => {
        const res = await sendJson(api(), OPERATIONS.export, f.apiKey, { campaignId: f.campaignId });
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.rows).toEqual({ accounts: 4, contacts: 3 });
        expect(fault!.failed).toBe(2);
      },
    );
    await withFault({ client: 'dynamodb', command: 'GetItemCommand', match: f.campaignId, error: throttling }, async () => {
      const res = await sendJson(api(), OPERATIONS.export, f.apiKey, { campaignId: f.campaignId });
      expectEnvelope(res, 'export');
      expect(res.status).toBe(500);
    });
    expect(await exportObjects(f.organizationId, f.campaignId)).toHaveLength(1);
    await recorded(f);
    await expectInvariants(f);
  });
});

// Last and alone: it shortens the result access period of this process for its duration.
describe('workflow: ExpireResults', () => {
  it('throttling at the expiry write is retried: the campaign is stored expired at resultsExpireAt', async () => {
    const previous = process.env.RESULTS_ACCESS_PERIOD_SECONDS;
    process.env.RESULTS_ACCESS_PERIOD_SECONDS = '2';
    const f = await fixture();
    try {
      // The expiry write is one transaction: the campaign's change and its campaign.expired webhook event (docs/webhooks.md).
      await withFault(
        {
          client: 'dynamodb',
          command: 'TransactWriteItemsCommand',
          match: (i, t) => t.includes(f.campaignId) && t.includes('":c_enriched"'),
          error: throttling,
        },
        async ([fault]) => {
          expect((await enrichCall(f)).status).toBe(200);
          await until(f, (c) => c?.status === 'expired', 15_000);
          expect(fault!.failed).toBe(1);
        },
      );
    } finally {
      if (previous === undefined) delete process.env.RESULTS_ACCESS_PERIOD_SECONDS;
      else process.env.RESULTS_ACCESS_PERIOD_SECONDS = previous;
    }
    await expectInvariants(f);
  });
});
