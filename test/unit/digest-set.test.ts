/**
 * DigestSet (lib/warehouse/identifiers.ts): what stored digests are checked
 * against for suppression and erasure (docs/privacy.md). It answers exactly as
 * a set of the hashes' hex would, for full hashes and for the compact sets'
 * 8-byte prefixes, including digests that share an entry's first 4 bytes
 * (the table's key) or its first 22 bits (the bitmap's), and hashes given
 * twice or in upper case; a lookup makes no string (it used to make a hex
 * string per bitmap hit).
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { DIGEST_BYTES, DigestSet } from '../../lib/warehouse/identifiers';

const digest = fc.uint8Array({ minLength: DIGEST_BYTES, maxLength: DIGEST_BYTES }).map((bytes) => Buffer.from(bytes));

describe('DigestSet', () => {
  it('matches a digest exactly when a set of hex prefixes holds its first bytes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(4, 8, 16, DIGEST_BYTES),
        fc.array(digest, { maxLength: 40 }),
        fc.array(fc.tuple(digest, fc.nat(), fc.constantFrom(0, 3, 4, 7)), { maxLength: 40 }),
        fc.boolean(),
        (length, entries, probes, upper) => {
          const hashes = entries.map((bytes) => bytes.toString('hex', 0, length));
          const set = new DigestSet([...hashes, ...hashes.slice(0, 3)].map((hash) => (upper ? hash.toUpperCase() : hash)));
          const reference = new Set(hashes);
          expect(set.size).toBe(reference.size);
          for (const [probe, pick, shared] of probes) {
            // A probe that shares its first `shared` bytes (or all, with 7) with an entry, when there is one.
            const bytes = Buffer.from(probe);
            const entry = entries.length > 0 ? entries[pick % entries.length]! : undefined;
            if (entry) entry.copy(bytes, 0, 0, shared === 7 ? DIGEST_BYTES : shared);
            const expected = reference.has(bytes.toString('hex', 0, length));
            expect(set.hasDigest(bytes, 0)).toBe(expected);
            // The same digest among others, back to back, at an offset.
            const joined = Buffer.concat([Buffer.alloc(5), Buffer.alloc(DIGEST_BYTES, 0xff), bytes]);
            expect(set.hasAny(joined, 5, joined.length)).toBe(expected || reference.has(joined.toString('hex', 5, 5 + length)));
          }
        },
      ),
    );
  });

  it('makes no string per lookup, on a bitmap hit or a match either', () => {
    const entries = Array.from({ length: 200 }, (_, i) => Buffer.alloc(DIGEST_BYTES, i + 1));
    const set = new DigestSet(entries.map((bytes) => bytes.toString('hex', 0, 8)));
    // Digests that hit the bitmap (an entry's first 3 bytes) but not the entry, and the entries themselves.
    const nearMisses = entries.map((bytes) => Buffer.concat([bytes.subarray(0, 3), Buffer.alloc(DIGEST_BYTES - 3, 0xee)]));
    const joined = Buffer.concat([...nearMisses, ...entries]);
    const toString = vi.spyOn(Buffer.prototype, 'toString');
    try {
      let hits = 0;
      for (let at = 0; at < joined.length; at += DIGEST_BYTES) if (set.hasDigest(joined, at)) hits++;
      expect(hits).toBe(entries.length);
      expect(set.hasAny(joined, 0, nearMisses.length * DIGEST_BYTES)).toBe(false);
      expect(toString).not.toHaveBeenCalled();
    } finally {
      toString.mockRestore();
    }
  });

  it('refuses hashes of mixed lengths or not hex', () => {
    expect(() => new DigestSet(['00112233', '0011223344'])).toThrow(/one length/);
    expect(() => new DigestSet(['0011223x'])).toThrow(/hex/);
    expect(new DigestSet([]).hasAny(Buffer.alloc(64), 0, 64)).toBe(false);
  });
});
