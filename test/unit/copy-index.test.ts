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
import { copyIndexItemsOf, copyIndexLevel, DIGESTS_PER_ITEM, MAX_COPY_INDEX_LEVEL } from '../../lib/privacy/copies';
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
/** No item past twice its average's bound (4 bytes an entry + about 200 of key and attributes). */
const MAX_ITEM_BYTES = 2 * (DIGESTS_PER_ITEM * 4 + 200);
const writeUnits = (items: Record<string, unknown>[]) => items.reduce((sum, item) => sum + Math.ceil(itemBytes(item) / 1024), 0);

describe('copy index items', () => {
  it('cost at most 0.02 write units per stored contact for a full workflow batch (1,000 accounts × 10 contacts), in 64 items', () => {
    const accounts = part(ENRICHMENT_BATCH_SIZE, 10);
    const items = copyIndexItemsOf(KEY, encodePart(accounts), 1);
    const contacts = ENRICHMENT_BATCH_SIZE * 10;
    const digests = contacts * 4; // contact ID, email, mobile phone, LinkedIn URL
    expect(items).toHaveLength(2 ** copyIndexLevel(digests));
    // The measured figure (docs/privacy.md states it): 64 items of ~625 entries (~2.7 KB) for 40,000 digests.
    expect(items).toHaveLength(64);
    for (const item of items) expect(itemBytes(item)).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    const perContact = writeUnits(items) / contacts;
    expect(perContact).toBeLessThanOrEqual(0.02);
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
      const entries = Buffer.from(item.entries as Uint8Array);
      const wanted = digest.readUInt32BE(4);
      expect(Array.from({ length: entries.length / 4 }, (_, i) => entries.readUInt32BE(i * 4))).toContain(wanted);
    }
  });

  it('write nothing for a part without a contact', () => {
    expect(copyIndexItemsOf(KEY, encodePart(part(5, 0)), 1)).toEqual([]);
  });
});
