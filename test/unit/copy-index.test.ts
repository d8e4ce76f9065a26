/**
 * The copy index's items (lib/privacy/copies.ts; docs/privacy.md "The
 * vendor's erasure"): a result part's identifier digests, split into buckets
 * by their first bits, one item per bucket. What they cost to write (item
 * sizes by DynamoDB's documented rule: attribute names plus values) per stored
 * contact, for the workflow's batch of 1,000 accounts × 10 contacts and for
 * small parts, and that every digest of the part is found in the item of its
 * bucket at the part's level.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  copyIndexEntries,
  copyIndexItemsOf,
  copyIndexLevel,
  DIGESTS_PER_ITEM,
  MAX_COPY_INDEX_LEVEL,
  riceDecode,
  riceEncode,
} from '../../lib/privacy/copies';
import * as keys from '../../lib/db/keys';
import { ENRICHMENT_BATCH_SIZE } from '../../lib/enrichment/workflow';
import { encodePart, resultPartKey, resultsPrefix } from '../../lib/results/parts';
import type { EnrichedAccount } from '../../lib/results/csv';
import { contactHashes } from '../../lib/warehouse/identifiers';
import { blankAccount, blankContact } from '../../lib/warehouse/schema';

const KEY = resultPartKey(resultsPrefix('org_2aBcDeFgHiJkLmNoPqRsTuV', 'cmp_2aBcDeFgHiJkLmNoPqRsTuV', 'att_2aBcDeFgHiJkLmNoPqRsTuV'), 12);

/** `accounts` accounts of `contacts` contacts each, every contact with an email, a mobile phone and a LinkedIn URL. */
const part = (accounts: number, contacts: number): EnrichedAccount[] =>
  Array.from({ length: accounts }, (_, a) => {
    const { status: _status, ...account } = { ...blankAccount(`acc_${a}`), name: `Company ${a}`, status: 'active' as const };
    return {
      ...account,
      contacts: Array.from({ length: contacts }, (_, c) => ({
        ...blankContact(`con_${a}_${c}`),
        email: `p${a}.${c}@x.example`,
        mobilePhone: `+1555${String(a * 100 + c).padStart(7, '0')}`,
        linkedinUrl: `https://linkedin.com/in/p-${a}-${c}`,
      })),
    };
  });

/** An item's size as DynamoDB bills it: each attribute's name plus its value (strings and binaries by length, numbers ≤ 21 bytes). */
const itemBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [name, value]) => {
    const bytes =
      typeof value === 'string'
        ? Buffer.byteLength(value)
        : value instanceof Uint8Array
          ? value.length
          : typeof value === 'number'
            ? 21
            : 0;
    return sum + Buffer.byteLength(name) + bytes;
  }, 0);
/** No item past twice its average's bound (4 bytes an entry, the most a Rice-coded entry takes here, + about 200 of key and attributes). */
const MAX_ITEM_BYTES = 2 * (DIGESTS_PER_ITEM * 4 + 200);
const writeUnits = (items: Record<string, unknown>[]) => items.reduce((sum, item) => sum + Math.ceil(itemBytes(item) / 1024), 0);

