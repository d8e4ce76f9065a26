/**
 * Unit tests of the request deadline (lib/http/deadline.ts; docs/reliability.md
 * "Deadlines"): the signal aborts a margin before the function's timeout, or
 * when middy's own timeout signal fires, including one that fired before the
 * deadline was first read (the pipeline starts it lazily), and an ended
 * deadline (the request answered) that never fires.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineExceededError, startDeadline } from '../../lib/http/deadline';

afterEach(() => {
  vi.useRealTimers();
});

describe('startDeadline', () => {
  it('aborts marginMs before the remaining time runs out, with a DeadlineExceededError', () => {
    vi.useFakeTimers();
    const { signal } = startDeadline({ getRemainingTimeInMillis: () => 10_000 }, undefined, 3_000);
    vi.advanceTimersByTime(6_999);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('aborts when the other signal fires later', () => {
    const lambdaTimeout = new AbortController();
    const { signal } = startDeadline({ getRemainingTimeInMillis: () => 60_000 }, lambdaTimeout.signal);
    expect(signal.aborted).toBe(false);
    lambdaTimeout.abort();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('is aborted from the start when the other signal fired before the deadline was built', () => {
    const lambdaTimeout = new AbortController();
    lambdaTimeout.abort();
    const { signal } = startDeadline({ getRemainingTimeInMillis: () => 60_000 }, lambdaTimeout.signal);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('ended (the request answered), neither its timer nor the other signal fires it, and it leaves no timer behind', () => {
    vi.useFakeTimers();
    const lambdaTimeout = new AbortController();
    const deadline = startDeadline({ getRemainingTimeInMillis: () => 10_000 }, lambdaTimeout.signal, 3_000);
    expect(vi.getTimerCount()).toBe(1);
    deadline.end();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    lambdaTimeout.abort();
    expect(deadline.signal.aborted).toBe(false);
  });
});
