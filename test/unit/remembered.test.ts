/** The limiter's bounded memory of organizations (lib/http/rate-limit.ts): least recently used out first. */
import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED, Remembered } from '../../lib/http/rate-limit';

describe('Remembered', () => {
  it('keeps an organization that is still used however many others arrive after it, and holds at most MAX_REMEMBERED', () => {
    const states = new Remembered<number>();
    states.set('active', 1);
    for (let i = 0; i < 3 * MAX_REMEMBERED; i++) {
      states.set(`other${i}`, i);
      // The active organization sends a request now and then: its state is read.
      if (i % 1_000 === 0) expect(states.get('active'), `after ${i} others`).toBe(1);
    }
    expect(states.size).toBe(MAX_REMEMBERED);
    expect(states.get('active')).toBe(1);
    // One never read again is dropped.
    expect(states.get('other0')).toBeUndefined();
  });
});