describe('copy index items', () => {
  it('cost at most 0.013 write units per stored contact for a full workflow batch (1,000 accounts × 10 contacts), in 32 items', () => {
    const accounts = part(ENRICHMENT_BATCH_SIZE, 10);
    const items = copyIndexItemsOf(KEY, encodePart(accounts), 1);
    const contacts = ENRICHMENT_BATCH_SIZE * 10;
    const digests = contacts * 4; // contact ID, email, mobile phone, LinkedIn URL
    expect(items).toHaveLength(2 ** copyIndexLevel(digests));
    // The measured figure (docs/privacy.md states it): 32 items of 1,250 Rice-coded entries (about 3.7 KB) for 40,000
    // digests, 128 write units; 4 bytes an entry took 64 items of 625 (2.7 KB), 192 write units (0.0192 a contact).
    expect(items).toHaveLength(32);
    for (const item of items) expect(itemBytes(item)).toBeLessThanOrEqual(4096);
    const perContact = writeUnits(items) / contacts;
    expect(perContact).toBeLessThanOrEqual(0.013);
  });

  it('take the next level when that bills fewer write units (an item is billed by whole KB)', () => {
    // 1,000 × 7 × 4 = 28,000 digests: copyIndexLevel says 5 (32 items of 875, about 2.7 KB: 3 units each, 96); level 6
    // would be 64 items of about 1.4 KB (2 units each, 128): level 5 stays. Every item's level is the one chosen.
    const items = copyIndexItemsOf(KEY, encodePart(part(ENRICHMENT_BATCH_SIZE, 7)), 1);
    const levels = new Set(items.map((item) => String(item.pk).split('#')[1]));
    expect(levels.size).toBe(1);
    expect(writeUnits(items)).toBeLessThanOrEqual(96);
  });

  it('write one item for a small part, and at most one per 100 contacts from 250 contacts up', () => {
    for (const [accounts, contacts] of [
      [1, 1],
      [2, 3],
      [10, 10],
      [100, 5],
      [333, 7],
      [700, 10],
    ] as const) {
      const items = copyIndexItemsOf(KEY, encodePart(part(accounts, contacts)), 1);
      const stored = accounts * contacts;
      if (stored * 4 <= DIGESTS_PER_ITEM) expect(items).toHaveLength(1);
      else expect(items.length / stored).toBeLessThanOrEqual(0.01);
      for (const item of items) expect(itemBytes(item)).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    }
  });

  it("hold every digest of the part in its bucket's item, at the part's level, under the part's key", () => {
    const accounts = part(300, 4);
    const items = copyIndexItemsOf(KEY, encodePart(accounts), 1234);
    const level = copyIndexLevel(300 * 4 * 4);
    expect(level).toBeGreaterThan(0);
    expect(level).toBeLessThanOrEqual(MAX_COPY_INDEX_LEVEL);
    const byPartition = new Map(items.map((item) => [String(item.pk), item]));
    for (const hash of accounts.flatMap((a) => a.contacts.flatMap(contactHashes))) {
      const digest = Buffer.from(hash, 'hex');
      const bucket = digest.readUInt16BE(0) >>> (16 - level);
      const item = byPartition.get(keys.copyIndexPartition(level, bucket))!;
      expect(item.sk).toBe(KEY);
      expect(item.ttl).toBe(1234);
      const wanted = digest.readUInt32BE(4);
      expect([...copyIndexEntries(item)]).toContain(wanted);
    }
  });

  it('write nothing for a part without a contact', () => {
    expect(copyIndexItemsOf(KEY, encodePart(part(5, 0)), 1)).toEqual([]);
  });
});

describe('Rice-coded entries', () => {
  it('decode to the ascending, distinct entries encoded, whatever their spread (fast-check)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 2 ** 32 - 1 }), { maxLength: 3_000 }), (values) => {
        const entries = Uint32Array.from(values.sort((a, b) => a - b));
        expect([...riceDecode(riceEncode(entries))]).toEqual([...entries]);
      }),
      { numRuns: 300 },
    );
  });

  it('decode the extremes: none, one at 0 and at 2^32 - 1, and neighbours', () => {
    for (const values of [[], [0], [2 ** 32 - 1], [0, 2 ** 32 - 1], [5, 6, 7, 8], [0, 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]]) {
      const entries = Uint32Array.from(values);
      expect([...riceDecode(riceEncode(entries))]).toEqual(values);
    }
  });

  it('take about 3 bytes an entry for 1,300 entries spread evenly (4 bytes each uncoded)', () => {
    const entries = Uint32Array.from({ length: 1_300 }, (_, i) => Math.floor((i * 2 ** 32) / 1_300) + (i % 7) * 1_000);
    expect(riceEncode(entries).length / entries.length).toBeLessThan(3.1);
  });

  it('refuse bytes cut short', () => {
    const coded = riceEncode(Uint32Array.from([1, 1_000, 1_000_000, 4_000_000_000]));
    expect(() => riceDecode(coded.subarray(0, coded.length - 2))).toThrow(RangeError);
  });

  it('are read from the items written before the coding (4 bytes an entry, `entries`)', () => {
    const entries = Buffer.alloc(12);
    [7, 70_000, 4_000_000_000].forEach((value, i) => entries.writeUInt32BE(value, i * 4));
    expect([...copyIndexEntries({ pk: 'COPIES#0#0', sk: KEY, type: 'copyIndex', entries, ttl: 1 })]).toEqual([7, 70_000, 4_000_000_000]);
  });
});
