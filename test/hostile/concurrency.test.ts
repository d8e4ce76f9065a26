/**
 * Randomized interleavings (issue item 3): creates, launches, operator
 * cancels, exports, credit top-ups (and debits) and capacity changes over
 * several organizations at once, through HTTP and the operator functions,
 * with the real workflow running (contact steps delayed at random, some
 * failing). fast-check draws the program: which command, for which
 * organization and campaign, and how commands group into concurrent waves
 * with random start offsets.
 *
 * While the program runs, a sampler reads every organization item (strongly
 * consistent) and checks that no balance is ever negative and the ceiling is
 * never exceeded (capacity changes here only widen the headroom: the ceiling
 * is raised, accounts enriching elsewhere are lowered, one change at a time
 * per organization). Once every attempt has ended, the invariants of
 * invariants.ts must hold for every organization.
 */
import fc from 'fast-check';
import pMap from 'p-map';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelEnrichment } from '../../lib/enrichment/cancel';
import {
  accountHistory,
  campaigns,
  embeddedWarehouse,
  enrichment,
  ledger as creditLedger,
  organizations,
  useWarehouse,
  workflow,
} from '../../lib/root';
import type { Warehouse } from '../../lib/warehouse/warehouse';
import { newOrganization, useApi } from '../support/api';
import { account, contact, importAccounts, uniquePrefix } from '../enrichment/support';
import { OPERATIONS, envelopeViolations, sendJson, type OperationName } from './support/contract';
import { checkInvariants, waitUntilSettled, type OrganizationBook } from './support/invariants';

const api = useApi();

/** Scales every property's run count (HOSTILE_RUNS_SCALE=5 for a deeper, slower pass; default 1). */
const runs = (n: number) => Math.max(1, Math.round(n * Number(process.env.HOSTILE_RUNS_SCALE ?? 1)));

afterEach(() => useWarehouse(undefined));

const POOL = { c: 24, n: 8, x: 4, u: 4, f: 3 } as const;
type Bucket = keyof typeof POOL;

/**
 * The embedded warehouse with random latency (so cancels and launches land
 * mid-attempt) and failing contact lookups for `<prefix>_f_*` accounts (so
 * some attempts fail and are compensated by the workflow).
 */
function slowWarehouse(prefix: string, delays: number[]): Warehouse {
  const inner = embeddedWarehouse();
  let i = 0;
  const delay = (floor: number) => new Promise((r) => setTimeout(r, floor + delays[i++ % delays.length]!));
  return {
    async getAccountStatuses(ids) {
      await delay(0);
      return inner.getAccountStatuses(ids);
    },
    async getAccounts(ids) {
      // Every contact step takes at least 100 ms: an attempt is in flight long enough to be canceled.
      await delay(100);
      if (ids.some((id) => id.startsWith(`${prefix}_f_`))) throw new Error('Injected: the contact source failed for this batch');
      return inner.getAccounts(ids);
    },
  };
}

type Command =
  | { kind: 'create'; org: number; picks: Record<Bucket, number[]>; days: number | null }
  | { kind: 'enrich' | 'cancel' | 'export' | 'get'; org: number; pick: number }
  | { kind: 'list'; org: number }
  | { kind: 'topup'; org: number; delta: number }
  | { kind: 'capacity'; org: number; raise: number; lowerExternal: number };

const ORGS = 3;
const org = fc.integer({ min: 0, max: ORGS - 1 });
const picks = (bucket: Bucket, max: number) => fc.uniqueArray(fc.nat({ max: POOL[bucket] - 1 }), { maxLength: max });
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      org,
      picks: fc.record({ c: picks('c', 6), n: picks('n', 3), x: picks('x', 2), u: picks('u', 2), f: picks('f', 1) }),
      days: fc.constantFrom(null, 0, 30),
    }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('enrich' as const), org, pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), org, pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('export' as const), org, pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('get' as const), org, pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('list' as const), org }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('topup' as const), org, delta: fc.integer({ min: -25, max: 60 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('capacity' as const),
      org,
      raise: fc.integer({ min: 0, max: 15 }),
      lowerExternal: fc.integer({ min: 0, max: 5 }),
    }),
  },
);

const program = fc.record({
  commands: fc.array(command, { minLength: 16, maxLength: 30 }),
  waves: fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 12 }),
  offsets: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 16 }),
  delays: fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 16 }),
  orgs: fc.array(
    fc.record({
      credits: fc.integer({ min: 10, max: 80 }),
      ceiling: fc.integer({ min: 8, max: 40 }),
      external: fc.integer({ min: 0, max: 6 }),
    }),
    { minLength: ORGS, maxLength: ORGS },
  ),
});

