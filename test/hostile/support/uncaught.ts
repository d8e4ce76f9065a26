/**
 * The API server runs in the test's own process, so an exception nobody
 * catches while it serves a request (an `'error'` event without a listener,
 * a throw in a callback) surfaces as a process-level `uncaughtException`. On
 * Lambda that kills the runtime mid-invocation (the caller gets a bare 502,
 * not the envelope); under `npm start` it kills the local server. This
 * helper records such exceptions while one request is served, instead of
 * letting them reach the test runner unattributed.
 */

/**
 * Runs `fn` and returns what it returned plus every uncaught exception raised
 * meanwhile (and `graceMs` after: exceptions of the request's own parsing are
 * raised before its answer is written, so a turn of the event loop suffices).
 */
export async function capturingUncaught<T>(fn: () => Promise<T>, graceMs = 0): Promise<{ result: T; uncaught: Error[] }> {
  const saved = process.listeners('uncaughtException');
  const uncaught: Error[] = [];
  const record = (error: Error) => uncaught.push(error);
  process.removeAllListeners('uncaughtException');
  process.on('uncaughtException', record);
  try {
    const result = await fn();
    await new Promise((r) => setTimeout(r, graceMs));
    return { result, uncaught };
  } finally {
    process.removeListener('uncaughtException', record);
    for (const listener of saved) process.on('uncaughtException', listener as (error: Error) => void);
  }
}
