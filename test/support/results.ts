/**
 * Helpers of the tests of results as they arrive (test/results.test.ts,
 * test/results-stream.test.ts): numbered campaigns of several workflow
 * batches, and a warehouse whose batches the test lets through one by one.
 */
import { afterEach } from 'vitest';
import type { Warehouse } from '../../lib/warehouse/warehouse';
import { embeddedWarehouse, useWarehouse } from '../../lib/root';
import { account, contact, gate, pollUntil, type Gate } from '../enrichment/support';

afterEach(() => useWarehouse(undefined));

/** Accounts per workflow batch (lib/enrichment/workflow.ts ENRICHMENT_BATCH_SIZE), spelled out: the test builds campaigns of several batches. */
export const BATCH = 1_000;

afterEach(() => useWarehouse(undefined));

/** A warehouse whose contact reads (one per workflow batch) each wait for the test to let that batch through. */
export function gatedWarehouse(batchOf: (firstAccountId: string) => number) {
  const inner = embeddedWarehouse();
  const gates = new Map<number, Gate>();
  const gateOf = (batch: number) => gates.get(batch) ?? gates.set(batch, gate()).get(batch)!;
  const arrived = new Set<number>();
  let failing = new Set<number>();
  const warehouse: Warehouse = {
    getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
    async getAccounts(ids, known) {
      const batch = batchOf(ids[0]!);
      arrived.add(batch);
      await gateOf(batch).promise;
      if (failing.has(batch)) throw new Error(`Injected failure of batch ${batch}`);
      return inner.getAccounts(ids, known);
    },
  };
  return {
    warehouse,
    release: (batch: number) => gateOf(batch).open(),
    fail: (batches: number[]) => (failing = new Set(batches)),
    arrived: (n: number) =>
      pollUntil(
        async () => arrived.size,
        (size) => size >= n,
      ),
  };
}

/** `count` active accounts `<prefix>_<i>` (i zero-padded, so the eligible list's order is the index order), one contact each. */
export const numbered = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    account(`${prefix}_${String(i).padStart(5, '0')}`, 'active', [
      contact(`${prefix}_${String(i).padStart(5, '0')}_c`, { mobile: i % 2 === 0 }),
    ]),
  );
export const indexOf = (accountId: string) => Number(accountId.slice(accountId.lastIndexOf('_') + 1));

export interface Item {
  seq: number;
  accountId: string;
  outcome: string;
  account: Record<string, unknown>;
  contacts: Record<string, unknown>[];
}
