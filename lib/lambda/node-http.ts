/**
 * Stand-in for `node:http` inside the Lambda bundles (an esbuild `alias` in
 * infra/constructs/service-function.ts): the same module, loaded with
 * `require` instead of an ECMAScript `import`.
 *
 * Why: when an ES module imports a Node built-in, Node builds the built-in's
 * ES facade by reading every export, and `node:http`'s `WebSocket`,
 * `CloseEvent` and `MessageEvent` are lazy getters that load undici (Node's
 * fetch) to answer. `@middy/util` imports `STATUS_CODES` from `node:http`, so
 * every API function paid for undici at cold start (bench "cold init": about
 * 8 ms idle, 40 ms on a loaded machine) without ever using it. `require`
 * returns the CommonJS module and reads no getter. The SDK already loads
 * `node:http` lazily for the same reason.
 *
 * The named exports are every plain export of `node:http` (Node 24): a bundled
 * module that imports any other name fails the build rather than getting
 * `undefined`. Only the bundles use this module; the sources (local stack,
 * tests) import `node:http` itself.
 */
import { createRequire } from 'node:module';

/** `node:http`, loaded as CommonJS (no ES facade, no undici). */
const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');

export default http;
export const {
  _connectionListener,
  METHODS,
  STATUS_CODES,
  Agent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  Server,
  ServerResponse,
  createServer,
  validateHeaderName,
  validateHeaderValue,
  get,
  request,
  setMaxIdleHTTPParsers,
} = http as typeof http & { _connectionListener: unknown };
