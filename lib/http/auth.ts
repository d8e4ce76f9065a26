/**
 * Bearer API-key authentication (docs/authentication.md).
 *
 * The one owner of the API-key rules: a key of the wrong shape or unknown is
 * `invalid_api_key`, a revoked one `revoked_api_key`, both 401.
 *
 * Cost on the hot path (issue #18): which organization a key belongs to never
 * changes, so it is kept per process ({@link ApiKeyCache}, one Lambda
 * container). Revocation does change, so every request still checks it,
 * strongly consistent, in the same round trip as its data: the pipeline
 * hands the use case a {@link KeyCheck}; a store that reads the organization
 * item finds the organization's active keys there
 * (lib/organizations/api-keys.ts, {@link KeyCheck.confirmListed}), list reads
 * the key item beside its Query; the pipeline verifies any check still open
 * before it answers. Only the first request of a key in a container reads
 * the key item on its own, first (it does not know the organization yet).
 */
import { API_KEY_PATTERN, hashApiKey, isTestApiKey, REVOKED_TEST_API_KEY } from '../ids';
import { ExpiredApiKeyError, InvalidApiKeyError, RevokedApiKeyError } from '../errors';
import type { Scope } from './scopes';

/**
 * The API key item as stored: only the hash of the key. Authentication owns
 * the type (it reads it on every request); lib/organizations/api-keys.ts
 * stores it.
 */
export interface ApiKeyRecord {
  /** SHA-256 hex digest of the plaintext key. */
  keyHash: string;
  organizationId: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, once revoked. */
  revokedAt?: string;
  /** The key's scopes (lib/http/scopes.ts); absent: every scope (keys from before scopes, operator keys). */
  scopes?: Scope[];
  /** ISO 8601: from then on the key answers 401 `expired_api_key`; absent: it does not expire. */
  expiresAt?: string;
  /** The key's ID (`key_…`), the same across its rotations; absent on keys from before key IDs. */
  keyId?: string;
  /** The key's own credit limits (docs/authentication.md#per-key-credit-limits); absent: none. */
  limits?: KeyCreditLimits;
}

/**
 * A key's own credit limits, in credits; `null`: none (docs/authentication.md#per-key-credit-limits).
 * Set when the key is issued and never changed (a rotation copies them), so a process may keep them with the key.
 */
export interface KeyCreditLimits {
  /** Most a single launch with this key may charge. */
  maxCreditsPerLaunch: number | null;
  /** Most the key may charge per UTC calendar month, net of refunds. */
  monthlyCredits: number | null;
}

/**
 * What never changes about a key once issued, so a process may keep it
 * ({@link ApiKeyCache}): its organization and its scopes.
 */
export interface ApiKeyIdentity {
  organizationId: string;
  /** `undefined`: every scope. */
  scopes: readonly Scope[] | undefined;
  /** The key's ID; `undefined` on keys from before key IDs. */
  keyId: string | undefined;
  /** The key's credit limits; `undefined`: none. */
  limits: KeyCreditLimits | undefined;
  /**
   * ISO 8601, the key's own expiry as issued (it never changes; a rotation ends an
   * old secret through its item, which the request then reads: lib/organizations/api-keys.ts).
   */
  expiresAt: string | undefined;
}

/** Finds the stored record of an API key by its SHA-256 hex digest (strongly consistent); `undefined` when unknown. */
export type ApiKeyLookup = (keyHash: string) => Promise<ApiKeyRecord | undefined>;

/** Entries an {@link ApiKeyCache} keeps by default (key hashes; a container serves few). */
export const API_KEY_CACHE_SIZE = 10_000;

/**
 * Key hash → {@link ApiKeyIdentity} (organization and scopes), per process. Only valid keys are kept (an
 * unknown key is read every time). Revocation is checked at every request (on
 * the organization's list of active keys or the key item, see {@link KeyCheck});
 * a key found revoked, expired or unknown during a request is forgotten at once,
 * so its next request here reads the key item first and answers 401 before the
 * request is counted against its organization's rate (docs/limits.md): a leaked
 * key, once revoked, cannot use up its organization's window. Bounded: past
 * `maxEntries` the oldest entry goes.
 */
