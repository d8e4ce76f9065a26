/**
 * The retry schedule of webhook messages (docs/webhooks.md): exponential
 * backoff with jitter for at least 24 hours.
 *
 * With base B (`WEBHOOK_RETRY_BASE_SECONDS`, default 30 s), the wait after
 * the n-th failed attempt is min(B × 2^(n−1), 720 B) plus 0–25 % jitter, and
 * a message gets {@link MAX_ATTEMPTS} attempts. With the default base:
 * immediately, then after 30 s, 1, 2, 4, 8, 16, 32 min, 1.1, 2.1, 4.3, 6, 6
 * and 6 h: the last attempt comes 26.5 h (no jitter) to 33 h (all jitter)
 * after the first. Jitter only ever lengthens a wait, so the schedule never
 * ends before 24 h.
 */

/** Attempts of a message on its schedule (the first plus 13 retries). Redeliveries come on top. */
export const MAX_ATTEMPTS = 14;

/** Longest single wait, in multiples of the base (720 × 30 s = 6 h). */
const MAX_WAIT_FACTOR = 720;

/**
 * Seconds to wait after the `failedAttempts`-th failed attempt (1-based).
 * @param random - a number in [0, 1) (injectable for tests).
 */
export function retryDelaySeconds(failedAttempts: number, baseSeconds: number, random: number = Math.random()): number {
  const wait = Math.min(baseSeconds * 2 ** (failedAttempts - 1), baseSeconds * MAX_WAIT_FACTOR);
  return wait * (1 + 0.25 * random);
}

/** Seconds from the first attempt to the last, without jitter (26.5 h with the default base). */
export function scheduleSpanSeconds(baseSeconds: number): number {
  let total = 0;
  for (let n = 1; n < MAX_ATTEMPTS; n++) total += retryDelaySeconds(n, baseSeconds, 0);
  return total;
}
