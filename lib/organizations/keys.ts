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
import { grants } from '../http/scopes';
import type { ApiKeyStore, ApiKeyView } from './api-keys';
import { DEFAULT_KEY_PAGE_SIZE, MAX_KEY_LIFETIME_DAYS, type CreateKeyInput, type KeyIdInput, type ListKeysInput } from './schema';

/** What the key operations need. */
export interface KeyDependencies {
  apiKeys: ApiKeyStore;
  /** The clock (tests move it); default the system's. */
  now?: () => Date;
}

/** The calling request as the key operations see it. */
export interface KeyCaller {
  organizationId: string;
  /** The calling key's check: its scopes bound what it may grant. */
  keyCheck: Pick<KeyCheck, 'scopes'>;
  /** The request's audit entry (docs/audit.md), written in the change's transaction. */
  auditItem?: () => TransactItem;
}

/**
 * `POST /v1/keys/create`: a new key of the caller's organization.
 * @returns `{key, secret}`: the secret appears only here (and from rotate).
 * @throws InsufficientScopeError (403, `details.required`) for a scope the calling key lacks; nothing is written.
 * @throws InvalidRequestError for an `expiresAt` not in the future or more than {@link MAX_KEY_LIFETIME_DAYS} days ahead.
 */
export async function createKey(
  deps: Omit<KeyDependencies, 'apiKeys'> & { apiKeys: Pick<ApiKeyStore, 'issue'> },
  caller: KeyCaller,
  input: CreateKeyInput,
): Promise<{ key: ApiKeyView; secret: string }> {
  const lacking = input.scopes.find((scope) => !grants(caller.keyCheck.scopes, scope));
  if (lacking) throw new InsufficientScopeError(lacking);
  const now = deps.now?.() ?? new Date();
  if (input.expiresAt !== undefined) {
    const at = Date.parse(input.expiresAt);
    if (at <= now.getTime()) throw new InvalidRequestError('The request body is invalid.', ['expiresAt: must be in the future']);
    if (at > now.getTime() + MAX_KEY_LIFETIME_DAYS * 86_400_000)
      throw new InvalidRequestError('The request body is invalid.', [`expiresAt: must be at most ${MAX_KEY_LIFETIME_DAYS} days ahead`]);
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
 * `POST /v1/keys/rotate` (with `auditItem`, docs/audit.md, in its transaction): a new secret; the old one keeps working 24 h (lib/organizations/api-keys.ts `ROTATION_OVERLAP_SECONDS`).
 * @throws NotFoundError (`api_key`) when the organization has no such key; InvalidRequestError when it is revoked.
 */
export async function rotateKey(
  deps: KeyDependencies,
  organizationId: string,
  input: KeyIdInput,
  auditItem?: () => TransactItem,
): Promise<{ key: ApiKeyView; secret: string }> {
  return deps.apiKeys.rotate(organizationId, input.id, deps.now?.() ?? new Date(), auditItem ? [auditItem()] : []);
}
