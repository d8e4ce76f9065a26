/**
 * Request deadlines that hold (issue #19; docs/reliability.md "Deadlines").
 *
 * API Gateway gives up on a request after 29 s. Each API Lambda times out at
 * {@link API_FUNCTION_TIMEOUT_SECONDS} (28 s), and the use case gets an
 * `AbortSignal` that fires {@link DEADLINE_MARGIN_MS} before the function's
 * own timeout (25 s into the invocation). Work awaited through
 * {@link beforeDeadline} stops there; a point of no return (the launch
 * transaction) is only started while the signal is still live, and is then
 * awaited to its end so the answer always tells what happened.
 */
import type { Context } from 'aws-lambda';

/** Timeout of every API Lambda, in seconds: inside API Gateway's 29 s integration timeout. */
export const API_FUNCTION_TIMEOUT_SECONDS = 28;

/**
 * Time kept back from the function's timeout, in ms: the last write a use
 * case starts (one DynamoDB transaction, normally well under 100 ms, a few
 * SDK retries at worst), releasing a lock and writing the answer fit in it.
 */
export const DEADLINE_MARGIN_MS = 3_000;

/** Thrown when a use case reaches an await after its deadline; the pipeline answers 500 `internal_error`. */
export class DeadlineExceededError extends Error {
  constructor(message = 'The request passed its deadline; its work stopped before committing anything.') {
    super(message);
    this.name = 'DeadlineExceededError';
  }
}

/** The deadline of one invocation (see {@link startDeadline}). */
export interface RequestDeadline {
  /** Aborts with a {@link DeadlineExceededError} when the deadline passes. */
  readonly signal: AbortSignal;
  /**
   * Ends the deadline once the request's work is over: its timer is cleared
   * and it stops listening to `also`, so nothing of the request stays alive
   * (or fires) after the answer. The signal is left as it is (not aborted).
   */
  end(): void;
}

/**
 * Starts the deadline of one invocation: its signal aborts
 * {@link DEADLINE_MARGIN_MS} before `context.getRemainingTimeInMillis()`
 * runs out, or when `also` aborts (middy's own signal, fired just before
 * Lambda's timeout). The caller ends it when the work is over: a deadline
 * left running would fire 25 s after a request that answered in
 * milliseconds, in a container that by then serves others.
 *
 * @param context - the Lambda context (the local stack's gives the same 28 s).
 * @param marginMs - time kept back from the function's timeout, in ms.
 * @returns the deadline; its signal's reason is a {@link DeadlineExceededError}.
 */
export function startDeadline(
  context: Pick<Context, 'getRemainingTimeInMillis'>,
  also?: AbortSignal,
  marginMs = DEADLINE_MARGIN_MS,
): RequestDeadline {
  // Started lazily (lib/http/pipeline.ts), so `also` may have fired already: an aborted signal never fires again.
  if (also?.aborted) return { signal: AbortSignal.abort(new DeadlineExceededError()), end: () => undefined };
  const controller = new AbortController();
  const remaining =
    typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : API_FUNCTION_TIMEOUT_SECONDS * 1000;
  const expire = () => {
    end();
    controller.abort(new DeadlineExceededError());
  };
  const timer = setTimeout(expire, Math.max(0, remaining - marginMs));
  timer.unref();
  also?.addEventListener('abort', expire, { once: true });
  function end() {
    clearTimeout(timer);
    also?.removeEventListener('abort', expire);
  }
  return { signal: controller.signal, end };
}

/** Throws a {@link DeadlineExceededError} when `signal` has fired. */
export function throwIfPastDeadline(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DeadlineExceededError();
}

/**
 * Awaits `work` unless the deadline comes first: then rejects with a
 * {@link DeadlineExceededError} at once (the work's result, if it ever
 * arrives, is dropped). Use it for reads; never for a write whose outcome
 * the answer must report.
 */
export function beforeDeadline<T>(signal: AbortSignal | undefined, work: Promise<T>): Promise<T> {
  if (!signal) return work;
  throwIfPastDeadline(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new DeadlineExceededError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