export class ApiKeyCache {
  readonly #identities = new Map<string, ApiKeyIdentity>();
  readonly #maxEntries: number;
  /** @param maxEntries - entries kept at most (key hashes). */
  constructor(maxEntries = API_KEY_CACHE_SIZE) {
    this.#maxEntries = maxEntries;
  }
  /** The organization and scopes of a key hash, when this process has seen the key. */
  identityOf(keyHash: string): ApiKeyIdentity | undefined {
    return this.#identities.get(keyHash);
  }
  /** Remembers the organization and scopes of a verified key. */
  remember(keyHash: string, identity: ApiKeyIdentity): void {
    if (this.#identities.has(keyHash)) return;
    if (this.#identities.size >= this.#maxEntries) this.#identities.delete(this.#identities.keys().next().value!);
    this.#identities.set(keyHash, identity);
  }
  /** Forgets a key found invalid (revoked, expired, unknown) during a request: its next request reads the key item first. */
  forget(keyHash: string): void {
    this.#identities.delete(keyHash);
  }
}

/**
 * The revocation check of one request's key: the organization is known
 * (from the cache or the key item), whether the key is still valid is known
 * once {@link verified}. A store that read the organization item calls
 * {@link confirmListed} (through lib/organizations/api-keys.ts
 * `confirmActiveKey`); anything else calls {@link ensure}, which reads the
 * key item.
 */
export interface KeyCheck {
  /** SHA-256 hex digest of the key: the key item's address (`keys.apiKey(keyHash)`). */
  readonly keyHash: string;
  /** The organization the key belongs to. */
  readonly organizationId: string;
  /** The key's scopes (lib/http/scopes.ts); `undefined`: every scope. The pipeline checks them before any work. */
  readonly scopes: readonly Scope[] | undefined;
  /** The key's ID (`key_…`; ledger entries and the audit log name it); `undefined` on keys from before key IDs. */
  readonly keyId: string | undefined;
  /** The key's credit limits, enforced by the launch transaction (docs/authentication.md#per-key-credit-limits); `undefined`: none. */
  readonly limits: KeyCreditLimits | undefined;
  /** True once the key was found valid during this request (on its organization's list of active keys, or its key item). */
  readonly verified: boolean;
  /**
   * Verifies the key against its organization's list of active keys, read
   * during this request (lib/organizations/api-keys.ts `confirmActiveKey`).
   * The key was this organization's when the process cached it, so a key
   * not listed is a revoked one.
   * @param listed - whether the organization item lists the key as active.
   * @throws RevokedApiKeyError when it is not listed.
   */
  confirmListed(listed: boolean): void;
  /**
   * Reads the key item on its own (one GetItem) and verifies it; at most one
   * read per request, nothing when already verified (or refused: the same refusal again).
   * @throws InvalidApiKeyError, RevokedApiKeyError (see {@link confirm}); the read's own errors.
   */
  ensure(): Promise<void>;
}

class RequestKeyCheck implements KeyCheck {
  readonly keyHash: string;
  readonly organizationId: string;
  readonly scopes: readonly Scope[] | undefined;
  readonly keyId: string | undefined;
  readonly limits: KeyCreditLimits | undefined;
  readonly #findApiKey: ApiKeyLookup;
  readonly #now: () => number;
  /** Called once when the key is refused during this request (the cache forgets it). */
  readonly #onRefused: () => void;
  #verified = false;
  #reading: Promise<void> | undefined;
  /** Why the key was refused during this request: no second read to tell the same. */
  #refusal: Error | undefined;

  constructor(
    keyHash: string,
    identity: ApiKeyIdentity,
    findApiKey: ApiKeyLookup,
    now: () => number,
    onRefused: () => void = () => undefined,
  ) {
    this.keyHash = keyHash;
    this.organizationId = identity.organizationId;
    this.scopes = identity.scopes;
    this.keyId = identity.keyId;
    this.limits = identity.limits;
    this.#findApiKey = findApiKey;
    this.#now = now;
    this.#onRefused = onRefused;
  }

  /** Records why the key was refused (the cache forgets it) and returns the error to throw. */
  #refuse(error: Error): Error {
    if (!this.#refusal) this.#onRefused();
    return (this.#refusal = error);
  }

  get verified(): boolean {
    return this.#verified;
  }

  /**
   * Verifies the key item read during this request (`undefined`: not found).
   * @throws InvalidApiKeyError for a missing key item or one of another organization.
   * @throws RevokedApiKeyError for a revoked key.
   * @throws ExpiredApiKeyError for a key whose `expiresAt` has passed.
   */
  confirm(record: ApiKeyRecord | undefined): void {
    if (!record || record.organizationId !== this.organizationId) throw this.#refuse(new InvalidApiKeyError());
    if (record.revokedAt) throw this.#refuse(new RevokedApiKeyError());
    if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= this.#now()) throw this.#refuse(new ExpiredApiKeyError());
    this.#verified = true;
  }

  confirmListed(listed: boolean): void {
    if (!listed) throw this.#refuse(new RevokedApiKeyError());
    this.#verified = true;
  }

  ensure(): Promise<void> {
    if (this.#verified) return Promise.resolve();
    if (this.#refusal) return Promise.reject(this.#refusal);
    return (this.#reading ??= this.#findApiKey(this.keyHash).then((record) => this.confirm(record)));
  }
}

/** Whom a key refused at its first read belonged to (see {@link refusedKeyOf}). */
export interface RefusedKey {
  organizationId: string;
  /** The key's ID; `undefined` on keys from before key IDs. */
  keyId: string | undefined;
}

/** The refusals of keys read and found revoked or expired, by error: the audit log names their organization. */
const refusedKeys = new WeakMap<Error, RefusedKey>();

/**
 * The organization and key ID of a 401 refusal of a key that belongs to an organization (revoked or expired,
 * read during {@link authenticate}); `undefined` for any other error, an unknown key's included (it names no
 * organization: docs/audit.md "What is logged").
 */
export const refusedKeyOf = (error: unknown): RefusedKey | undefined => (error instanceof Error ? refusedKeys.get(error) : undefined);

/** The credential of an `Authorization: Bearer <credential>` header; `undefined` for any other header. */
const bearerCredential = (header: string | undefined): string | undefined =>
  header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1] : undefined;

/** Response header that marks every answer to a test key (docs/test-mode.md). */
export const TEST_MODE_HEADER = 'test-mode';

/**
 * The headers that mark an answer to a test key (docs/test-mode.md): `Test-Mode:
 * true` when the bearer credential has the test-key shape (`cek_test_…`),
 * whether or not the key is known, so refusals (401 included) carry it too;
 * none otherwise. Stamped on every response by the request tracing plugin
 * (lib/http/request-id.ts).
 * @param header - the raw `Authorization` header value.
 */
export function testModeHeaders(header: string | undefined): Record<string, string> {
  const apiKey = bearerCredential(header);
  return apiKey !== undefined && isTestApiKey(apiKey) ? { [TEST_MODE_HEADER]: 'true' } : {};
}

/**
 * Resolves an `Authorization` header to its organization and the request's
 * {@link KeyCheck}.
 *
 * A missing or malformed header, or a key of the wrong shape, is refused
 * without a database read. A key this process knows is not read here: the
 * check comes back unverified, for the request to verify (see the module
 * comment). An unknown one is read (one GetItem) and verified now.
 *
 * @param header - the raw `Authorization` header value, `Bearer cek_…`.
 * @param findApiKey - the key store's lookup by key hash (wired by the composition root); the key is hashed once, here.
 * @param cache - the process's key hash → identity cache; none: every key is read here.
 * @param now - the clock expiry is judged by (epoch milliseconds); tests move it.
 * @returns the key check (its `organizationId` is the organization ID, its `scopes` the key's).
 * @throws InvalidApiKeyError for a missing header (`missing_header`), one that is not `Bearer <key>` (`not_bearer`), or an unknown key (`unknown_key`).
 * @throws ExpiredApiKeyError for an expired key (read here).
 * @throws RevokedApiKeyError for a revoked key (read here), and for the documented always-revoked test key (`REVOKED_TEST_API_KEY`, no read).
 */
export async function authenticate(
  header: string | undefined,
  findApiKey: ApiKeyLookup,
  cache?: ApiKeyCache,
  now: () => number = Date.now,
): Promise<KeyCheck> {
  if (!header?.trim()) throw new InvalidApiKeyError('missing_header');
  const apiKey = bearerCredential(header);
  if (!apiKey) throw new InvalidApiKeyError('not_bearer');
  if (!API_KEY_PATTERN.test(apiKey)) throw new InvalidApiKeyError('unknown_key');
  if (apiKey === REVOKED_TEST_API_KEY) throw new RevokedApiKeyError();
  const keyHash = hashApiKey(apiKey);
  const known = cache?.identityOf(keyHash);
  if (known !== undefined) {
    if (known.expiresAt !== undefined && Date.parse(known.expiresAt) <= now()) {
      cache!.forget(keyHash);
      const expired = new ExpiredApiKeyError();
      refusedKeys.set(expired, { organizationId: known.organizationId, keyId: known.keyId });
      throw expired;
    }
    return new RequestKeyCheck(keyHash, known, findApiKey, now, () => cache!.forget(keyHash));
  }
  const record = await findApiKey(keyHash);
  if (!record) throw new InvalidApiKeyError();
  const identity: ApiKeyIdentity = {
    organizationId: record.organizationId,
    scopes: record.scopes,
    keyId: record.keyId,
    limits: record.limits,
    expiresAt: record.expiresAt,
  };
  const check = new RequestKeyCheck(keyHash, identity, findApiKey, now);
  try {
    check.confirm(record);
  } catch (error) {
    refusedKeys.set(error as Error, { organizationId: record.organizationId, keyId: record.keyId });
    throw error;
  }
  cache?.remember(keyHash, identity);
  return check;
}
