/**
 * The data bucket's object keys, declared in one place (as lib/db/table.ts
 * declares the table's keys; docs/data-model.md "Objects"). Every key of an
 * organization's data starts with a prefix of that organization, so a grant
 * or a lifecycle rule can be scoped by prefix.
 */

/** Top-level prefixes of the data bucket. */
export const OBJECT_PREFIXES = {
  /** Account lists, eligible lists and result parts, per organization and campaign. */
  campaigns: 'campaigns/',
  /** Export files (decisions §5): deleted by the bucket's lifecycle rule after 1 day. */
  exports: 'exports/',
  /**
   * Recency markers (decisions §4): one object per enriched campaign, its
   * eligible IDs, under `recency/<org>/<completedAt>/`, so a listing from the
   * window's start reads only completions inside it. Expired by the bucket's
   * lifecycle rule after the longest window.
   */
  recency: 'recency/',
  /** CRM target lists of an organization (decisions §7), one ID a line. */
  crm: 'crm/',
} as const;

const campaignPrefix = (organizationId: string, campaignId: string) => `${OBJECT_PREFIXES.campaigns}${organizationId}/${campaignId}/`;
const attemptPrefix = (organizationId: string, campaignId: string, attemptId: string) => `${campaignPrefix(organizationId, campaignId)}attempts/${attemptId}/`;

/** Key builders, one per kind of object. Nothing else in the code spells an object key. */
export const objectKeys = {
  /** The distinct account IDs submitted at create, one per line. */
  accountList: (organizationId: string, campaignId: string) => `${campaignPrefix(organizationId, campaignId)}accounts.txt`,
  /** The eligible account IDs of an attempt, one per line. */
  eligibleList: (organizationId: string, campaignId: string, attemptId: string) => `${attemptPrefix(organizationId, campaignId, attemptId)}eligible.txt`,
  /** Prefix of an attempt's result parts (JSON lines, one part per batch). */
  resultsPrefix: (organizationId: string, campaignId: string, attemptId: string) => `${attemptPrefix(organizationId, campaignId, attemptId)}results/`,
  /** Prefix of an organization's recency markers (list with StartAfter = {@link objectKeys.recencyMarker} of the window's start). */
  recencyPrefix: (organizationId: string) => `${OBJECT_PREFIXES.recency}${organizationId}/`,
  /**
   * Recency marker of a campaign completed at `completedAt` (ISO 8601 UTC with
   * milliseconds, `Date.toISOString()`: lexical order is time order). Without
   * `campaignId`, the listing position of `completedAt` itself.
   */
  recencyMarker: (organizationId: string, completedAt: string, campaignId?: string) =>
    `${OBJECT_PREFIXES.recency}${organizationId}/${completedAt}/${campaignId === undefined ? '' : `${campaignId}.txt`}`,
  /** Prefix of an organization's CRM target lists. */
  crmPrefix: (organizationId: string) => `${OBJECT_PREFIXES.crm}${organizationId}/`,
  /** One CRM target list (`listId` sorts by the time it was written). */
  crmList: (organizationId: string, listId: string) => `${OBJECT_PREFIXES.crm}${organizationId}/${listId}.txt`,
  /** An export file. */
  export: (organizationId: string, campaignId: string, exportId: string) => `${OBJECT_PREFIXES.exports}${organizationId}/${campaignId}/${exportId}.csv`,
};
