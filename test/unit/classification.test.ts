/**
 * Unit tests of launch evaluation (docs/launch.md;
 * docs/launch.md): the recency window, the bucket of one account, and the counts of a
 * whole list. `evaluateLaunch` takes its reads as ports; here they are plain
 * in-memory objects, so only the rule itself is under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classifyAccount,
  evaluateLaunch,
  recencyCutoff,
  type AccountBucket,
  type EvaluationDependencies,
} from '../../lib/enrichment/evaluate';
import type { AccountFacts } from '../../lib/history/store';
import type { AccountStatus } from '../../lib/warehouse/schema';
import { blankAccount } from '../../lib/warehouse/schema';

const DAY_MS = 86_400_000;
const NOW = new Date('2025-06-15T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** What the world knows of the accounts of one evaluation. */
interface World {
  statuses: Map<string, AccountStatus>;
  facts: Map<string, AccountFacts>;
  /** Enriched campaigns whose per-account recording has not run yet. */
  pending?: { completedAt: string; accountIds: string[] }[];
}

/** In-memory ports over `world`, recording what the evaluation asked for. */
function portsOf(world: World) {
  /** `pendingPassed`: how many pending completions each history read was handed (their merge is the history store's: test/history-pending.test.ts). */
  const calls = { recencyOption: [] as (boolean | undefined)[], pendingPassed: [] as number[] };
  const pendingRecency = (world.pending ?? []).map((p, i) => ({
    campaignId: `camp_${i}`,
    completedAt: p.completedAt,
    eligibleObjectKey: `pending-${i}`,
  }));
  const deps: EvaluationDependencies = {
    warehouse: {
      getAccountStatuses: async (ids) =>
        new Map(
          ids
            .filter((id) => world.statuses.has(id))
            .map((id) => [
              id,
              {
                ...blankAccount(id),
                name: null,
                domain: null,
                status: world.statuses.get(id)!,
                industry: null,
                employeeCount: null,
                country: null,
              },
            ]),
        ),
      getAccounts: async () => {
        throw new Error('evaluation does not read contacts');
      },
    },
    accountHistory: {
      getFacts: async (_organizationId, ids, options) => {
        calls.recencyOption.push(options?.recency);
        calls.pendingPassed.push(options?.pending?.length ?? 0);
        const recency = options?.recency ?? true;
        const found = new Map<string, AccountFacts>();
        for (const id of ids) {
          const facts = world.facts.get(id);
          if (facts) found.set(id, recency ? { ...facts } : { crmTarget: facts.crmTarget });
        }
        return found;
      },
    },
  };
  return { deps, calls, pendingRecency };
}

/** The docs/launch.md rule, written independently of the product code. */
function expectedBucket(status: AccountStatus | undefined, facts: AccountFacts | undefined, days: number | null, now: Date): AccountBucket {
  if (status === undefined || status === 'closed' || status === 'inactive') return 'invalid';
  const windowStart = now.getTime() - (days ?? 0) * 86_400 * 1000;
  if (days && facts?.lastEnrichedAt && new Date(facts.lastEnrichedAt).getTime() > windowStart) return 'recentlyEnriched';
  if (facts?.crmTarget === true) return 'crmExcluded';
  return 'eligible';
}

describe('recencyCutoff', () => {
  it('is undefined (nothing excluded) for null and 0 days', () => {
    expect(recencyCutoff(null, NOW)).toBeUndefined();
    expect(recencyCutoff(0, NOW)).toBeUndefined();
  });

  it.each([1, 7, 30, 365])('is launch time − %i × 86,400 s', (days) => {
    expect(recencyCutoff(days, NOW)).toBe(NOW.getTime() - days * 86_400 * 1000);
  });
});

