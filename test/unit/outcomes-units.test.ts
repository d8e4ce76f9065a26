/**
 * Unit tests of the pure parts of quote and per-account outcomes (
 * docs/launch.md): the launch decision enrich and quote share, the chunk figures of
 * an evaluation, and the accounts pager over in-memory objects, checked
 * against a naive reference on generated lists (fast-check), including its
 * read cost: a page reads at most one chunk that gives it no account.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideLaunch, refusalOf } from '../../lib/enrichment/decision';
import { batchFigures, batchesOfChunk, chunkFigures, chunkOfEligible, type OutcomeManifest } from '../../lib/enrichment/outcomes';
import { listCampaignAccounts } from '../../lib/enrichment/accounts';
import { policyOf } from '../../lib/privacy/deliverable';
import { ACCOUNT_OUTCOMES, type AccountOutcome } from '../../lib/enrichment/account-outcome';
import type { AccountBucket } from '../../lib/enrichment/evaluate';
import type { CampaignRecord } from '../../lib/campaigns/model';

const excluded = { total: 3, invalid: 1, recentlyEnriched: 1, crmExcluded: 1 };

describe('decideLaunch (docs/launch.md refusal order)', () => {
  const org = (smbCredits: number, maxEnrichingAccounts: number, enrichingAccounts: number) => ({
    smbCredits,
    maxEnrichingAccounts,
    enrichingAccounts,
  });

  it('refuses no_eligible_accounts first, then insufficient_credits, then concurrency_limit_exceeded', () => {
    expect(decideLaunch({ requested: 3, eligible: 0, excluded }, org(0, 0, 5), 1).outcome).toBe('no_eligible_accounts');
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(1, 1, 1), 1).outcome).toBe('insufficient_credits');
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(2, 2, 1), 1).outcome).toBe('concurrency_limit_exceeded');
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(2, 3, 1), 1).outcome).toBe('launchable');
  });

  it('computes the figures in credits and accounts; the boundaries launch', () => {
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(3, 10, 4), 3)).toEqual({
      accounts: { requested: 5, eligible: 2, excluded },
      credits: { required: 6, available: 3, shortfall: 3 },
      enrichment: { maxEnrichingAccounts: 10, enrichingAccounts: 4, available: 6 },
      outcome: 'insufficient_credits',
    });
    // Exactly enough credits and exactly the ceiling: launchable.
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(6, 6, 4), 3).outcome).toBe('launchable');
    // Accounts enriching through other surfaces may exceed the ceiling: available never goes negative.
    expect(decideLaunch({ requested: 5, eligible: 2, excluded }, org(6, 3, 4), 3).enrichment.available).toBe(0);
  });

  it('maps each refusal to enrich’s error with the decision’s figures', () => {
    expect(refusalOf(decideLaunch({ requested: 5, eligible: 2, excluded }, org(2, 3, 1), 1))).toBeUndefined();
    expect(refusalOf(decideLaunch({ requested: 3, eligible: 0, excluded }, org(0, 0, 0), 1))?.toJSON()).toMatchObject({
      code: 'no_eligible_accounts',
      details: { requested: 3 },
    });
    expect(refusalOf(decideLaunch({ requested: 5, eligible: 2, excluded }, org(1, 9, 0), 2))?.toJSON()).toMatchObject({
      code: 'insufficient_credits',
      details: { available: 1, required: 4, shortfall: 3 },
    });
    expect(refusalOf(decideLaunch({ requested: 5, eligible: 2, excluded }, org(9, 2, 1), 1))?.toJSON()).toMatchObject({
      code: 'concurrency_limit_exceeded',
      details: { limit: 2, inFlight: 1, requested: 2 },
    });
  });
});

describe('chunk figures', () => {
  it('records per chunk the first eligible index and the exclusion buckets present', () => {
    const buckets: AccountBucket[] = ['invalid', 'eligible', 'eligible', 'crmExcluded', 'recentlyEnriched', 'invalid', 'eligible'];
    // Chunks [i e e], [c r i], [e]: masks 1, 4|2|1, 0.
    expect(chunkFigures(buckets, 3)).toEqual({ eligibleStarts: [0, 2, 2], excludedMask: '170' });
  });

  it('finds the chunk of an eligible account, skipping chunks without eligible accounts', () => {
    const starts = [0, 3, 3, 5];
    expect([0, 1, 2, 3, 4, 5, 6].map((e) => chunkOfEligible(starts, e))).toEqual([0, 0, 0, 2, 2, 3, 3]);
  });

  it('lists the workflow batches of a chunk and what a batch adds', () => {
    const manifest = { eligibleStarts: [0, 3, 3, 5], counts: { ...excluded, eligible: 7 }, batchSize: 2 };
    expect([0, 1, 2, 3].map((c) => batchesOfChunk(manifest, c))).toEqual([[0, 1], [], [1, 2], [2, 3]]);
    // Eligible accounts 2 (chunk 0, no contact) and 3 (chunk 2, 4 contacts).
    expect(batchFigures([0, 3, 3, 5], 2, [0, 4])).toEqual({
      found: 1,
      notFound: 1,
      contacts: 4,
      foundChunks: new Set([2]),
      notFoundChunks: new Set([0]),
    });
  });
});

const CODE: Record<AccountBucket, string> = { invalid: 'i', recentlyEnriched: 'r', crmExcluded: 'c', eligible: 'e' };
const EXCLUDED: Record<string, AccountOutcome> = { invalid: 'invalid', recentlyEnriched: 'recently_enriched', crmExcluded: 'crm_excluded' };

describe('the accounts pager', () => {
  it('returns every matching account exactly once, in order, in full pages, with an exact summary, reading at most one chunk in vain per page', async () => {
    const scenario = fc.record({
      buckets: fc.array(fc.constantFrom<AccountBucket>('invalid', 'recentlyEnriched', 'crmExcluded', 'eligible', 'eligible'), {
        minLength: 1,
        maxLength: 60,
      }),
      chunkSize: fc.integer({ min: 1, max: 7 }),
      batchSize: fc.integer({ min: 1, max: 6 }),
      contacts: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 60, maxLength: 60 }),
      done: fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
      attemptCurrent: fc.boolean(),
      wanted: fc.option(fc.subarray([...ACCOUNT_OUTCOMES], { minLength: 1 }), { nil: undefined }),
      limit: fc.integer({ min: 1, max: 10 }),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const ids = s.buckets.map((_, i) => `acc_${i}`);
        const { eligibleStarts, excludedMask } = chunkFigures(s.buckets, s.chunkSize);
        const eligible = s.buckets.filter((b) => b === 'eligible').length;
        const batches = Math.ceil(eligible / s.batchSize);
        const doneBatches = new Set(Array.from({ length: batches }, (_, b) => b).filter((b) => s.done[b]));
        const manifest: OutcomeManifest = {
          organizationId: 'org_1',
          campaignId: 'camp_1',
          evaluationId: 'att_1',
          evaluatedAt: '2026-01-01T00:00:00.000Z',
          requested: ids.length,
          chunkSize: s.chunkSize,
          batchSize: s.batchSize,
          counts: { total: ids.length - eligible, invalid: 0, recentlyEnriched: 0, crmExcluded: 0, eligible },
          eligibleStarts,
          excludedMask,
          found: 0,
          notFound: 0,
          contactsFound: 0,
          doneBatches,
          foundChunks: new Set(),
          notFoundChunks: new Set(),
        };
        for (const bucket of s.buckets) if (bucket !== 'eligible') manifest.counts[bucket]++;
        for (const b of doneBatches) {
          const figures = batchFigures(
            eligibleStarts,
            b * s.batchSize,
            s.contacts.slice(b * s.batchSize, Math.min(eligible, (b + 1) * s.batchSize)),
          );
          manifest.found += figures.found;
          manifest.notFound += figures.notFound;
          for (const c of figures.foundChunks) manifest.foundChunks.add(c);
          for (const c of figures.notFoundChunks) manifest.notFoundChunks.add(c);
        }

        // The naive reference: every account's outcome from the lists themselves.
        let e = 0;
        const reference = s.buckets.map((bucket, i) => {
          if (bucket !== 'eligible') return { accountId: ids[i]!, outcome: EXCLUDED[bucket]!, contactsFound: null };
          const index = e++;
          const batch = Math.floor(index / s.batchSize);
          if (!s.attemptCurrent || !doneBatches.has(batch))
            return { accountId: ids[i]!, outcome: 'pending' as AccountOutcome, contactsFound: null };
          const n = s.contacts[index]!;
          return { accountId: ids[i]!, outcome: (n > 0 ? 'found' : 'not_found') as AccountOutcome, contactsFound: n };
        });
        const wanted = new Set(s.wanted ?? ACCOUNT_OUTCOMES);
        const expected = reference.filter((row) => wanted.has(row.outcome));
        const summary = Object.fromEntries(ACCOUNT_OUTCOMES.map((o) => [o, reference.filter((row) => row.outcome === o).length]));

        let chunkReads: number[] = [];
        const deps = {
          cursorSecret: 'test-secret',
          campaigns: {
            getWithOrganization: async () => ({
              campaign: {
                status: 'enriching',
                createdVia: 'api',
                attempt: { id: s.attemptCurrent ? 'att_1' : 'att_other' },
              } as unknown as CampaignRecord,
            }),
          },
          outcomes: {
            manifest: async () => manifest,
            readChunk: async (_m: OutcomeManifest, c: number) => {
              chunkReads.push(c);
              const from = c * s.chunkSize;
              return {
                ids: ids.slice(from, from + s.chunkSize),
                outcomes: s.buckets
                  .slice(from, from + s.chunkSize)
                  .map((b) => CODE[b])
                  .join(''),
              };
            },
            readBatchContacts: async (_m: OutcomeManifest, b: number) => {
              if (!doneBatches.has(b)) throw new Error(`batch ${b} read before it was counted`);
              return s.contacts.slice(b * s.batchSize, Math.min(eligible, (b + 1) * s.batchSize));
            },
          },
          // No suppression in force: the counts come from the outcome objects, never from the result parts.
          deliveryPolicy: async () => policyOf(new Set()),
          results: {
            readBatchParts: async () => {
              throw new Error('no result part is read without suppressions');
            },
          },
        };
        const got: typeof expected = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          chunkReads = [];
          const page = await listCampaignAccounts(deps, 'org_1', {
            campaignId: 'camp_1',
            ...(s.wanted ? { filters: { outcome: s.wanted } } : {}),
            limit: s.limit,
            ...(cursor ? { cursor } : {}),
          });
          pages++;
          expect(page.summary).toEqual(summary);
          if (page.nextCursor) expect(page.accounts).toHaveLength(s.limit);
          expect(new Set(chunkReads).size).toBe(chunkReads.length);
          const contributing = new Set(page.accounts.map((row) => Math.floor(ids.indexOf(row.accountId) / s.chunkSize)));
          expect(chunkReads.length).toBeLessThanOrEqual(contributing.size + 1);
          got.push(...page.accounts);
          cursor = page.nextCursor ?? undefined;
        } while (cursor && pages < 100);
        expect(got).toEqual(expected);
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / s.limit)));
      }),
      { numRuns: 300 },
    );
  });
});
