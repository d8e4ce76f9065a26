/**
 * JsonBytes (lib/results/json.ts): the one buffer a results page writes its
 * items' stored bytes into, decoded once. Text of any kind (one ASCII
 * character, which skips the encoder; non-ASCII; pieces copied from stored
 * bytes; a seq's digits) comes back as written, across growth and repeated takes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonBytes } from '../../lib/results/json';

describe('JsonBytes', () => {
  it('gives back exactly what was written and copied, whatever the pieces, across growth and takes', () => {
    const piece = fc.oneof(
      fc.constantFrom(',', '[', ']', '{', '"', 'é', '€'),
      fc.oneof(fc.nat(), fc.constantFrom(0, 9, 10, 99, 100, Number.MAX_SAFE_INTEGER), fc.maxSafeNat()),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ maxLength: 200 }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(piece, fc.boolean()), { maxLength: 60 }), { minLength: 1, maxLength: 4 }), (takes) => {
        const out = new JsonBytes(8);
        for (const pieces of takes) {
          let expected = '';
          for (const [text, asCopy] of pieces) {
            if (typeof text === 'number') {
              // A seq's digits, written without a string.
              out.digits(text);
              expected += String(text);
              continue;
            }
            const wellFormed = text.toWellFormed();
            if (asCopy) {
              const stored = Buffer.from(`xx${wellFormed}yy`);
              out.copy(stored, 2, stored.length - 2);
            } else out.write(wellFormed);
            expected += wellFormed;
          }
          expect(out.byteLength).toBe(Buffer.byteLength(expected));
          expect(out.take()).toBe(expected);
          expect(out.byteLength).toBe(0);
        }
      }),
    );
  });
});
