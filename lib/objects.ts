/**
 * The data bucket's object keys, declared in one place (as lib/db/table.ts
 * declares the table's keys; docs/data-model.md). Every key of an
 * organization's data starts with a prefix of that organization, so a grant
 * or a lifecycle rule can be scoped by prefix.
 */

/** Top-level prefixes of the data bucket. */
export const OBJECT_PREFIXES = {
  /** Account lists, eligible lists and result parts, per organization and campaign. */
  campaigns: 'campaigns/',
  /** Export files (docs/lifetimes.md): deleted by the bucket's lifecycle rule after 1 day. */
  exports: 'exports/',
  /** Account-ID files PUT to a presigned URL (docs/campaigns.md#large-account-lists-upload-first): deleted by the bucket's lifecycle rule after 1 day. */
  uploads: 'uploads/',
  /**
   * Former recency markers (before issue #29): one object per enriched campaign, its
   * eligible IDs, under `recency/<org>/<completedAt>/`. No longer written: moved into
   * the account history shards by lib/migrations/history-shards.ts; the bucket's
   * lifecycle rule expires any left after the longest window.
   */
  recency: 'recency/',
  /** Former CRM target lists of an organization (README.md#operator-cli), one ID a line; moved like the markers. */
  crm: 'crm/',
} as const;

const campaignPrefix = (organizationId: string, campaignId: string) => `${OBJECT_PREFIXES.campaigns}${organizationId}/${campaignId}/`;
const attemptsPrefix = (organizationId: string, campaignId: string) => `${campaignPrefix(organizationId, campaignId)}attempts/`;
const attemptPrefix = (organizationId: string, campaignId: string, attemptId: string) =>
  `${attemptsPrefix(organizationId, campaignId)}${attemptId}/`;
const evaluationsPrefix = (organizationId: string, campaignId: string) => `${campaignPrefix(organizationId, campaignId)}evaluations/`;
const pad = (index: number) => String(index).padStart(6, '0');

/**
 * IAM key patterns of the objects storage expiry deletes (lib/enrichment/attempt-objects.ts):
 * every attempt's and every evaluation's objects. The only objects any function may delete.
 */
export const EXPIRING_KEY_PATTERNS = [`${OBJECT_PREFIXES.campaigns}*/attempts/*`, `${OBJECT_PREFIXES.campaigns}*/evaluations/*`] as const;

/** Key builders, one per kind of object. Nothing else in the code spells an object key. */
export const objectKeys = {
  /** The distinct account IDs submitted at create, one per line. */
  accountList: (organizationId: string, campaignId: string) => `${campaignPrefix(organizationId, campaignId)}accounts.txt`,
  /** The eligible account IDs of an attempt, one per line. */
  eligibleList: (organizationId: string, campaignId: string, attemptId: string) =>
    `${attemptPrefix(organizationId, campaignId, attemptId)}eligible.txt`,
  /** Prefix of an attempt's result parts (JSON lines, one part per batch). */
  resultsPrefix: (organizationId: string, campaignId: string, attemptId: string) =>
    `${attemptPrefix(organizationId, campaignId, attemptId)}results/`,
  /**
   * The accounts of one workflow batch (`batchIndex`, 0-based), one JSON array a line (the
   * account's warehouse fields, lib/enrichment/attempt-objects.ts): written at launch, read by that batch's FindContactsBatch.
   * (Attempts launched before issue #29 wrote `….txt`, IDs only; those batches read the eligible list.)
   */
  batchAccounts: (organizationId: string, campaignId: string, attemptId: string, batchIndex: number) =>
    `${attemptPrefix(organizationId, campaignId, attemptId)}batches/${pad(batchIndex)}.jsonl`,
  /** Prefix of an attempt's batch account objects. */
  batchesPrefix: (organizationId: string, campaignId: string, attemptId: string) =>
    `${attemptPrefix(organizationId, campaignId, attemptId)}batches/`,
  /** Prefix of everything one attempt wrote (eligible list, batch objects, result parts). */
  attemptPrefix,
  /** Prefix of every attempt of a campaign. */
  attemptsPrefix,
  /** Prefix of every object of one launch evaluation (outcome chunks, batch contact counts; lib/enrichment/outcomes.ts). */
  evaluationPrefix: (organizationId: string, campaignId: string, evaluationId: string) =>
    `${evaluationsPrefix(organizationId, campaignId)}${evaluationId}/`,
  /** Prefix of every evaluation of a campaign. */
  evaluationsPrefix,
  /** Prefix of an organization's former recency markers (read and deleted by lib/migrations/history-shards.ts). */
  recencyPrefix: (organizationId: string) => `${OBJECT_PREFIXES.recency}${organizationId}/`,
  /**
   * Former recency marker of a campaign completed at `completedAt` (ISO 8601 UTC with
   * milliseconds, `Date.toISOString()`: lexical order is time order). Without
   * `campaignId`, the listing position of `completedAt` itself.
   */
  recencyMarker: (organizationId: string, completedAt: string, campaignId?: string) =>
    `${OBJECT_PREFIXES.recency}${organizationId}/${completedAt}/${campaignId === undefined ? '' : `${campaignId}.txt`}`,
  /** Prefix of an organization's former CRM target lists (read and deleted by lib/migrations/history-shards.ts). */
  crmPrefix: (organizationId: string) => `${OBJECT_PREFIXES.crm}${organizationId}/`,
  /** One former CRM target list (`listId` sorts by the time it was written). */
  crmList: (organizationId: string, listId: string) => `${OBJECT_PREFIXES.crm}${organizationId}/${listId}.txt`,
  /** Prefix of a campaign's export files (an erasure deletes them: lib/privacy/erasure.ts). */
  exportsPrefix: (organizationId: string, campaignId: string) => `${OBJECT_PREFIXES.exports}${organizationId}/${campaignId}/`,
  /** An export file. */
  export: (organizationId: string, campaignId: string, exportId: string) =>
    `${OBJECT_PREFIXES.exports}${organizationId}/${campaignId}/${exportId}.csv`,
  /**
   * The organization, campaign and attempt of an object under an attempt's prefix (a result part's key, say), read
   * back from the key; undefined for any other key.
   */
  attemptOf: (key: string): { organizationId: string; campaignId: string; attemptId: string } | undefined => {
    const [top, organizationId, campaignId, attempts, attemptId, ...rest] = key.split('/');
    if (
      `${top}/` !== OBJECT_PREFIXES.campaigns ||
      attempts !== 'attempts' ||
      !organizationId ||
      !campaignId ||
      !attemptId ||
      rest.length === 0
    )
      return undefined;
    return { organizationId, campaignId, attemptId };
  },
  /** An uploaded account-ID file (docs/campaigns.md#large-account-lists-upload-first), as the client PUT it. */
  upload: (organizationId: string, uploadId: string) => `${OBJECT_PREFIXES.uploads}${organizationId}/${uploadId}`,
};
