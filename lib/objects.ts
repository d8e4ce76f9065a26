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
  /** Account-ID files PUT to a presigned URL (decisions §14): deleted by the bucket's lifecycle rule after 1 day. */
  uploads: 'uploads/',
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
  /** An export file. */
  export: (organizationId: string, campaignId: string, exportId: string) => `${OBJECT_PREFIXES.exports}${organizationId}/${campaignId}/${exportId}.csv`,
  /** An uploaded account-ID file (decisions §14), as the client PUT it. */
  upload: (organizationId: string, uploadId: string) => `${OBJECT_PREFIXES.uploads}${organizationId}/${uploadId}`,
};
