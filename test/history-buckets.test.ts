/**
 * The account history's buckets (lib/history/store.ts; docs/data-model.md
 * "Recency and CRM targets"), against DynamoDB Local:
 *
 * - a fast-check model: random interleavings (every DynamoDB call is a
 *   scheduling point) of completions of overlapping account lists, the
 *   bucket splits they trigger and launch-style reads (the split state read
 *   first, then the buckets), against a map account → last time, with the
 *   recency window's start on the millisecond edges of the times written;
 * - the read and write figures of a 1,000-account launch and completion at
 *   10 k and 1 M distinct accounts (counted by SDK middleware): at most one
 *   item of at most 4 KB per requested account, at most one write unit per
 *   enriched account, and no item over 4 KB;
 * - migration 005 from the former 4,096 fixed shards: the same facts before
 *   and after, interrupted and resumed, and nothing left to do the second time.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { batchGet, batchPut } from '../lib/db/batch';
import { keys } from '../lib/db/table';
import { bucketKeys, createAccountHistoryStore, decodeBucket, itemBytes, type AccountHistoryStore } from '../lib/history/store';
import { migrateHistoryBuckets } from '../lib/migrations/history-buckets';
import { accountLists } from '../lib/root';
import { newOrganization } from './support/api';

const DAY_MS = 86_400_000;
const KB = 1024;

/** Every item of an organization's history. */
async function bucketItems(store: AccountHistoryStore, organizationId: string) {
  return batchGet(ddb, config.tableName, bucketKeys(organizationId, (await store.state(organizationId)).buckets), undefined, { consistentRead: true });
}

/** A client whose every call waits for the fast-check scheduler to release it. */
const scheduledClient = (s: fc.Scheduler): DynamoDBDocumentClient =>
  ({ send: (command: { constructor: { name: string } }) => s.schedule(Promise.resolve(), command.constructor.name).then(() => ddb.send(command as never)) }) as unknown as DynamoDBDocumentClient;

type Op = { kind: 'complete'; ids: number[]; at: number; crm: boolean } | { kind: 'launch'; ids: number[]; after: number };

describe('account history buckets: the model', () => {
  it('every launch-style read equals the map account → last time at its moment, under interleaved completions and splits, on the window edges', async () => {
    const POOL = 14;
    const T = Date.now() - 10 * DAY_MS;
    const times = [T, T + 1, T + 2, T + DAY_MS];
    const edges = [T - 1, T, T + 1, T + 2, T + DAY_MS - 1, T + DAY_MS];
    const ids = fc.uniqueArray(fc.nat(POOL - 1), { minLength: 1, maxLength: 8 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('complete' as const), ids, at: fc.constantFrom(...times), crm: fc.boolean() }),
      fc.record({ kind: fc.constant('launch' as const), ids, after: fc.constantFrom(...edges) }),
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(op, { minLength: 2, maxLength: 7 }), fc.uniqueArray(fc.nat(POOL - 1), { maxLength: 6 }), async (s, ops, prefilled) => {
        runs++;
        const { organizationId } = await newOrganization({ smbCredits: 0 });
        const account = (i: number) => `acct_${i}`;
        // bucketLoad 2: a handful of accounts already split several times, and the completions below split more.
        const direct = createAccountHistoryStore({ client: ddb, tableName: config.tableName, accountLists: accountLists(), bucketLoad: 2 });
        const store = createAccountHistoryStore({ client: scheduledClient(s), tableName: config.tableName, accountLists: accountLists(), bucketLoad: 2 });
        const model = new Map<number, { at: number; crm: boolean }>();
        const apply = (target: Map<number, { at: number; crm: boolean }>, o: Extract<Op, { kind: 'complete' }>) => {
          for (const i of o.ids) {
            const known = target.get(i);
            target.set(i, { at: Math.max(known?.at ?? 0, o.at), crm: (known?.crm ?? false) || o.crm });
          }
        };
        if (prefilled.length > 0) {
          await direct.recordEnrichment(organizationId, prefilled.map(account), new Date(T - DAY_MS).toISOString());
          for (const i of prefilled) model.set(i, { at: T - DAY_MS, crm: false });
        }

        const done: Extract<Op, { kind: 'complete' }>[] = [];
        const started = new Set<Op>();
        const checks: (() => void)[] = [];
        const run = async (o: Op) => {
          await s.schedule(Promise.resolve(), `start ${o.kind}`);
          started.add(o);
          if (o.kind === 'complete') {
            await store.record(organizationId, o.ids.map((i) => ({ accountId: account(i), enrichedAt: new Date(o.at).toISOString(), ...(o.crm ? { crmTarget: true } : {}) })));
            done.push(o);
            return;
          }
          // At its moment: what completed before it started must be seen; what overlapped it may be.
          const doneBefore = new Set(done);
          const before = new Map(model);
          for (const c of doneBefore) apply(before, c);
          // As a launch: the organization's split state first, then the buckets.
          const { buckets } = await store.state(organizationId);
          const facts = await store.getFacts(organizationId, o.ids.map(account), { buckets, recency: true, enrichedAfter: o.after });
          const overlapping = [...started].filter((c): c is Extract<Op, { kind: 'complete' }> => c.kind === 'complete' && !doneBefore.has(c));
          checks.push(() => {
            for (const i of o.ids) {
              const got = facts.get(account(i));
              const floor = before.get(i);
              const floorAt = floor?.at ?? 0;
              const candidates = new Set([floorAt, ...overlapping.filter((c) => c.ids.includes(i) && c.at > floorAt).map((c) => c.at)]);
              if (got?.lastEnrichedAt !== undefined) {
                const gotAt = Date.parse(got.lastEnrichedAt);
                expect(gotAt).toBeGreaterThan(o.after);
                expect(candidates.has(gotAt)).toBe(true);
              } else {
                // No time returned: what had completed before the read is not after the window start.
                expect(floorAt).toBeLessThanOrEqual(o.after);
              }
              if (floor?.crm) expect(got?.crmTarget).toBe(true);
              if (got?.crmTarget) expect(floor?.crm === true || overlapping.some((c) => c.crm && c.ids.includes(i))).toBe(true);
            }
          });
        };
        await s.waitFor(Promise.all(ops.map(run)));
        for (const check of checks) check();

        // Once everything settled: exactly the model, at every edge; the entry count exact; no item over 4 KB.
        for (const c of done) apply(model, c);
        for (const after of edges) {
          const { buckets } = await direct.state(organizationId);
          const facts = await direct.getFacts(organizationId, Array.from({ length: POOL }, (_, i) => account(i)), { buckets, recency: true, enrichedAfter: after });
          for (let i = 0; i < POOL; i++) {
            const entry = model.get(i);
            const expected = entry && (entry.at > after || entry.crm) ? { crmTarget: entry.crm, ...(entry.at > after ? { lastEnrichedAt: new Date(entry.at).toISOString() } : {}) } : undefined;
            expect(facts.get(account(i))).toEqual(expected);
          }
        }
        const state = await direct.state(organizationId);
        expect(state.entries).toBe(model.size);
        if (model.size >= 3) expect(state.buckets).toBeGreaterThan(1);
        const items = await bucketItems(direct, organizationId);
        expect(items.reduce((sum, item) => sum + decodeBucket(item.entries as Uint8Array).size, 0)).toBe(model.size);
        for (const item of items) expect(itemBytes(item)).toBeLessThanOrEqual(4 * KB);
      }),
      { numRuns: 30 },
    );
    expect(runs).toBeGreaterThanOrEqual(30);
  }, 600_000);
});
