/**
 * Retries a step of the local stack's start that an emulator failed for a
 * moment (README.md#set-up): DynamoDB Local answering `InternalFailure` or
 * 503 while it settles, a refused or reset connection. A failure that is
 * not transient (a validation error, access denied) is thrown at once.
 */

/** Options of {@link retryTransient}. */
export interface RetryOptions {
  /** Tries in all, the first included. @default 6 */
  attempts?: number;
  /** Wait before the second try, in milliseconds; doubled each try, with jitter. @default 250 */
  baseDelayMs?: number;
  /** Longest wait between tries, in milliseconds. @default 4000 */
  maxDelayMs?: number;
  /** Called before each wait (the start prints it). */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

const TRANSIENT_NAMES = new Set([
  'InternalFailure',
  'InternalServerError',
  'ServiceUnavailable',
  'ThrottlingException',
  'RequestTimeout',
  'TimeoutError',
  'SlowDown',
]);
const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

/** Whether an AWS SDK or network error is worth another try: a server fault (5xx), throttling or a connection that failed. */
export function isTransient(error: unknown): boolean {
  const e = error as
    | { name?: string; code?: string; $fault?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number }; cause?: unknown }
    | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.$fault === 'server' || e.$retryable) return true;
  if ((e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  if ((e.name && TRANSIENT_NAMES.has(e.name)) || (e.code && TRANSIENT_CODES.has(e.code))) return true;
  return e.cause !== undefined && e.cause !== error && isTransient(e.cause);
}

/**
 * Runs `step`, again after an exponential backoff while it fails with a
 * {@link isTransient} error, at most `attempts` times.
 * @throws the last error when the tries run out, or the first error that is not transient.
 */
export async function retryTransient<T>(step: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 6;
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 4_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= attempts || !isTransient(error)) throw error;
      const delayMs = Math.min(max, base * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      options.onRetry?.(error, attempt, delayMs);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
