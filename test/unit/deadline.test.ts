/**
 * Unit tests of the request deadline (lib/http/deadline.ts; docs/reliability.md
 * "Deadlines"): the signal aborts a margin before the function's timeout, or
 * when middy's own timeout signal fires, including one that fired before the
 * deadline was first read (the pipeline builds it lazily).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadlineSignal, DeadlineExceededError } from '../../lib/http/deadline';

afterEach(() => {
  vi.useRealTimers();
});

describe('deadlineSignal', () => {
  it('aborts marginMs before the remaining time runs out, with a DeadlineExceededError', () => {
    vi.useFakeTimers();
    const signal = deadlineSignal({ getRemainingTimeInMillis: () => 10_000 }, undefined, 3_000);
    vi.advanceTimersByTime(6_999);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('aborts when the other signal fires later', () => {
    const lambdaTimeout = new AbortController();
    const signal = deadlineSignal({ getRemainingTimeInMillis: () => 60_000 }, lambdaTimeout.signal);
    expect(signal.aborted).toBe(false);
    lambdaTimeout.abort();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('is aborted from the start when the other signal fired before the deadline was built', () => {
    const lambdaTimeout = new AbortController();
    lambdaTimeout.abort();
    const signal = deadlineSignal({ getRemainingTimeInMillis: () => 60_000 }, lambdaTimeout.signal);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });
});
