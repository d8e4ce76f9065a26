/**
 * Identifiers (docs/authentication.md): a prefix plus characters of the spec's base58
 * alphabet, drawn from a cryptographic source by nanoid.
 */
import { customAlphabet } from 'nanoid';
import { createHash, randomBytes } from 'node:crypto';

/** The alphabet of the spec's campaign ID convention (base58, no 0, O, I, l). */
export const ID_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/**
 * The pattern of an ID: `prefix` (a regular expression's source) then `length` characters of {@link ID_ALPHABET}.
 * The patterns below call it marked pure, with literal arguments, so a bundle drops those its function never reads
 * (a pure-marked `new RegExp` of a template literal stays: esbuild cannot tell that the template has no side effect).
 */
const idPattern = (prefix: string, length: number): RegExp => new RegExp(`^${prefix}[${ID_ALPHABET}]{${length}}$`);

const id21 = /* @__PURE__ */ customAlphabet(ID_ALPHABET, 21);
const id40 = /* @__PURE__ */ customAlphabet(ID_ALPHABET, 40);

/** Campaign ID pattern: `camp_` + 21 base58 characters. */
export const CAMPAIGN_ID_PATTERN = /* @__PURE__ */ idPattern('camp_', 21);
/** Organization ID pattern: `org_` + 21 base58 characters. */
export const ORGANIZATION_ID_PATTERN = /* @__PURE__ */ idPattern('org_', 21);
/** Webhook endpoint ID pattern: `whe_` + 21 base58 characters (docs/webhooks.md). */
export const WEBHOOK_ENDPOINT_ID_PATTERN = /* @__PURE__ */ idPattern('whe_', 21);
/** Webhook message ID pattern (the `webhook-id` header): `msg_` + 21 base58 characters. */
export const WEBHOOK_MESSAGE_ID_PATTERN = /* @__PURE__ */ idPattern('msg_', 21);
/** Webhook delivery (attempt) ID pattern: `whd_` + 21 base58 characters. */
export const WEBHOOK_DELIVERY_ID_PATTERN = /* @__PURE__ */ idPattern('whd_', 21);
/** Attempt ID pattern: `att_` + 21 base58 characters ({@link newAttemptId}). */
export const ATTEMPT_ID_PATTERN = /* @__PURE__ */ idPattern('att_', 21);
/** Upload ID pattern: `upl_` + 21 base58 characters (docs/campaigns.md#large-account-lists-upload-first). */
export const UPLOAD_ID_PATTERN = /* @__PURE__ */ idPattern('upl_', 21);
/** API key pattern: `cek_` + 40 base58 characters (a live key), or `cek_test_` + 40 (a test key, docs/test-mode.md). */
export const API_KEY_PATTERN = /* @__PURE__ */ idPattern('cek_(test_)?', 40);
/** Test API key pattern (docs/test-mode.md): `cek_test_` + 40 base58 characters; such a key acts on its organization's test twin. */
export const TEST_API_KEY_PATTERN = /* @__PURE__ */ idPattern('cek_test_', 40);
/**
 * Test organization (twin) ID pattern (docs/test-mode.md): `org_test_` + 21 base58
 * characters, derived from its live organization's ID
 * ({@link testOrganizationIdOf}). Internal: a test key's answers show the
 * live organization's ID.
 */
export const TEST_ORGANIZATION_ID_PATTERN = /* @__PURE__ */ idPattern('org_test_', 21);
/**
 * The documented always-revoked test key (docs/test-mode.md): it answers
 * 401 `revoked_api_key` without a read, so an integration can try its
 * handling of a revoked key without an operator.
 */
export const REVOKED_TEST_API_KEY = 'cek_test_RevokedRevokedRevokedRevokedRevokedRevok';

/** A new campaign ID, e.g. `camp_3kTMd9nPq2ZbXw7vRfGh1`. */
export const newCampaignId = (): string => `camp_${id21()}`;
/** A new organization ID, e.g. `org_…`. */
export const newOrganizationId = (): string => `org_${id21()}`;
/** A new API key, e.g. `cek_…` (40 characters after the prefix). Only its hash is ever stored. */
export const newApiKey = (): string => `cek_${id40()}`;
/** A new test API key, `cek_test_` + 40 characters (docs/test-mode.md). Only its hash is ever stored. */
export const newTestApiKey = (): string => `cek_test_${id40()}`;
/** Whether an API key (plaintext) has the test-key shape: its requests run in test mode (docs/test-mode.md). */
export const isTestApiKey = (apiKey: string): boolean => apiKey.startsWith('cek_test_');
/** Whether an organization ID is a test twin's (docs/test-mode.md): everything it owns is test data. */
export const isTestOrganizationId = (organizationId: string): boolean => organizationId.startsWith('org_test_');
/** The ID of a live organization's test twin: derived, so the same live organization always has the same twin. */
export const testOrganizationIdOf = (liveOrganizationId: string): string => derivedId('org_test', liveOrganizationId);
/** A new upload ID, e.g. `upl_…` (docs/campaigns.md#large-account-lists-upload-first). */
export const newUploadId = (): string => `upl_${id21()}`;
/** A suppression ID: `sup_` + 21 base58 characters (derived from the scope and the hash: lib/privacy/store.ts). */
export const SUPPRESSION_ID_PATTERN = /* @__PURE__ */ idPattern('sup_', 21);
/** An erasure ID: `era_` + 21 base58 characters (derived from the organization and requestRef: lib/privacy/store.ts). */
export const ERASURE_ID_PATTERN = /* @__PURE__ */ idPattern('era_', 21);
/** A new enrichment attempt ID (21 base58 characters). */
export const newAttemptId = (): string => `att_${id21()}`;

/** SHA-256 hex digest of an API key: the only form in which keys are stored. */
export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey, 'utf8').digest('hex');

/**
 * `<prefix>_` + 21 base58 characters taken from a SHA-256 digest of `parts`:
 * the same parts always give the same ID (idempotent writes of derived records).
 */
export function derivedId(prefix: string, ...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let id = `${prefix}_`;
  for (let i = 0; i < 21; i++) id += ID_ALPHABET[digest[i]! % ID_ALPHABET.length];
  return id;
}

/** A new API key ID, `key_` + 21 characters (docs/authentication.md): names a key across rotations; never a secret. */
export const newApiKeyId = (): string => `key_${id21()}`;

/** Pattern of an API key ID. */
export const API_KEY_ID_PATTERN = /* @__PURE__ */ idPattern('key_', 21);

/** A new webhook endpoint ID, e.g. `whe_…` (docs/webhooks.md). */
export const newWebhookEndpointId = (): string => `whe_${id21()}`;

/** A new webhook event ID (`evt_…`) for events that derive from nothing else (`webhook.test`). */
export const newWebhookEventId = (): string => `evt_${id21()}`;

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks' secret format). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** Characters of a delivery ID that encode its time (58^8 ms ≈ 4,000 years). */
const TIME_CHARS = 8;
const id13 = /* @__PURE__ */ customAlphabet(ID_ALPHABET, 21 - TIME_CHARS);

/**
 * A new delivery ID, `whd_` + 21 base58 characters whose first 8 encode
 * `at` in milliseconds: IDs sort (as strings) in time order, so the delivery
 * log is newest first by key alone.
 */
export function newWebhookDeliveryId(at: Date = new Date()): string {
  let time = '';
  for (let ms = at.getTime(), i = 0; i < TIME_CHARS; i++, ms = Math.floor(ms / ID_ALPHABET.length))
    time = ID_ALPHABET[ms % ID_ALPHABET.length] + time;
  return `whd_${time}${id13()}`;
}
