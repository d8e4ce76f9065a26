/**
 * Model-based test of enrichment money and capacity (issue #19;
 * docs/launch.md, README.md#operator-cli) with fast-check's `fc.commands` / `fc.asyncModelRun`: random
 * sequences of create, enrich, repeat enrich, operator cancel, operator
 * top-ups (`ledger().adjust`), capacity changes, completion and crashes
 * injected at write boundaries (an SDK middleware that throws after a
 * chosen write succeeded: the launch transaction, StopExecution of a
 * cancel). After every command: no negative balance, balance = Σ ledger,
 * capacity exact, the ceiling never exceeded by a launch, every campaign in
 * an allowed state and charged what its state says; after the reconciler
 * runs, no campaign is `enriching` without a live execution.
 *
 * Enrichments are held in their contact step (a warehouse adapter) so the
 * state is stable while it is checked; "complete" lets them through.
 * `MODEL_RUNS` (default 5) and `MODEL_COMMANDS` (default 14) scale it (`npm run soak` style).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { enrichCampaign } from '../lib/enrichment/launch';
import { reconcileEnrichments } from '../lib/enrichment/reconcile';
import {
  campaigns,
  enrichment,
  launchDependencies,
  ledger,
  organizations,
  reconcileDependencies,
  useWarehouse,
  workflow,
} from '../lib/root';
import { newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  enrich,
  importAccounts,
  ledgerOf,
  testWarehouse,
  uniquePrefix,
  type TestWarehouse,
} from './enrichment/support';
import { injectFault, removeAllFaults } from './hostile/support/faults';

const api = useApi();
const RUNS = Number(process.env.MODEL_RUNS ?? 5);
const MAX_COMMANDS = Number(process.env.MODEL_COMMANDS ?? 14);

afterEach(() => {
  removeAllFaults();
  useWarehouse(undefined);
});

interface Model {
  campaigns: { id: string; accounts: number }[];
  /** The ceiling was lowered below what was enriching at the time: the figure may stay above it until those end. */
  loweredBelowInFlight: boolean;
}

interface Real {
  organizationId: string;
  apiKey: string;
  pool: string[];
  held: TestWarehouse;
}

const OK_ENRICH = new Set([200, 402, 409, 422, 429]);

/** A fresh held warehouse adapter: enrichments launched from now on wait in their contact step. */
function hold(real: Real): void {
  real.held = testWarehouse({ holdAccounts: true });
  useWarehouse(real.held);
}

/**
 * One reconciler pass over the model's organization only: the table is shared with every other test file, whose
 * campaigns run in other workers' Step Functions (MISSING here), so a pass over every organization would start or
 * compensate their enrichments.
 */
const reconcileNow = (organizationId: string) => reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId });

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every invariant of docs/launch.md that must hold between commands. */
async function checkInvariants(model: Model, real: Real, options: { afterReconcile?: boolean } = {}): Promise<void> {
  const audit = (await ledger().audit(real.organizationId))!;
  expect(audit.balance).toBeGreaterThanOrEqual(0);
  expect(audit.balance).toBe(audit.ledgerSum);
  const org = (await organizations().get(real.organizationId))!;
  let enrichingAccounts = 0;
  for (const c of model.campaigns) {
    const record = (await campaigns().get(real.organizationId, c.id))!;
    expect(['draft', 'enriching', 'enriched']).toContain(record.status);
    const { charged } = await ledgerOf(real.organizationId, c.id);
    if (record.status === 'enriching') {
      enrichingAccounts += record.attempt!.eligible;
      expect(charged).toBe(record.attempt!.charged);
      if (options.afterReconcile)
        expect(await workflow().status(record.attempt!.executionArn), `${c.id} enriching without a live execution`).toBe('RUNNING');
    } else if (record.status === 'enriched') {
      // Every pool account is active with a contact: nothing is refunded at completion.
      expect(charged).toBe(record.attempt!.eligible);
    } else {
      expect(charged).toBe(0);
      expect(record.attempt).toBeUndefined();
    }
  }
  expect(org.enrichingAccounts).toBe(org.externalEnrichingAccounts + enrichingAccounts);
  if (!model.loweredBelowInFlight) expect(org.enrichingAccounts).toBeLessThanOrEqual(org.maxEnrichingAccounts);
}

const pick = (model: Model, index: number) => model.campaigns[index % model.campaigns.length]!;

class Create implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly accounts: number,
    readonly offset: number,
  ) {}
  check = (m: Readonly<Model>) => m.campaigns.length < 6;
  async run(m: Model, r: Real) {
    const ids = Array.from({ length: this.accounts }, (_, i) => r.pool[(this.offset + i) % r.pool.length]!);
    m.campaigns.push({ id: await createApiCampaign(api(), r.apiKey, [...new Set(ids)]), accounts: new Set(ids).size });
    await checkInvariants(m, r);
  }
  toString = () => `create(${this.accounts})`;
}

class Enrich implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.campaigns.length > 0;
  async run(m: Model, r: Real) {
    const res = await enrich(api(), r.apiKey, pick(m, this.index).id);
    expect(OK_ENRICH.has(res.status), JSON.stringify(res.body)).toBe(true);
    await checkInvariants(m, r);
  }
  toString = () => `enrich(${this.index})`;
}

