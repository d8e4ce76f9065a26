/**
 * API-key scopes: what a key may do (docs/authentication.md "Scopes").
 *
 * The one owner of the list of scopes. Each operation declares the one scope
 * it needs next to its schema (`scope` of lib/http/operation.ts
 * {@link Operation}); the pipeline checks it in one place, right after
 * authentication and before the body is read (lib/http/pipeline.ts); the
 * OpenAPI document lists it as the operation's security requirement
 * (lib/contract/openapi.ts). No handler checks a scope by hand.
 */

/**
 * Every scope, in the order the documents list them:
 * - `org:read`: describe the organization, read its limits;
 * - `campaigns:read`: list, get, accounts, quote;
 * - `campaigns:write`: create, update, uploads;
 * - `campaigns:launch`: enrich, cancel;
 * - `results:read`: results, stream, export;
 * - `ledger:read`, `events:read`, `webhooks:manage`, `privacy:manage`, `keys:manage`;
 * - `usage:read`: usage and the audit log.
 */
export const SCOPES = [
  'org:read',
  'campaigns:read',
  'campaigns:write',
  'campaigns:launch',
  'results:read',
  'ledger:read',
  'events:read',
  'webhooks:manage',
  'privacy:manage',
  'keys:manage',
  'usage:read',
] as const;

/** One scope of {@link SCOPES}. */
export type Scope = (typeof SCOPES)[number];

const KNOWN: ReadonlySet<string> = new Set(SCOPES);

/** Whether a string is a scope of {@link SCOPES}. */
export const isScope = (value: unknown): value is Scope => typeof value === 'string' && KNOWN.has(value);

/**
 * Whether a key's scopes grant `required`. `undefined` scopes are those of a
 * key that holds every scope: keys from before scopes, and every key the
 * operator creates (docs/authentication.md).
 * @param granted - the key's stored scopes; `undefined`: all of them.
 * @param required - the operation's scope.
 */
export const grants = (granted: readonly Scope[] | undefined, required: Scope): boolean =>
  granted === undefined || granted.includes(required);
