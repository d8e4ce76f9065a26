/**
 * The bench's random round order (bench/lib/stats.ts `shuffled`): every
 * round of the interleaved latency figure runs its tasks in a uniformly
 * random order, so no task always follows the same neighbour.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busyAlternation, shuffled } from '../../bench/lib/stats';

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

describe('busyAlternation', () => {
  it('weights the loop share by slice length and classes slices by how busy the loop was', () => {
    const shared = busyAlternation([
      { seconds: 1, loop: 0.2, javaCores: 1.5 },
      { seconds: 3, loop: 0.95, javaCores: 0.1 },
      { seconds: 1, loop: 0.7, javaCores: 0.6 },
    ]);
    expect(shared.seconds).toBe(5);
    expect(shared.loopBusy).toBeCloseTo((0.2 + 3 * 0.95 + 0.7) / 5, 10);
    expect(shared.loopIdle).toEqual({ share: 0.2, javaCores: 1.5 });
    expect(shared.loopSaturated.share).toBeCloseTo(0.6, 10);
    expect(shared.loopSaturated.javaCores).toBeCloseTo(0.1, 10);
  });

  it('answers NaN for a class with no slice and for an empty window', () => {
    expect(busyAlternation([{ seconds: 2, loop: 0.6, javaCores: 1 }]).loopIdle.javaCores).toBeNaN();
    expect(busyAlternation([]).loopBusy).toBeNaN();
  });

  it('puts every second of the window in at most one class (shares sum to at most 1)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            seconds: fc.double({ min: 0.01, max: 5, noNaN: true }),
            loop: fc.double({ min: 0, max: 1, noNaN: true }),
            javaCores: fc.double({ min: 0, max: 2, noNaN: true }),
          }),
          { minLength: 1 },
        ),
        (slices) => {
          const shared = busyAlternation(slices);
          expect(shared.loopIdle.share + shared.loopSaturated.share).toBeLessThanOrEqual(1 + 1e-9);
          expect(shared.loopBusy).toBeGreaterThanOrEqual(0);
          expect(shared.loopBusy).toBeLessThanOrEqual(1 + 1e-9);
        },
      ),
    );
  });
});
