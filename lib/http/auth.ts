/**
 * Bearer API-key authentication (spec "Authentication"; decisions §6).
 */
import { API_KEY_PATTERN } from '../ids';
import { InvalidApiKeyError, RevokedApiKeyError } from '../errors';
import type { ApiKeyRecord } from '../organizations/store';

/** Finds the stored record of a plaintext API key (by its hash); `undefined` when unknown. */
export type ApiKeyLookup = (apiKey: string) => Promise<ApiKeyRecord | undefined>;

/**
 * Resolves an `Authorization` header to the organization its key belongs to.
 *
 * A missing or malformed header, or a key of the wrong shape, is refused
 * without a database read.
 *
 * @param header - the raw `Authorization` header value, `Bearer cek_…`.
 * @param findApiKey - the key store's lookup (wired by the composition root).
 * @returns the organization ID.
 * @throws InvalidApiKeyError for a missing, malformed or unknown key.
 * @throws RevokedApiKeyError for a revoked key.
 */
export async function authenticate(header: string | undefined, findApiKey: ApiKeyLookup): Promise<string> {
  const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  const apiKey = match?.[1];
  if (!apiKey || !API_KEY_PATTERN.test(apiKey)) throw new InvalidApiKeyError();
  const record = await findApiKey(apiKey);
  if (!record) throw new InvalidApiKeyError();
  if (record.revokedAt) throw new RevokedApiKeyError();
  return record.organizationId;
}