describe('randomized interleavings over several organizations', () => {
  it('never a negative balance, never over the ceiling; afterwards the ledger, the charges, the capacity and every state agree', async () => {
    const stats = { runs: 0, commands: 0, launched: 0, refused: 0, canceled: 0, failed: 0, enriched: 0, exports: 0 };
    await fc.assert(
      fc.asyncProperty(program, async ({ commands, waves, offsets, delays, orgs: orgSpecs }) => {
        stats.runs++;
        const p = uniquePrefix();
        const id = (bucket: Bucket, i: number) => `${p}_${bucket}_${i}`;
        await importAccounts([
          ...Array.from({ length: POOL.c }, (_, i) =>
            account(id('c', i), 'active', [
              contact(`${id('c', i)}_1`, { mobile: i % 2 === 0 }),
              ...(i % 3 === 0 ? [contact(`${id('c', i)}_2`)] : []),
            ]),
          ),
          ...Array.from({ length: POOL.n }, (_, i) => account(id('n', i), 'active', [])),
          ...Array.from({ length: POOL.x }, (_, i) =>
            account(id('x', i), i % 2 === 0 ? 'closed' : 'inactive', [contact(`${id('x', i)}_1`)]),
          ),
          ...Array.from({ length: POOL.f }, (_, i) => account(id('f', i), 'active', [contact(`${id('f', i)}_1`)])),
        ]);
        useWarehouse(slowWarehouse(p, delays));

        const books: (OrganizationBook & {
          maxEnriching: number;
          external: number;
          campaignIds: string[];
          launched: string[];
          chain: Promise<unknown>;
        })[] = [];
        for (const spec of orgSpecs) {
          const created = await newOrganization({ name: `Interleaved ${p}`, smbCredits: spec.credits, maxEnrichingAccounts: spec.ceiling });
          await organizations().setCapacity(created.organizationId, { externalEnrichingAccounts: spec.external });
          await accountHistory().addCrmTargets(created.organizationId, [id('c', 0), id('c', 1)]);
          books.push({
            ...created,
            startingBalance: spec.credits,
            adjustments: 0,
            maxEnriching: spec.ceiling,
            external: spec.external,
            campaignIds: [],
            launched: [],
            chain: Promise.resolve(),
          });
        }
        // Every organization starts with three drafts, so the first wave already has something to launch.
        // The first one's contact step fails (a failing attempt in every run).
        const seeds: { failing: string; canceled: string; exported: string }[] = [];
        for (const book of books) {
          for (let i = 0; i < 3; i++) {
            const accountIds = [id('c', 3 + i * 3), id('c', 4 + i * 3), id('n', i), ...(i === 0 ? [id('f', 0)] : [])];
            const res = await sendJson(api(), OPERATIONS.create, book.apiKey, { name: `seed${i}`, accountIds });
            book.campaignIds.push(res.body.data.id);
          }
          seeds.push({ failing: book.campaignIds[0]!, canceled: book.campaignIds[1]!, exported: book.campaignIds[2]! });
        }
        const violations: string[] = [];
        const canceled: { organizationId: string; campaignId: string }[] = [];

        // The sampler: balances never negative, the ceiling never exceeded, API enrichments never negative.
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            for (const book of books) {
              const o = await organizations().get(book.organizationId);
              if (!o) continue;
              if (o.smbCredits < 0) violations.push(`${book.organizationId}: balance ${o.smbCredits} < 0`);
              if (o.enrichingAccounts > o.maxEnrichingAccounts)
                violations.push(`${book.organizationId}: ${o.enrichingAccounts} enriching > ceiling ${o.maxEnrichingAccounts}`);
              if (o.enrichingAccounts < o.externalEnrichingAccounts)
                violations.push(
                  `${book.organizationId}: enrichingAccounts ${o.enrichingAccounts} below external ${o.externalEnrichingAccounts}`,
                );
            }
            await new Promise((r) => setTimeout(r, 20));
          }
        })();

        const checkAnswer = (
          op: OperationName,
          res: Awaited<ReturnType<typeof sendJson>>,
          book: (typeof books)[number],
          context: unknown,
        ) => {
          const v = envelopeViolations(op, res);
          if (v.length > 0) violations.push(`${v.join('; ')} ← ${JSON.stringify(context)}`);
          // Isolation under concurrency: an answer never names a campaign of another organization.
          for (const other of books)
            if (other !== book)
              for (const cid of other.campaignIds)
                if (res.text.includes(cid)) violations.push(`${op} of ${book.organizationId} shows ${cid} of ${other.organizationId}`);
        };

        const run = async (cmd: Command, offset: number) => {
          await new Promise((r) => setTimeout(r, offset));
          stats.commands++;
          const book = books[cmd.org]!;
          const pickOf = (pick: number) => (book.campaignIds.length === 0 ? undefined : book.campaignIds[pick % book.campaignIds.length]);
          // Cancels aim at campaigns launched lately (they are the ones still enriching).
          const recentLaunch = (pick: number) =>
            book.launched.length === 0
              ? pickOf(pick)
              : book.launched[book.launched.length - 1 - (pick % Math.min(3, book.launched.length))];
          switch (cmd.kind) {
            case 'create': {
              const accountIds = (Object.keys(cmd.picks) as Bucket[]).flatMap((bucket) => cmd.picks[bucket].map((i) => id(bucket, i)));
              if (accountIds.length === 0) accountIds.push(id('c', 2));
              const res = await sendJson(api(), OPERATIONS.create, book.apiKey, {
                name: `c${book.campaignIds.length}`,
                accountIds,
                excludeEnrichedWithinDays: cmd.days,
              });
              checkAnswer('create', res, book, cmd);
              if (res.status === 200) book.campaignIds.push(res.body.data.id);
              else violations.push(`create answered ${res.status}: ${res.text.slice(0, 200)}`);
              return;
            }
            case 'enrich': {
              const campaignId = pickOf(cmd.pick);
              if (!campaignId) return;
              const res = await sendJson(api(), OPERATIONS.enrich, book.apiKey, { campaignId });
              checkAnswer('enrich', res, book, cmd);
              if (res.status === 200) {
                stats.launched++;
                book.launched.push(campaignId);
                if (res.body.data.status !== 'enriching') violations.push(`enrich answered 200 with status ${res.body.data.status}`);
              } else stats.refused++;
              return;
            }
            case 'cancel': {
              const campaignId = recentLaunch(cmd.pick);
              if (!campaignId) return;
              try {
                const result = await cancelEnrichment(
                  { campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() },
                  campaignId,
                );
                if (result.status === 'canceled') {
                  stats.canceled++;
                  canceled.push({ organizationId: book.organizationId, campaignId });
                }
              } catch (error) {
                // Only an enriching campaign can be canceled (README.md#operator-cli); anything else is a failure of the cancel.
                if (!/only an enriching campaign can be canceled/.test((error as Error).message))
                  violations.push(`cancel failed: ${(error as Error).stack}`);
              }
              return;
            }
            case 'export': {
              // Any campaign launched so far (the older ones are likely enriched by now).
              const campaignId = book.launched.length > 0 ? book.launched[cmd.pick % book.launched.length] : pickOf(cmd.pick);
              if (!campaignId) return;
              const res = await sendJson(api(), OPERATIONS.export, book.apiKey, { campaignId, maxContactsPerAccount: 1 });
              checkAnswer('export', res, book, cmd);
              if (res.status === 200) stats.exports++;
              return;
            }
            case 'get': {
              const campaignId = pickOf(cmd.pick);
              if (!campaignId) return;
              const res = await sendJson(api(), OPERATIONS.get, book.apiKey, { campaignId });
              checkAnswer('get', res, book, cmd);
              if (res.status !== 200 || res.body.data.id !== campaignId) violations.push(`get of its own campaign answered ${res.status}`);
              return;
            }
            case 'list': {
              const res = await sendJson(api(), OPERATIONS.list, book.apiKey, { limit: 100 });
              checkAnswer('list', res, book, cmd);
              return;
            }
            case 'topup': {
              try {
                await creditLedger().adjust(book.organizationId, cmd.delta);
                book.adjustments += cmd.delta;
              } catch (error) {
                // A debit larger than the balance is refused (README: never below 0) and moves nothing.
                if (!(error instanceof RangeError) || cmd.delta >= 0)
                  violations.push(`credit adjustment failed: ${(error as Error).message}`);
              }
              return;
            }
            case 'capacity': {
              // One change at a time per organization, each only widening the headroom.
              const change = book.chain.then(async () => {
                book.maxEnriching += cmd.raise;
                book.external = Math.max(0, book.external - cmd.lowerExternal);
                await organizations().setCapacity(book.organizationId, {
                  maxEnrichingAccounts: book.maxEnriching,
                  externalEnrichingAccounts: book.external,
                });
              });
              book.chain = change.catch(() => undefined);
              await change;
              return;
            }
          }
        };

        // Alongside the first wave, in every organization: a launch that will fail, a launch canceled while it
        // runs, and a launch exported as soon as it reads enriched (while the later waves run).
        const exportedSeed = async (book: (typeof books)[number], i: number) => {
          const campaignId = seeds[i]!.exported;
          const launched = await sendJson(api(), OPERATIONS.enrich, book.apiKey, { campaignId });
          checkAnswer('enrich', launched, book, 'fixed exported launch');
          if (launched.status !== 200) return;
          stats.launched++;
          book.launched.push(campaignId);
          const deadline = Date.now() + 10_000;
          while (Date.now() < deadline && (await campaigns().get(book.organizationId, campaignId))?.status === 'enriching')
            await new Promise((r) => setTimeout(r, 50));
          const res = await sendJson(api(), OPERATIONS.export, book.apiKey, { campaignId });
          checkAnswer('export', res, book, 'fixed export');
          if (res.status === 200) stats.exports++;
        };
        const fixed = books.map(async (book, i) => {
          const exporting = exportedSeed(book, i);
          const failing = await sendJson(api(), OPERATIONS.enrich, book.apiKey, { campaignId: seeds[i]!.failing });
          checkAnswer('enrich', failing, book, 'fixed failing launch');
          if (failing.status === 200) {
            stats.launched++;
            book.launched.push(seeds[i]!.failing);
          }
          const launched = await sendJson(api(), OPERATIONS.enrich, book.apiKey, { campaignId: seeds[i]!.canceled });
          checkAnswer('enrich', launched, book, 'fixed canceled launch');
          if (launched.status !== 200) return void (await exporting);
          stats.launched++;
          book.launched.push(seeds[i]!.canceled);
          try {
            const result = await cancelEnrichment(
              { campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() },
              seeds[i]!.canceled,
            );
            if (result.status === 'canceled') {
              stats.canceled++;
              canceled.push({ organizationId: book.organizationId, campaignId: seeds[i]!.canceled });
            }
          } catch (error) {
            // A random cancel of the same campaign may have been first.
            if (!/only an enriching campaign can be canceled/.test((error as Error).message))
              violations.push(`cancel failed: ${(error as Error).stack}`);
          }
          await exporting;
        });
        let next = 0;
        for (let w = 0; next < commands.length; w++) {
          const size = waves[w % waves.length]!;
          const wave = commands.slice(next, next + size);
          await Promise.all([...wave.map((cmd, i) => run(cmd, offsets[(next + i) % offsets.length]!)), ...(w === 0 ? fixed : [])]);
          next += size;
        }

        const pending = await waitUntilSettled(books, new Map(books.map((b) => [b.organizationId, b.campaignIds])), 30_000);
        sampling = false;
        await sampler;
        if (pending.length > 0) violations.push(`still enriching 30 s after the last command: ${pending.join(', ')}`);

        const report = await checkInvariants(api(), books, { settled: true, quiescent: true, checkCeiling: true });
        violations.push(...report.violations);
        stats.enriched += report.byStatus.enriched ?? 0;
        for (const { organizationId, campaignId } of canceled) {
          const ledger = await creditLedger().entriesOf(organizationId, campaignId);
          if (!ledger.some((e) => e.kind === 'refund' && e.reason === 'canceled'))
            violations.push(`${campaignId}: canceled without a canceled refund in its ledger`);
        }
        const failed = await pMap(
          books.flatMap((b) => b.campaignIds.map((c) => [b.organizationId, c] as const)),
          ([o, c]) => creditLedger().entriesOf(o, c),
          { concurrency: 16 },
        );
        stats.failed += failed.flat().filter((e) => e.reason === 'failed').length;
        useWarehouse(undefined);
        if (violations.length > 0) throw new Error(violations.slice(0, 30).join('\n'));
      }),
      { numRuns: runs(4), endOnFailure: true },
    );
    // The runs exercised what they claim to: launches, refusals, cancels, failures, completions and exports.
    console.info(`interleavings: ${JSON.stringify(stats)}`);
    expect(stats.launched).toBeGreaterThan(0);
    expect(stats.refused).toBeGreaterThan(0);
    expect(stats.enriched).toBeGreaterThan(0);
    expect(stats.canceled).toBeGreaterThan(0);
    expect(stats.failed).toBeGreaterThan(0);
    expect(stats.exports).toBeGreaterThan(0);
  });
});