describe('classifyAccount (docs/launch.md precedence)', () => {
  const cutoff = NOW.getTime() - 30 * DAY_MS;
  const recent: AccountFacts = { lastEnrichedAt: iso(NOW.getTime() - DAY_MS), crmTarget: false };
  const recentCrm: AccountFacts = { ...recent, crmTarget: true };
  const oldCrm: AccountFacts = { lastEnrichedAt: iso(cutoff - DAY_MS), crmTarget: true };

  it.each([
    ['unknown to the warehouse', undefined, undefined, 'invalid'],
    ['unknown even when recent and a CRM target', undefined, recentCrm, 'invalid'],
    ['closed, recent and a CRM target', 'closed', recentCrm, 'invalid'],
    ['inactive, recent and a CRM target', 'inactive', recentCrm, 'invalid'],
    ['active, recent and a CRM target', 'active', recentCrm, 'recentlyEnriched'],
    ['active and recent', 'active', recent, 'recentlyEnriched'],
    ['active, enriched before the window, CRM target', 'active', oldCrm, 'crmExcluded'],
    ['active, never enriched, CRM target', 'active', { crmTarget: true }, 'crmExcluded'],
    ['active with no facts', 'active', undefined, 'eligible'],
    ['active, enriched before the window, not a CRM target', 'active', { ...oldCrm, crmTarget: false }, 'eligible'],
  ] as [string, AccountStatus | undefined, AccountFacts | undefined, AccountBucket][])('%s → %s', (_label, status, facts, bucket) => {
    expect(classifyAccount(status, facts, cutoff)).toBe(bucket);
  });

  it('excludes only enrichments completed strictly after the window start', () => {
    const at = (ms: number): AccountFacts => ({ lastEnrichedAt: iso(ms), crmTarget: false });
    expect(classifyAccount('active', at(cutoff), cutoff)).toBe('eligible');
    expect(classifyAccount('active', at(cutoff + 1), cutoff)).toBe('recentlyEnriched');
    expect(classifyAccount('active', at(cutoff - 1), cutoff)).toBe('eligible');
  });

  it('excludes nothing as recent without a window (0 or null days)', () => {
    expect(classifyAccount('active', recent, undefined)).toBe('eligible');
    expect(classifyAccount('active', recentCrm, undefined)).toBe('crmExcluded');
    expect(classifyAccount('closed', recent, undefined)).toBe('invalid');
  });

  it('agrees with the docs/launch.md rule for any status, facts and window', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<AccountStatus | undefined>(undefined, 'active', 'closed', 'inactive'),
        fc.option(
          fc.record({ lastEnrichedAt: fc.option(fc.integer({ min: -400, max: 2 }), { nil: undefined }), crmTarget: fc.boolean() }),
          { nil: undefined },
        ),
        fc.constantFrom(null, 0, 1, 7, 30, 90, 365),
        (status, raw, days) => {
          const facts: AccountFacts | undefined = raw && {
            crmTarget: raw.crmTarget,
            ...(raw.lastEnrichedAt === undefined ? {} : { lastEnrichedAt: iso(NOW.getTime() + raw.lastEnrichedAt * DAY_MS) }),
          };
          expect(classifyAccount(status, facts, recencyCutoff(days, NOW))).toBe(expectedBucket(status, facts, days, NOW));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('evaluateLaunch', () => {
  /** A generated world over distinct account IDs, with the list evaluated. */
  const worlds = fc.uniqueArray(fc.stringMatching(/^acc_[a-z0-9]{1,6}$/), { minLength: 0, maxLength: 40 }).chain((ids) =>
    fc.record({
      ids: fc.constant(ids),
      perAccount: fc.array(
        fc.record({
          status: fc.constantFrom<AccountStatus | undefined>(undefined, 'active', 'active', 'active', 'closed', 'inactive'),
          enrichedDaysAgo: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
          crmTarget: fc.boolean(),
        }),
        { minLength: ids.length, maxLength: ids.length },
      ),
      days: fc.constantFrom(null, 0, 1, 30, 90),
    }),
  );

  it('puts every requested account in exactly one bucket; total = the three buckets; eligible = requested − total', async () => {
    await fc.assert(
      fc.asyncProperty(worlds, async ({ ids, perAccount, days }) => {
        const world: World = { statuses: new Map(), facts: new Map() };
        ids.forEach((id, i) => {
          const a = perAccount[i]!;
          if (a.status) world.statuses.set(id, a.status);
          if (a.enrichedDaysAgo !== undefined || a.crmTarget) {
            world.facts.set(id, {
              crmTarget: a.crmTarget,
              ...(a.enrichedDaysAgo === undefined ? {} : { lastEnrichedAt: iso(NOW.getTime() - a.enrichedDaysAgo * DAY_MS + 1) }),
            });
          }
        });
        const { deps } = portsOf(world);
        const evaluation = await evaluateLaunch(deps, {
          organizationId: 'org_x',
          accountIds: ids,
          excludeEnrichedWithinDays: days,
          now: NOW,
        });

        const expected = { invalid: 0, recentlyEnriched: 0, crmExcluded: 0, eligible: [] as string[] };
        for (const id of ids) {
          const bucket = expectedBucket(world.statuses.get(id), world.facts.get(id), days, NOW);
          if (bucket === 'eligible') expected.eligible.push(id);
          else expected[bucket]++;
        }
        expect(evaluation.requested).toBe(ids.length);
        expect(evaluation.eligibleIds).toEqual(expected.eligible);
        expect(evaluation.excluded).toEqual({
          total: expected.invalid + expected.recentlyEnriched + expected.crmExcluded,
          invalid: expected.invalid,
          recentlyEnriched: expected.recentlyEnriched,
          crmExcluded: expected.crmExcluded,
        });
        expect(evaluation.excluded.total).toBe(
          evaluation.excluded.invalid + evaluation.excluded.recentlyEnriched + evaluation.excluded.crmExcluded,
        );
        expect(evaluation.eligibleIds.length).toBe(evaluation.requested - evaluation.excluded.total);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps eligible accounts in list order', async () => {
    const ids = ['z', 'a', 'm', 'b'];
    const { deps } = portsOf({ statuses: new Map(ids.map((id) => [id, 'active'])), facts: new Map([['m', { crmTarget: true }]]) });
    const evaluation = await evaluateLaunch(deps, { organizationId: 'org_x', accountIds: ids, excludeEnrichedWithinDays: null, now: NOW });
    expect(evaluation.eligibleIds).toEqual(['z', 'a', 'b']);
    expect(evaluation.excluded).toEqual({ total: 1, invalid: 0, recentlyEnriched: 0, crmExcluded: 1 });
  });

  it('reads no enrichment times and no pending campaigns without a window (0 or null days)', async () => {
    for (const days of [null, 0]) {
      const world: World = {
        statuses: new Map([['a', 'active']]),
        facts: new Map([['a', { crmTarget: false, lastEnrichedAt: iso(NOW.getTime() - 1000) }]]),
        pending: [{ completedAt: iso(NOW.getTime() - 1000), accountIds: ['a'] }],
      };
      const { deps, calls, pendingRecency } = portsOf(world);
      const evaluation = await evaluateLaunch(deps, {
        organizationId: 'org_x',
        accountIds: ['a'],
        excludeEnrichedWithinDays: days,
        now: NOW,
        pendingRecency,
      });
      expect(evaluation.eligibleIds).toEqual(['a']);
      expect(calls.recencyOption).toEqual([false]);
      expect(calls.pendingPassed).toEqual([0]);
    }
  });

  it('hands the completions still recording to the history read, inside a window', async () => {
    const world: World = {
      statuses: new Map([['a', 'active']]),
      facts: new Map(),
      pending: [{ completedAt: iso(NOW.getTime() - 2 * DAY_MS), accountIds: ['a'] }],
    };
    const { deps, calls, pendingRecency } = portsOf(world);
    await evaluateLaunch(deps, { organizationId: 'org_x', accountIds: ['a'], excludeEnrichedWithinDays: 30, now: NOW, pendingRecency });
    expect(calls.recencyOption).toEqual([true]);
    expect(calls.pendingPassed).toEqual([1]);
  });

  it('evaluates an empty list to zero everywhere', async () => {
    const { deps } = portsOf({ statuses: new Map(), facts: new Map() });
    expect(await evaluateLaunch(deps, { organizationId: 'org_x', accountIds: [], excludeEnrichedWithinDays: 30, now: NOW })).toEqual({
      requested: 0,
      eligibleIds: [],
      eligibleAccounts: [],
      buckets: [],
      excluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
    });
  });
});
