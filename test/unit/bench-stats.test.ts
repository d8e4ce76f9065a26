/**
 * The bench's random round order (bench/lib/stats.ts `shuffled`): every
 * round of the interleaved latency figure runs its tasks in a uniformly
 * random order, so no task always follows the same neighbour.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shuffled } from '../../bench/lib/stats';

/** A `random` that answers the given numbers in turn. */
const answering = (values: number[]) => () => {
  const value = values.shift();
  if (value === undefined) throw new Error('asked for more random numbers than given');
  return value;
};

describe('shuffled', () => {
  it('returns a permutation of its input and leaves the input as it is', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer()),
        fc.infiniteStream(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })),
        (items, stream) => {
          const before = [...items];
          const order = shuffled(items, () => stream.next().value as number);
          expect(items).toEqual(before);
          expect([...order].sort((a, b) => a - b)).toEqual([...items].sort((a, b) => a - b));
        },
      ),
    );
  });

  it('draws each order from exactly one sequence of choices (uniform when the choices are)', () => {
    // Fisher–Yates asks for a position in [0, i] for i = n−1 … 1: every sequence of answers must give a different order.
    const items = ['a', 'b', 'c', 'd'];
    const orders = new Set<string>();
    for (let j3 = 0; j3 <= 3; j3++)
      for (let j2 = 0; j2 <= 2; j2++)
        for (let j1 = 0; j1 <= 1; j1++) {
          const order = shuffled(items, answering([(j3 + 0.5) / 4, (j2 + 0.5) / 3, (j1 + 0.5) / 2]));
          orders.add(order.join(''));
        }
    expect(orders.size).toBe(24);
  });

  it('swaps with the position the random number picks', () => {
    expect(shuffled(['a', 'b', 'c', 'd'], () => 0)).toEqual(['b', 'c', 'd', 'a']);
    expect(shuffled(['a', 'b', 'c', 'd'], () => 0.999)).toEqual(['a', 'b', 'c', 'd']);
  });
});
