/**
 * The history buckets' entry encoding (lib/history/store.ts `encodeBucket`;
 * docs/data-model.md "Recency and CRM targets"): format 3 gives back every
 * entry it was given (hashes whole, though it stores only the bytes the
 * bucket's depth does not imply), `lookupBucket` finds exactly the accounts
 * asked for that the bucket holds (binary search in format 3, a scan in the
 * unsorted format 2), format-1 items written before it still read, and
 * the bytes per entry are those the docs state.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressOf, bucketOf, decodeBucket, encodeBucket, fingerprintOf, lookupBucket } from '../../lib/history/store';

const NOW = Date.UTC(2026, 10, 1);
const DAY_MS = 86_400_000;

/** Entries of one bucket of N = `buckets`: hash → value (epoch ms × 2 + CRM flag). */
function bucketEntries(ids: readonly string[], values: readonly number[], buckets: number) {
  const byBucket = new Map<number, { depth: number; entries: Map<string, number> }>();
  ids.forEach((id, i) => {
    const fingerprint = fingerprintOf(id);
    const { bucket, depth } = bucketOf(addressOf(fingerprint), buckets);
    let group = byBucket.get(bucket);
    if (!group) byBucket.set(bucket, (group = { depth, entries: new Map() }));
    group.entries.set(fingerprint, values[i % values.length]!);
  });
  return byBucket;
}

describe('history bucket encoding', () => {
  it('decodes and looks up exactly what it encoded, at every depth (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 300 }),
        fc.array(fc.record({ days: fc.integer({ min: 0, max: 3_000 }), ms: fc.integer({ min: 0, max: DAY_MS - 1 }), crm: fc.boolean() }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: 1, max: 2 ** 20 }),
        (ids, times, buckets) => {
          const values = times.map(({ days, ms, crm }) => (NOW - days * DAY_MS - ms) * 2 + (crm ? 1 : 0));
          for (const { depth, entries } of bucketEntries(ids, values, buckets).values()) {
            const encoded = encodeBucket(entries, depth, NOW);
            expect(decodeBucket(encoded)).toEqual(entries);
            // Asked: some held, some not (an absent account of the same bucket, and one of no bucket at all).
            const absent = ids.map((id) => fingerprintOf(`${id}~absent`)).filter((fingerprint) => !entries.has(fingerprint));
            const asked = [...[...entries.keys()].slice(0, 5), ...absent.slice(0, 3)];
            // Format 3 (binary search) and the same bytes read as format 2 (a sorted group is a valid unsorted one: linear scan).
            const unsorted = Buffer.from(encoded);
            unsorted[0] = 2;
            for (const bytes of [encoded, unsorted]) {
              const found = new Map<string, number>();
              lookupBucket(bytes, asked, (fingerprint, value) => found.set(fingerprint, value));
              expect(found).toEqual(new Map(asked.filter((f) => entries.has(f)).map((f) => [f, entries.get(f)!])));
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('drops enrichment times past the retention (a CRM target keeps its flag) and reads format-1 items', () => {
    const [a, b, c] = ['a', 'b', 'c'].map(fingerprintOf) as [string, string, string];
    const old = (NOW - 3_651 * DAY_MS) * 2;
    const decoded = decodeBucket(
      encodeBucket(
        new Map([
          [a, old],
          [b, old + 1],
          [c, NOW * 2],
        ]),
        0,
        NOW,
      ),
    );
    expect(decoded).toEqual(
      new Map([
        [b, 1],
        [c, NOW * 2],
      ]),
    );
    // Format 1: u8 format, u16 groups, per group a 48-bit value and a u16 count, then the 8-byte hashes.
    const legacy = Buffer.alloc(3 + 8 + 16);
    legacy.writeUInt8(1, 0);
    legacy.writeUInt16BE(1, 1);
    legacy.writeUIntBE(NOW * 2 + 1, 3, 6);
    legacy.writeUInt16BE(2, 9);
    legacy.write(a + c, 11, 16, 'latin1');
    expect(decodeBucket(legacy)).toEqual(
      new Map([
        [a, NOW * 2 + 1],
        [c, NOW * 2 + 1],
      ]),
    );
  });

  it('stores the hash bytes the depth does not imply: 7 bytes an entry at depth 8–15, 6 at 16–23, plus a few bytes per group of one time', () => {
    for (const [depth, perEntry] of [
      [12, 7],
      [17, 6],
    ] as const) {
      // 60 hashes whose address is 5 modulo 2^depth (bucket 5 at that depth).
      const entries = new Map<string, number>();
      for (let i = 0; i < 60; i++) {
        const hash = Buffer.alloc(8);
        hash.writeUInt32LE((5 + i * 2 ** depth) >>> 0, 0);
        hash.writeUInt32LE((i * 2_654_435_761) >>> 0, 4);
        entries.set(hash.toString('latin1'), NOW * 2);
      }
      const encoded = encodeBucket(entries, depth, NOW);
      // Header: format, implied-byte count, the implied bytes, group count; the group: its value and count.
      expect(encoded.length).toBe(2 + (8 - perEntry) + 1 + varintBytes(NOW * 2) + varintBytes(60) + 60 * perEntry);
      expect(decodeBucket(encoded)).toEqual(entries);
    }
  });
});

/** Bytes of a LEB128 varint. */
function varintBytes(value: number): number {
  let bytes = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes++;
  return bytes;
}
