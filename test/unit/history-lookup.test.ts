/**
 * The evaluation's in-place lookup of history buckets (lib/history/store.ts `openBucket` and `valueInBucket`, which
 * `getFacts` runs on each bucket item as read; docs/data-model.md "Recency and CRM targets") against the decode path it
 * replaced (`decodeBucket`: every entry as a Map): over fast-check generated buckets in every format (4, and 3, 2 and 1
 * as older versions wrote them), every account held gives its decoded value and every other account none, with one
 * scratch lookup reopened from bucket to bucket in any order (its header's arrays reused).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addressOf,
  bucketOf,
  decodeBucket,
  encodeBucket,
  fingerprintOf,
  tailOf,
  openBucket,
  valueInBucket,
  type BucketLookup,
} from '../../lib/history/store';
import {
  bucketEntries,
  encodeFormat1Bucket,
  encodeLegacyBucket,
  FIXTURE_NOW,
  historyValues,
  lookupBucket,
} from '../support/history-legacy';

const NOW = FIXTURE_NOW;

describe('history bucket lookup in place', () => {
  it('gives what the decode path gives, for every format, held and absent accounts, one scratch lookup reused (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 400 }),
        historyValues(40),
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 65, max: 2 ** 20 }), fc.integer({ min: 2 ** 31, max: 2 ** 32 - 1 })),
        fc.nat(),
        (ids, values, buckets, seed) => {
          const byBucket = bucketEntries(ids, (i) => values[(i * 7 + seed) % values.length]!, buckets);
          // Every bucket in every format, opened in turn into one lookup (format 4 and the older ones interleaved).
          const encoded = [...byBucket.values()].flatMap(({ depth, entries, legacy }) => [
            encodeBucket(entries, depth, NOW),
            encodeLegacyBucket(legacy, depth),
            encodeLegacyBucket(legacy, depth, false),
            encodeFormat1Bucket(legacy),
          ]);
          const asked = [...ids, ...ids.map((id) => `${id}~absent`)].map(fingerprintOf);
          let lookup: BucketLookup | undefined;
          for (let k = 0; k < encoded.length; k++) {
            const bytes = encoded[(k * 5 + seed) % encoded.length] ?? encoded[k]!;
            const decoded = decodeBucket(bytes);
            lookup = openBucket(bytes, lookup);
            const inPlace = new Map<string, number>();
            for (const fingerprint of asked) {
              const value = valueInBucket(lookup, addressOf(fingerprint), tailOf(fingerprint));
              if (value !== -1) inPlace.set(fingerprint, value);
            }
            expect(inPlace).toEqual(decoded);
            const visited = new Map<string, number>();
            lookupBucket(bytes, asked, (fingerprint, value) => visited.set(fingerprint, value));
            expect(visited).toEqual(decoded);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('finds nothing in an empty item', () => {
    const lookup = openBucket(new Uint8Array(0));
    const fingerprint = fingerprintOf('a');
    expect(valueInBucket(lookup, addressOf(fingerprint), tailOf(fingerprint))).toBe(-1);
  });
});
