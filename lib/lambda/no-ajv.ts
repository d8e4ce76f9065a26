/**
 * Stand-in for `ajv` and `ajv-formats` inside the Lambda bundles (esbuild
 * `alias`es in infra/constructs/service-function.ts). Only the MCP SDK's
 * server imports them, for its default JSON Schema validator, which it uses
 * to check a client's answer to an elicitation; the `/mcp` function elicits
 * nothing over stateless HTTP (docs/agents.md) and hands its servers a
 * validator of its own (mcp/server.ts), so Ajv (about 130 KB of minified code
 * with its formats and URI parser) is dead weight in its bundle. Nothing
 * else of this service uses them.
 *
 * Constructing or calling the stand-in throws, naming this file. Only the
 * bundles use it; the sources (local stack, tests, the stdio bridge of the
 * client package) keep the real packages.
 */

/** `new Ajv(…)` and `addFormats(…)` alike: throws. */
export default function noAjv(): never {
  throw new Error('Ajv is not bundled in this function (lib/lambda/no-ajv.ts)');
}
