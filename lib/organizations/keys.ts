/**
 * The key operations a customer runs with a `keys:manage` key
 * (docs/authentication.md): create (the secret shown once), list, revoke and
 * rotate. A key cannot grant a scope it lacks; a test key acts on its
 * organization's test twin, so it creates, lists, revokes and rotates test
 * keys only (the twin holds no other).
 */
import { setting, cursorSecretSetting } from '../config';
import { InsufficientScopeError, InvalidRequestError, NotFoundError } from '../errors';
import { decodeCursor, encodeCursor } from '../http/cursor';
import type { KeyCheck } from '../http/auth';
import type { TransactItem } from '../db/conditional';
import { grants, type Scope } from '../http/scopes';
import type { ApiKeyStore, ApiKeyView } from './api-keys';
import {
  DEFAULT_KEY_PAGE_SIZE,
  latestKeyExpiry,
  MAX_KEY_LIFETIME_TEXT,
  type CreateKeyInput,
  type KeyIdInput,
  type ListKeysInput,
} from './schema';

/** What the key operations need. */
export interface KeyDependencies {
  apiKeys: ApiKeyStore;
  /** The clock (tests move it); default the system's. */
  now?: () => Date;
}

/** The calling request as the key operations see it. */
export interface KeyCaller {
  organizationId: string;
  /** The calling key's check: its scopes and credit limits bound what it may hand out ({@link assertMayHandOut}). */
  keyCheck: Pick<KeyCheck, 'scopes' | 'limits'>;
  /** The request's audit entry (docs/audit.md), written in the change's transaction. */
  auditItem?: () => TransactItem;
}

/** The credit limits a key may carry (docs/authentication.md#per-key-credit-limits), in the order they are checked. */
const CREDIT_LIMITS = ['maxCreditsPerLaunch', 'monthlyCredits'] as const;

/**
 * What a calling key may hand out, a new key (create) or an existing key's new secret (rotate): a key holding only
 * scopes the caller holds, and, when it may launch, credit limits no looser than the caller's own (a limit the caller
 * has, the key has too, at most as high). docs/authentication.md "Managing keys yourself".
 * @param key - the key handed out: its scopes, and its limits (`null` or absent: none).
 * @param looser - the refusal's field and text for a looser limit, given the limit's name and the caller's value.
 * @throws InsufficientScopeError (403, `details.required`) for the first scope the caller lacks.
 * @throws InvalidRequestError (400) from `looser` for the first limit that would be looser than the caller's.
 */
function assertMayHandOut(
  caller: Pick<KeyCheck, 'scopes' | 'limits'>,
  key: { scopes: readonly Scope[]; limits?: { [L in (typeof CREDIT_LIMITS)[number]]?: number | null } },
  looser: (limit: (typeof CREDIT_LIMITS)[number], callerLimit: number) => string,
): void {
  const lacking = key.scopes.find((scope) => !grants(caller.scopes, scope));
  if (lacking) throw new InsufficientScopeError(lacking);
  if (!grants(key.scopes, 'campaigns:launch')) return;
  for (const limit of CREDIT_LIMITS) {
    const callerLimit = caller.limits?.[limit] ?? null;
    const keyLimit = key.limits?.[limit] ?? null;
    if (callerLimit !== null && (keyLimit === null || keyLimit > callerLimit))
      throw new InvalidRequestError('The request body is invalid.', [looser(limit, callerLimit)]);
  }
}

/**
 * `POST /v1/keys/create`: a new key of the caller's organization.
 * @returns `{key, secret}`: the secret appears only here (and from rotate).
 * @throws InsufficientScopeError (403, `details.required`) for a scope the calling key lacks; nothing is written.
 * @throws InvalidRequestError for a key that may launch with credit limits looser than the calling key's
 *   ({@link assertMayHandOut}), or an `expiresAt` not in the future or past {@link latestKeyExpiry} (1 year ahead).
 */
