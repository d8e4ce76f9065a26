/**
 * Cancel racing enrich, repeat enrich and completion (issue #19;
 * docs/launch.md): many campaigns, each launched and then hit at seeded random
 * moments by an operator's cancel and two more enrich calls while its
 * workflow runs to completion. Never a 5xx; a race is a 409 with a clear code
 * or the campaign as it is. Afterwards the money and capacity are exact:
 * balance = Σ ledger, each campaign charged exactly what its final state
 * says, `enrichingAccounts` back to 0.
 *
 * `RACE_SEED` replays a run; `RACE_CAMPAIGNS` sets the number of campaigns (default 36).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelEnrichment } from '../lib/enrichment/cancel';
import { enrichCampaign } from '../lib/enrichment/launch';
import { reconcileEnrichments } from '../lib/enrichment/reconcile';
import type { WorkflowPort } from '../lib/enrichment/workflow';
import {
  campaigns,
  embeddedWarehouse,
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
  getCampaign,
  importAccounts,
  ledgerOf,
  pollUntil,
  uniquePrefix,
} from './enrichment/support';

const api = useApi();

/** mulberry32: a small seeded PRNG, so a failing interleaving can be replayed with RACE_SEED. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const SEED = Number(process.env.RACE_SEED ?? Date.now() % 1_000_000);
const CAMPAIGNS = Number(process.env.RACE_CAMPAIGNS ?? 36);
const ORGANIZATIONS = 3;
const ACCOUNTS_PER_CAMPAIGN = 3;
const CREDITS = 1_000;

const cancelDeps = () => ({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() });

afterEach(() => useWarehouse(undefined));

/** The embedded warehouse with each contact read delayed by a random 0–`maxMs` ms: executions run long enough to be raced. */
function slowContacts(random: () => number, maxMs: number): void {
  const inner = embeddedWarehouse();
  useWarehouse({
    getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
    getAccounts: async (ids) => {
      await sleep(random() * maxMs);
      return inner.getAccounts(ids);
    },
  });
}

describe('cancel racing enrich, repeat enrich and completion', () => {
  it(`${CAMPAIGNS} campaigns with random delays: never a 5xx, money and capacity exact`, async () => {
    const random = seeded(SEED);
    const orgs = await Promise.all(
      Array.from({ length: ORGANIZATIONS }, () => newOrganization({ smbCredits: CREDITS, maxEnrichingAccounts: 10_000 })),
    );
    const setups = await Promise.all(
      Array.from({ length: CAMPAIGNS }, async (_, i) => {
        const org = orgs[i % ORGANIZATIONS]!;
        const list = activeAccounts(uniquePrefix(), ACCOUNTS_PER_CAMPAIGN);
        await importAccounts(list);
        return {
          org,
          campaignId: await createApiCampaign(
            api(),
            org.apiKey,
            list.map((a) => a.accountId),
          ),
        };
      }),
    );

    slowContacts(random, 400);
    const answers: { campaignId: string; call: string; status: number; code?: string }[] = [];
    const cancels: { campaignId: string; outcome: string }[] = [];
    await Promise.all(
      setups.map(async ({ org, campaignId }) => {
        const delays = { cancel: random() * 250, repeat: random() * 250, again: random() * 400 };
        const first = await enrich(api(), org.apiKey, campaignId);
        answers.push({ campaignId, call: 'launch', status: first.status, code: first.error?.code });
        await Promise.all([
          (async () => {
            await sleep(delays.cancel);
            try {
              cancels.push({ campaignId, outcome: (await cancelEnrichment(cancelDeps(), campaignId)).status });
            } catch (error) {
              // Not enriching any more (completed first, or already back to draft): the operator is told so.
              expect((error as Error).message).toMatch(/only an enriching campaign can be canceled/);
              cancels.push({ campaignId, outcome: 'refused' });
            }
          })(),
          ...(['repeat', 'again'] as const).map(async (call) => {
            await sleep(delays[call]);
            const res = await enrich(api(), org.apiKey, campaignId);
            answers.push({ campaignId, call, status: res.status, code: res.error?.code });
          }),
        ]);
      }),
    );

    const context = `seed ${SEED} (RACE_SEED=${SEED} replays it)`;
    const serverErrors = answers.filter((a) => a.status >= 500);
    expect(serverErrors, context).toEqual([]);
    for (const a of answers) {
      // 200: launched or the running campaign as it is; 409: enrichment_pending or campaign_not_enrichable.
      if (a.status !== 200)
        expect(
          [409, 'enrichment_pending|campaign_not_enrichable'.split('|').includes(a.code!)],
          `${context}: ${JSON.stringify(a)}`,
        ).toEqual([409, true]);
      else expect(a.code).toBeUndefined();
    }
    expect(
      answers.filter((a) => a.call === 'launch').every((a) => a.status === 200),
      context,
    ).toBe(true);

    // Everything settles without another call: each campaign ends enriched or draft.
    const finals = await pollUntil(
      () =>
        Promise.all(
          setups.map(async ({ org, campaignId }) => ({
            org,
            campaignId,
            status: (await getCampaign(api(), org.apiKey, campaignId)).data.status as string,
          })),
        ),
      (all) => all.every((c) => c.status === 'enriched' || c.status === 'draft'),
      { intervalMs: 250 },
    );

    for (const org of orgs) {
      const mine = finals.filter((c) => c.org === org);
      let charged = 0;
      for (const c of mine) {
        const { charged: net } = await ledgerOf(org.organizationId, c.campaignId);
        // Exactly one attempt's charge for an enriched campaign (every account has a contact), none for a draft.
        expect(net, `${context}: ${c.campaignId} ${c.status}`).toBe(c.status === 'enriched' ? ACCOUNTS_PER_CAMPAIGN : 0);
        charged += net;
      }
      const audit = await ledger().audit(org.organizationId);
      expect(audit, context).toMatchObject({ balance: CREDITS - charged, ledgerSum: CREDITS - charged });
      expect((await organizations().get(org.organizationId))!.enrichingAccounts, context).toBe(0);
    }
    // The race really happened: some cancels won, and some campaigns still completed.
    expect(
      cancels.some((c) => c.outcome === 'canceled'),
      context,
    ).toBe(true);
  });
});

