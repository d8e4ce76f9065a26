/**
 * Routing in the account history's linear hashing (lib/history/store.ts `bucketOf`, `nextBucket`;
 * docs/data-model.md "Recency and CRM targets"): a fingerprint routed under an older, smaller N and moved on
 * as the buckets it meets show deeper splits must only ever visit buckets that exist under the current N, and
 * end where N routes it. The earlier rule jumped straight to address mod 2^depth, which could name a bucket
 * whose split was not made yet: a completion wrote there (a phantom bucket) and every later read missed it
 * (the model test in test/history-buckets.test.ts caught it on CI: a re-enrichment's time lost).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketOf, nextBucket } from '../../lib/history/store';

/** The depth each bucket's item shows when there are `buckets` (N) buckets, every split made in order. */
const depthUnder = (bucket: number, buckets: number): number => {
  const level = 31 - Math.clz32(Math.max(1, buckets));
  const pointer = buckets - 2 ** level;
  return bucket < pointer || bucket >= 2 ** level ? level + 1 : level;
};

describe('history routing: one split at a time', () => {
  it('from where an older N routed it, every bucket visited exists under the current N, and the last is where N routes it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), fc.nat(2 ** 32 - 1), (a, b, address) => {
        const [older, current] = a <= b ? [a, b] : [b, a];
        let at = bucketOf(address, older).bucket;
        for (let hops = 0; ; hops++) {
          expect(at).toBeLessThan(current);
          expect(hops).toBeLessThanOrEqual(32);
          const hop = nextBucket(address, at, depthUnder(at, current));
          if (!hop) break;
          expect(hop.depth).toBe(31 - Math.clz32(hop.bucket) + 1);
          at = hop.bucket;
        }
        expect(at).toBe(bucketOf(address, current).bucket);
      }),
      { numRuns: 2000 },
    );
  });

  it('the case CI met: bucket 1 at depth 3 with 6 buckets sends an address ending in binary 111 to bucket 3, not to bucket 7', () => {
    expect(nextBucket(0b111, 1, 3)).toEqual({ bucket: 3, depth: 2 });
    expect(nextBucket(0b111, 3, depthUnder(3, 6))).toBeUndefined();
    expect(bucketOf(0b111, 6).bucket).toBe(3);
    expect(nextBucket(0b101, 1, 3)).toEqual({ bucket: 5, depth: 3 });
    expect(nextBucket(0b001, 1, 3)).toBeUndefined();
  });
});