export async function createKey(
  deps: Omit<KeyDependencies, 'apiKeys'> & { apiKeys: Pick<ApiKeyStore, 'issue'> },
  caller: KeyCaller,
  input: CreateKeyInput,
): Promise<{ key: ApiKeyView; secret: string }> {
  assertMayHandOut(
    caller.keyCheck,
    input,
    (limit, callerLimit) =>
      `limits.${limit}: at most ${callerLimit} (the calling key's own ${limit}); a key that may launch carries the calling key's credit limits or tighter ones`,
  );
  const now = deps.now?.() ?? new Date();
  if (input.expiresAt !== undefined) {
    const at = Date.parse(input.expiresAt);
    if (at <= now.getTime()) throw new InvalidRequestError('The request body is invalid.', ['expiresAt: must be in the future']);
    const latest = latestKeyExpiry(now);
    if (at > latest.getTime())
      throw new InvalidRequestError('The request body is invalid.', [
        `expiresAt: must be at most ${MAX_KEY_LIFETIME_TEXT} ahead, on or before ${latest.toISOString()}`,
      ]);
  }
  return deps.apiKeys.issue(
    caller.organizationId,
    {
      name: input.name,
      scopes: input.scopes,
      ...(input.expiresAt ? { expiresAt: new Date(input.expiresAt).toISOString() } : {}),
      ...(input.limits ? { limits: input.limits } : {}),
    },
    now,
    caller.auditItem ? [caller.auditItem()] : [],
  );
}

/**
 * `POST /v1/keys/list`: a page of the organization's keys by key ID, never a secret.
 * @throws InvalidRequestError for a cursor altered, of another organization, or with another limit.
 */
export async function listKeys(
  deps: { apiKeys: Pick<ApiKeyStore, 'page'> },
  organizationId: string,
  input: ListKeysInput,
): Promise<{ keys: ApiKeyView[]; nextCursor: string | null }> {
  const limit = input.limit ?? DEFAULT_KEY_PAGE_SIZE;
  const binding = { o: organizationId, f: 'keys', l: limit };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, setting(cursorSecretSetting), binding);
  const page = await deps.apiKeys.page(organizationId, limit, after);
  return { keys: page.keys, nextCursor: page.next ? encodeCursor({ ...binding, a: page.next }, setting(cursorSecretSetting)) : null };
}

/**
 * `POST /v1/keys/revoke`: every secret of the key stops at once (a revoked key answers it as it is); with
 * `auditItem` (docs/audit.md), written in the revocation's transaction.
 * @throws NotFoundError (`api_key`) when the organization has no such key.
 */
export async function revokeKey(
  deps: KeyDependencies,
  organizationId: string,
  input: KeyIdInput,
  auditItem?: () => TransactItem,
): Promise<{ key: ApiKeyView }> {
  const key = await deps.apiKeys.revokeById(organizationId, input.id, deps.now?.() ?? new Date(), auditItem ? [auditItem()] : []);
  if (!key) throw new NotFoundError('api_key', input.id);
  return { key };
}

/**
 * `POST /v1/keys/rotate` (with `auditItem`, docs/audit.md, in its transaction): a new secret; the old one keeps working
 * 24 h (lib/organizations/api-keys.ts `ROTATION_OVERLAP_SECONDS`). The new secret carries the key's scopes and limits,
 * so the calling key may rotate only a key it could have created ({@link assertMayHandOut}).
 * @throws NotFoundError (`api_key`) when the organization has no such key; InvalidRequestError when it is revoked.
 * @throws InsufficientScopeError (403) when the key holds a scope the calling key lacks; InvalidRequestError when it may
 *   launch with credit limits looser than the calling key's. Nothing is written.
 */
export async function rotateKey(deps: KeyDependencies, caller: KeyCaller, input: KeyIdInput): Promise<{ key: ApiKeyView; secret: string }> {
  return deps.apiKeys.rotate(
    caller.organizationId,
    input.id,
    deps.now?.() ?? new Date(),
    caller.auditItem ? [caller.auditItem()] : [],
    (key) =>
      assertMayHandOut(
        caller.keyCheck,
        key,
        (limit, callerLimit) =>
          `id: the key may launch with a looser ${limit} than the calling key's (${callerLimit}); rotate it with a key whose credit limits are no tighter than its own`,
      ),
  );
}