describe('repeat enrich on a running attempt', () => {
  /** A launch whose Lambda "died" between the charge and StartExecution: enriching, charged, no execution. */
  async function launchedWithoutExecution() {
    const list = activeAccounts(uniquePrefix(), 2);
    await importAccounts(list);
    const org = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      list.map((a) => a.accountId),
    );
    const noStart: WorkflowPort = { ...workflow(), start: async (input) => workflow().executionArnOf(input.attemptId) };
    const launched = await enrichCampaign({ ...launchDependencies(org.organizationId), workflow: noStart }, org.organizationId, campaignId);
    expect(launched.status).toBe('enriching');
    const attempt = (await campaigns().get(org.organizationId, campaignId))!.attempt!;
    return { org, campaignId, attempt };
  }

  it('never resumes an attempt an operator is canceling: answers the campaign as it is and starts nothing', async () => {
    const { org, campaignId, attempt } = await launchedWithoutExecution();
    expect(await enrichment().requestCancel(org.organizationId, campaignId, attempt.id, new Date())).toBe(true);

    const repeat = await enrich(api(), org.apiKey, campaignId);
    expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
    expect(repeat.data).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 8 } });
    expect(await workflow().status(attempt.executionArn)).toBe('MISSING');

    expect(await cancelEnrichment(cancelDeps(), campaignId)).toEqual({ campaignId, status: 'canceled' });
    expect(await ledger().audit(org.organizationId)).toMatchObject({ balance: 10, ledgerSum: 10 });
    expect((await organizations().get(org.organizationId))!.enrichingAccounts).toBe(0);
  });

  it('answers the campaign as it is without (re)starting the execution; the reconciler starts a lost one, which completes charged once', async () => {
    const { org, campaignId, attempt } = await launchedWithoutExecution();
    let starts = 0;
    const counting: WorkflowPort = { ...workflow(), start: async (input) => (starts++, workflow().start(input)) };
    const repeat = await enrichCampaign({ ...launchDependencies(org.organizationId), workflow: counting }, org.organizationId, campaignId);
    expect(repeat).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 8 } });
    expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
    expect(starts).toBe(0);
    expect(await workflow().status(attempt.executionArn)).toBe('MISSING');
    // The reconciler (lib/enrichment/reconcile.ts) starts the lost execution; it completes, charged once.
    const report = await reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId: org.organizationId });
    expect(report.repairs.map((r) => r.action)).toEqual(['started']);
    await pollUntil(
      () => getCampaign(api(), org.apiKey, campaignId),
      (r) => r.data.status === 'enriched',
    );
    expect((await ledgerOf(org.organizationId, campaignId)).charged).toBe(2);
  });
});
