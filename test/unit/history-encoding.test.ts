/**
 * The history buckets' entry encoding (lib/history/store.ts `encodeBucket`;
 * docs/data-model.md "Recency and CRM targets"): format 4 gives back every
 * entry it was given (fingerprints whole, though it stores only their bits
 * past the bucket's address bits), `lookupBucket` finds exactly the accounts
 * asked for that the bucket holds (binary search of the packed keys), items of
 * formats 1–3 (8-byte hashes) still read, as their first 52 bits, and the bits
 * per entry are those the docs state.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressOf, bucketOf, decodeBucket, encodeBucket, fingerprintOf, HISTORY_FORMAT } from '../../lib/history/store';
import {
  bucketEntries,
  DAY_MS,
  encodeLegacyBucket,
  FIXTURE_NOW,
  historyValues,
  legacyHashOf,
  lookupBucket,
} from '../support/history-legacy';

const NOW = FIXTURE_NOW;

describe('history bucket encoding', () => {
  it('decodes and looks up exactly what it encoded, at every depth, and reads formats 2 and 3 the same (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 300 }),
        historyValues(5),
        fc.oneof(fc.integer({ min: 1, max: 2 ** 20 }), fc.integer({ min: 2 ** 31, max: 2 ** 32 - 1 })),
        (ids, values, buckets) => {
          for (const { depth, entries, legacy } of bucketEntries(ids, (i) => values[i % values.length]!, buckets).values()) {
            const encoded = encodeBucket(entries, depth, NOW);
            expect(encoded[0]).toBe(HISTORY_FORMAT);
            expect(decodeBucket(encoded)).toEqual(entries);
            // Asked: some held, some not (an absent account of the same bucket, and one of no bucket at all).
            const absent = ids.map((id) => fingerprintOf(`${id}~absent`)).filter((fingerprint) => !entries.has(fingerprint));
            const asked = [...[...entries.keys()].slice(0, 5), ...absent.slice(0, 3)];
            const expected = new Map(asked.filter((f) => entries.has(f)).map((f) => [f, entries.get(f)!]));
            // Format 4 (binary search of the packed keys), and the same entries as formats 3 and 2 wrote them (a scan).
            for (const bytes of [encoded, encodeLegacyBucket(legacy, depth), encodeLegacyBucket(legacy, depth, false)]) {
              const found = new Map<string, number>();
              lookupBucket(bytes, asked, (fingerprint, value) => found.set(fingerprint, value));
              expect(found).toEqual(expected);
              expect(decodeBucket(bytes)).toEqual(entries);
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
    legacy.write(legacyHashOf('a') + legacyHashOf('c'), 11, 16, 'latin1');
    expect(decodeBucket(legacy)).toEqual(
      new Map([
        [a, NOW * 2 + 1],
        [c, NOW * 2 + 1],
      ]),
    );
  });

  it('reads two 8-byte hashes of an older format that share their first 52 bits as one entry, their values joined', () => {
    const hash8 = legacyHashOf('x');
    const twin = hash8.slice(0, 6) + String.fromCharCode(hash8.charCodeAt(6) ^ 0x10) + hash8.slice(7);
    const bytes = encodeLegacyBucket(
      new Map([
        [hash8, NOW * 2],
        [twin, (NOW - DAY_MS) * 2 + 1],
      ]),
      0,
    );
    expect(decodeBucket(bytes)).toEqual(new Map([[fingerprintOf('x'), NOW * 2 + 1]]));
    const found: [string, number][] = [];
    lookupBucket(bytes, [fingerprintOf('x')], (fingerprint, value) => found.push([fingerprint, value]));
    expect(found).toEqual([[fingerprintOf('x'), NOW * 2 + 1]]);
  });

  it('stores 52 − depth bits an entry (the fingerprint less the address bits the bucket fixes), plus a few bytes per group of one time', () => {
    for (const depth of [0, 7, 13, 17, 32]) {
      // 60 fingerprints whose address is 5 modulo 2^depth (bucket 5 at that depth).
      const entries = new Map<string, number>();
      for (let i = 0; i < 60; i++) {
        const hash = Buffer.alloc(7);
        hash.writeUInt32LE((depth === 32 ? 5 : 5 % 2 ** depth) + ((i * 2 ** depth) % 2 ** 32), 0);
        hash.writeUIntLE((i * 2_654_435_761) % 2 ** 20, 4, 3);
        entries.set(hash.toString('latin1'), NOW * 2);
      }
      const encoded = encodeBucket(entries, depth, NOW);
      const low = depth === 0 ? 0 : 5 % 2 ** depth;
      // Header: format, implied-bit count, their value, group count; the group: its value and count; then the packed keys.
      expect(encoded.length).toBe(2 + varintBytes(low) + 1 + varintBytes(NOW * 2) + varintBytes(60) + Math.ceil((60 * (52 - depth)) / 8));
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
