/**
 * The stored campaign and how it reads (docs/openapi.json; docs/README.md#a-campaigns-life-in-one-paragraph;
 * docs/lifetimes.md; docs/data-model.md "Expiry as read").
 */
import type { CampaignStatus } from '../errors';
import type { CreatedVia } from './schema';
import type { Campaign, CampaignListItem } from './docs';

/** Exclusion breakdown of a launch evaluation (accounts). */
export interface ExcludedCounts {
  total: number;
  invalid: number;
  recentlyEnriched: number;
  crmExcluded: number;
}

/** Result metrics (docs/launch.md#per-account-outcomes). */
export interface ResultMetrics {
  totalAccounts: number;
  totalContactsFound: number;
  /** Fraction 0..1. */
  pctAccountsWithContact: number;
  /** Fraction 0..1. */
  pctAccountsWithMobile: number;
}

/** The most recent failed or canceled attempt (docs/launch.md#canceling). */
export interface LastEnrichment {
  status: 'failed' | 'canceled';
  startedAt: string;
  endedAt: string | null;
  refunded: boolean;
}

/** An enrichment attempt: one launch that charged credits. */
export interface AttemptRecord {
  id: string;
  startedAt: string;
  /** Eligible accounts of the attempt (accounts; also the capacity it reserved). */
  eligible: number;
  /** Credits charged at launch. */
  charged: number;
  /** Credits per eligible account at launch (refunds use the same rate). */
  creditsPerAccount: number;
  /** Object key of the eligible account IDs. */
  eligibleObjectKey: string;
  /** Step Functions execution running the attempt. */
  executionArn: string;
  /** Request ID (X-Request-Id) of the enrich call that launched the attempt; its workflow's logs carry it (docs/idempotency.md#request-ids). */
  requestId?: string;
  /** ID of the API key whose enrich call launched the attempt: its charge and refunds count against that key's limits (docs/authentication.md#per-key-credit-limits). Absent: a key without an ID. */
  keyId?: string;
}

/** A campaign as stored in the table. */
export interface CampaignRecord {
  id: string;
  organizationId: string;
  name: string;
  /** Stored status; an `enriched` campaign past `resultsExpireAt` reads as `expired`. */
  status: CampaignStatus;
  createdVia: CreatedVia;
  excludeEnrichedWithinDays: number | null;
  createdAt: string;
  /** Distinct account IDs submitted. */
  accountsRequested: number;
  /** S3 key of the account list. */
  accountsObjectKey: string;
  accountsEligible: number | null;
  accountsExcluded: ExcludedCounts | null;
  /** Credits charged, net of refunds. */
  creditsCharged: number;
  lastEnrichment: LastEnrichment | null;
  completedAt?: string;
  resultsExpireAt?: string;
  results?: ResultMetrics;
  /** The current attempt while `enriching`; the completed one once `enriched`. */
  attempt?: AttemptRecord;
  /** When an operator asked to cancel the running attempt (its compensation is then `canceled`, never a resumption). */
  cancelRequestedAt?: string;
}

/**
 * Status of a campaign at `now`: `enriched` whose `resultsExpireAt` has been
 * reached reads as `expired`, to the second, whatever the stored value.
 */
export function statusAt(record: Pick<CampaignRecord, 'status' | 'resultsExpireAt'>, now: Date): CampaignStatus {
  if (record.status === 'enriched' && record.resultsExpireAt !== undefined && Date.parse(record.resultsExpireAt) <= now.getTime()) {
    return 'expired';
  }
  return record.status;
}

/**
 * The campaign as the API shows it, with the presence rules of the spec:
 * `completedAt` and `results` only while `enriched`; `resultsExpireAt` on
 * `enriched` and `expired`.
 * @param remainingCredits - the organization's live smb balance (credits).
 */
export function toCampaign(record: CampaignRecord, remainingCredits: number, now = new Date()): Campaign {
  const status = statusAt(record, now);
  // Nested objects are rebuilt field by field: stored maps carry no key order, and no stray attribute may leak.
  const excluded = record.accountsExcluded;
  const last = record.lastEnrichment;
  const campaign: Campaign = {
    id: record.id,
    status,
    createdVia: record.createdVia,
    name: record.name,
    accounts: {
      requested: record.accountsRequested,
      eligible: record.accountsEligible,
      excluded: excluded && {
        total: excluded.total,
        invalid: excluded.invalid,
        recentlyEnriched: excluded.recentlyEnriched,
        crmExcluded: excluded.crmExcluded,
      },
    },
    credits: { charged: record.creditsCharged, remaining: remainingCredits },
    excludeEnrichedWithinDays: record.excludeEnrichedWithinDays,
    lastEnrichment: last && { status: last.status, startedAt: last.startedAt, endedAt: last.endedAt, refunded: last.refunded },
    createdAt: record.createdAt,
  };
  if (status === 'enriched' && record.results) {
    const results = record.results;
    campaign.completedAt = record.completedAt;
    campaign.results = {
      totalAccounts: results.totalAccounts,
      totalContactsFound: results.totalContactsFound,
      pctAccountsWithContact: results.pctAccountsWithContact,
      pctAccountsWithMobile: results.pctAccountsWithMobile,
    };
  }
  if ((status === 'enriched' || status === 'expired') && record.resultsExpireAt) campaign.resultsExpireAt = record.resultsExpireAt;
  return campaign;
}

/** The list item of a campaign at `now`. */
export function toListItem(
  record: Pick<CampaignRecord, 'id' | 'status' | 'createdVia' | 'name' | 'excludeEnrichedWithinDays' | 'createdAt' | 'resultsExpireAt'>,
  now = new Date(),
): CampaignListItem {
  return {
    id: record.id,
    status: statusAt(record, now),
    createdVia: record.createdVia,
    name: record.name,
    excludeEnrichedWithinDays: record.excludeEnrichedWithinDays ?? null,
    createdAt: record.createdAt,
  };
}