class Cancel implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.campaigns.length > 0;
  async run(m: Model, r: Real) {
    const { id } = pick(m, this.index);
    const before = (await campaigns().get(r.organizationId, id))!;
    if (before.status === 'draft' && before.lastEnrichment?.status === 'canceled') {
      // A repeated cancel (docs/launch.md#canceling): the same answer, nothing moves.
      expect(await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, id)).toEqual({
        campaignId: id,
        status: 'canceled',
      });
    } else if (before.status !== 'enriching') {
      await expect(cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, id)).rejects.toThrow(
        /only an enriching campaign/,
      );
    } else {
      expect(await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, id)).toEqual({
        campaignId: id,
        status: 'canceled',
      });
    }
    await checkInvariants(m, r);
  }
  toString = () => `cancel(${this.index})`;
}

class TopUp implements fc.AsyncCommand<Model, Real> {
  constructor(readonly credits: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const balance = (await organizations().get(r.organizationId))!.smbCredits;
    // A negative adjustment never takes the balance below zero (the operator's CLI refuses that).
    const credits = Math.max(this.credits, -balance);
    if (credits !== 0) await ledger().adjust(r.organizationId, credits, 'model test');
    await checkInvariants(m, r);
  }
  toString = () => `topUp(${this.credits})`;
}

class Capacity implements fc.AsyncCommand<Model, Real> {
  constructor(readonly max: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const org = await organizations().setCapacity(r.organizationId, { maxEnrichingAccounts: this.max });
    m.loweredBelowInFlight = org.enrichingAccounts > this.max;
    await checkInvariants(m, r);
  }
  toString = () => `capacity(${this.max})`;
}

class Complete implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    await reconcileNow(r.organizationId);
    r.held.release();
    await waitUntil(async () => {
      for (const c of m.campaigns) if ((await campaigns().get(r.organizationId, c.id))!.status === 'enriching') return false;
      return true;
    }, 'every enrichment to end');
    hold(r);
    m.loweredBelowInFlight = false;
    await checkInvariants(m, r);
  }
  toString = () => 'complete';
}

/** The launch transaction applies, and the enrich Lambda dies before it can answer or start the workflow. */
class CrashAfterLaunch implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.campaigns.length > 0;
  async run(m: Model, r: Real) {
    const { id } = pick(m, this.index);
    const died = new Error('Injected: the Lambda died after the launch transaction');
    const fault = injectFault({
      client: 'dynamodb',
      command: 'TransactWriteItemsCommand',
      match: id,
      when: 'after',
      layer: 'above-retries',
      error: () => died,
    });
    await enrichCampaign(launchDependencies(r.organizationId), r.organizationId, id).catch(() => undefined);
    fault.remove();
    await checkInvariants(m, r);
  }
  toString = () => `crashAfterLaunch(${this.index})`;
}

/** The cancel records its request and dies as it stops the execution. */
class CrashInCancel implements fc.AsyncCommand<Model, Real> {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.campaigns.length > 0;
  async run(m: Model, r: Real) {
    const { id } = pick(m, this.index);
    const fault = injectFault({
      client: 'sfn',
      command: 'StopExecutionCommand',
      when: 'before',
      layer: 'above-retries',
      times: 1,
      error: () => new Error('Injected: the cancel died at StopExecution'),
    });
    await cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, id).catch(() => undefined);
    fault.remove();
    await checkInvariants(m, r);
  }
  toString = () => `crashInCancel(${this.index})`;
}

class Reconcile implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    await reconcileNow(r.organizationId);
    await checkInvariants(m, r, { afterReconcile: true });
  }
  toString = () => 'reconcile';
}

const commands = [
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat(40)).map(([n, o]) => new Create(n, o)),
  fc.nat(10).map((i) => new Enrich(i)),
  fc.nat(10).map((i) => new Enrich(i)),
  fc.nat(10).map((i) => new Cancel(i)),
  fc.integer({ min: -6, max: 12 }).map((c) => new TopUp(c)),
  fc.integer({ min: 0, max: 12 }).map((max) => new Capacity(max)),
  fc.constant(new Complete()),
  fc.nat(10).map((i) => new CrashAfterLaunch(i)),
  fc.nat(10).map((i) => new CrashInCancel(i)),
  fc.constant(new Reconcile()),
];

describe('enrichment model', () => {
  it(
    `random command sequences keep money, capacity and states exact (${RUNS} runs of up to ${MAX_COMMANDS} commands)`,
    { timeout: 60_000 + RUNS * MAX_COMMANDS * 4_000 },
    async () => {
      const pool = activeAccounts(uniquePrefix(), 12).map((a) => a);
      await importAccounts(pool);
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: MAX_COMMANDS, size: 'max' }), async (cmds) => {
          const { organizationId, apiKey } = await newOrganization({ smbCredits: 8, maxEnrichingAccounts: 8 });
          const real: Real = { organizationId, apiKey, pool: pool.map((a) => a.accountId), held: testWarehouse() };
          hold(real);
          const model: Model = { campaigns: [], loweredBelowInFlight: false };
          // Three drafts to start from, so enrich and cancel have something to act on at once.
          for (const [n, o] of [
            [2, 0],
            [3, 2],
            [1, 5],
          ] as const)
            await new Create(n, o).run(model, real);
          try {
            await fc.asyncModelRun(() => ({ model, real }), cmds);
            if (process.env.MODEL_DEBUG) process.stderr.write(`model: ${String(cmds)}\n`);
            // Whatever the sequence left, everything ends: reconcile, release, and nothing stays enriching.
            await new Complete().run(model, real);
            await new Reconcile().run(model, real);
          } finally {
            real.held.release();
            removeAllFaults();
          }
        }),
        { numRuns: RUNS },
      );
    },
  );
});
