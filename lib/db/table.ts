/**
 * The single table's schema: key attributes, indexes and every entity's keys,
 * declared in one place (docs/data-model.md explains the access patterns).
 *
 * The CDK stack and the local stack both build the table from
 * {@link TABLE_DEFINITION}, so the local table is the deployed one.
 */

/** A global secondary index of the table. */
export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey: string;
  /** Non-key attributes projected into the index (INCLUDE projection). */
  projectedAttributes: string[];
}

/** Attributes a campaign list item needs (docs/openapi.json) plus what computes the read-time status. */
const LIST_ITEM_ATTRIBUTES = ['id', 'status', 'createdVia', 'name', 'excludeEnrichedWithinDays', 'createdAt', 'resultsExpireAt'];
/** Attributes of a ledger entry (docs/launch.md#the-credit-ledger) besides `id` and `createdAt`. */
const LEDGER_ENTRY_ATTRIBUTES = ['kind', 'reason', 'amount', 'campaignId', 'attemptId', 'note'];
/** What the overloaded list indexes project: campaign list items and ledger entries. */
const LIST_INDEX_ATTRIBUTES = [...LIST_ITEM_ATTRIBUTES, ...LEDGER_ENTRY_ATTRIBUTES];

/**
 * The list indexes (docs/pagination.md, docs/launch.md), by the filter each serves. gsi1-gsi4
 * are overloaded: the same four indexes list campaigns (partitions
 * `ORG#…#CAMPAIGNS…`) and ledger entries (`ORG#…#LEDGER…`), newest first by
 * `listSk` = `createdAt#id`; gsi1 also lists organizations (`ORGANIZATIONS`).
 */
export const TABLE_INDEXES = {
  /** Campaigns of an organization, newest first (list without filters). */
  all: { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'listSk', projectedAttributes: LIST_INDEX_ATTRIBUTES },
  /** Campaigns of an organization in one status. */
  byStatus: { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'listSk', projectedAttributes: LIST_INDEX_ATTRIBUTES },
  /** Campaigns of an organization created through one surface. */
  byCreatedVia: { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'listSk', projectedAttributes: LIST_INDEX_ATTRIBUTES },
  /** Campaigns of an organization in one status and created through one surface. */
  byStatusAndCreatedVia: { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'listSk', projectedAttributes: LIST_INDEX_ATTRIBUTES },
  /**
   * Sparse: only campaigns stored as `enriched`, by `resultsExpireAt`. Finds
   * the ones whose results lapsed before the workflow rewrote them as
   * `expired` (normally none), without reading live ones.
   */
  enrichedByExpiry: {
    indexName: 'gsi5',
    partitionKey: 'gsi5pk',
    sortKey: 'expirySk',
    projectedAttributes: [...LIST_ITEM_ATTRIBUTES, 'listSk'],
  },
  /**
   * Sparse: enriched campaigns whose per-account enrichment times are not all
   * recorded yet. Launch evaluation treats their accounts as enriched at
   * `completedAt`, so recency holds from the moment a campaign reads `enriched`.
   */
  recencyPending: { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'listSk', projectedAttributes: ['id', 'completedAt', 'attempt'] },
} as const satisfies Record<string, IndexDefinition>;

/** Key schema and indexes of the table. */
export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'ttl',
  indexes: Object.values(TABLE_INDEXES) as IndexDefinition[],
} as const;

/** The ledger's uses of the overloaded list indexes, by the filter each serves (docs/launch.md#the-credit-ledger). */
export const LEDGER_INDEXES = {
  all: TABLE_INDEXES.all,
  byKind: TABLE_INDEXES.byStatus,
  byCampaign: TABLE_INDEXES.byCreatedVia,
  byKindAndCampaign: TABLE_INDEXES.byStatusAndCreatedVia,
} as const satisfies Record<string, IndexDefinition>;

/**
 * The event feed's uses of the overloaded list indexes (docs/events.md), by the filter each serves:
 * partitions `ORG#…#EVENTS…`, newest first by `listSk` = `occurredAt#eventId`.
 */
export const EVENT_INDEXES = {
  all: TABLE_INDEXES.all,
  byType: TABLE_INDEXES.byStatus,
  byCampaign: TABLE_INDEXES.byCreatedVia,
  byTypeAndCampaign: TABLE_INDEXES.byStatusAndCreatedVia,
} as const satisfies Record<string, IndexDefinition>;

/**
 * The audit log's uses of the overloaded list indexes (docs/audit.md), by the filter each serves:
 * partitions `ORG#…#AUDIT#…`, newest first by `listSk` = `at#entryId`. Without a key or operation
 * filter the log is read from its own partition (`keys.auditEntry`), not from an index.
 */
export const AUDIT_INDEXES = {
  byKey: TABLE_INDEXES.byStatus,
  byOperation: TABLE_INDEXES.byCreatedVia,
  byKeyAndOperation: TABLE_INDEXES.byStatusAndCreatedVia,
} as const satisfies Record<string, IndexDefinition>;

/**
 * Webhook work waiting for its time (docs/webhooks.md): events not yet fanned
 * out to endpoints and messages whose next attempt is due, in gsi6 (sparse)
 * under one partition, by due time. The local stack's poller reads it; in
 * AWS the table's stream and the delivery state machine drive the same work
 * and the index only shows what is in flight.
 */
export const WEBHOOK_PENDING_INDEX = TABLE_INDEXES.recencyPending;

/**
 * Erasure jobs not yet ended (docs/privacy.md "The erasure job"): in gsi6
 * (sparse) under one partition, by creation time, while `pending` or
 * `running`. The local stack resumes them at start; in AWS the queue's
 * redelivery does, and the index shows what is in flight.
 */
export const UNFINISHED_ERASURES_INDEX = TABLE_INDEXES.recencyPending;

/** Keys of the sparse expiry index, present only while a campaign is stored as `enriched`. */
const enrichedExpiry = (organizationId: string, campaign: { id: string; resultsExpireAt: string }) => ({
  gsi5pk: `ORG#${organizationId}#ENRICHED`,
  expirySk: `${campaign.resultsExpireAt}#${campaign.id}`,
});

/** IAM pattern of the partitions of {@link keys.limitCounter}: what a read-only API function may write (infra/constructs/route-permissions.ts). */
export const LIMIT_COUNTER_KEY_PATTERN = 'ORG#*#LIMIT#*';

/** Key builders, one per entity. Nothing else in the code spells a key. */
export const keys = {
  /** Organization item: balances, capacity. */
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' }),
  /** API key item, addressed by the SHA-256 hex digest of the key. */
  apiKey: (keyHash: string) => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),
  /** What an organization's API key is across rotations (name, scopes, limits, its current secret's hash): one partition per organization, listed by key ID. */
  apiKeyDescription: (organizationId: string, keyId: string) => ({ pk: `ORG#${organizationId}#KEYS`, sk: `KEY#${keyId}` }),
  /** The partition of {@link keys.apiKeyDescription}. */
  apiKeyDescriptions: (organizationId: string) => `ORG#${organizationId}#KEYS`,
  /**
   * One audit-log entry (docs/audit.md): one partition per organization, sorted by `at#entryId`
   * (newest first when read backwards). The entry's id is derived from its request, so the entry a
   * change wrote in its transaction and the one the pipeline writes after an error are the same item.
   */
  auditEntry: (organizationId: string, entry: { at: string; id: string }) => ({
    pk: `ORG#${organizationId}#AUDIT`,
    sk: `${entry.at}#${entry.id}`,
  }),
  /** The partition of {@link keys.auditEntry}. */
  auditEntries: (organizationId: string) => `ORG#${organizationId}#AUDIT`,
  /** Index keys of an audit entry for its filters ({@link AUDIT_INDEXES}); a request without a key ID has no key partitions. */
  auditEntryIndexes: (organizationId: string, entry: { at: string; id: string; keyId: string | null; operation: string }) => ({
    listSk: `${entry.at}#${entry.id}`,
    gsi3pk: `ORG#${organizationId}#AUDIT#OP#${entry.operation}`,
    ...(entry.keyId === null
      ? {}
      : {
          gsi2pk: `ORG#${organizationId}#AUDIT#KEY#${entry.keyId}`,
          gsi4pk: `ORG#${organizationId}#AUDIT#KEY#${entry.keyId}#OP#${entry.operation}`,
        }),
  }),
  /** The index partition of the audit entries of one key and/or one operation ({@link AUDIT_INDEXES}). */
  auditIndexPartition: (organizationId: string, filter: { keyId?: string; operation?: string }) =>
    filter.keyId !== undefined && filter.operation !== undefined
      ? `ORG#${organizationId}#AUDIT#KEY#${filter.keyId}#OP#${filter.operation}`
      : filter.keyId !== undefined
        ? `ORG#${organizationId}#AUDIT#KEY#${filter.keyId}`
        : `ORG#${organizationId}#AUDIT#OP#${filter.operation}`,
  /** Campaign item, inside its organization's partition. */
  campaign: (organizationId: string, campaignId: string) => ({ pk: `ORG#${organizationId}`, sk: `CAMPAIGN#${campaignId}` }),
  /** Prefix of an organization's campaign items in its partition (for begins_with: the credits reconciliation). */
  campaignPrefix: () => 'CAMPAIGN#',
  /** Which organization a campaign belongs to (operator commands that name only the campaign). */
  campaignOwner: (campaignId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: 'OWNER' }),
  /** Per-account outcomes of a campaign's most recent launch evaluation: manifest and progress (lib/enrichment/outcomes.ts). */
  campaignOutcomes: (campaignId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: 'OUTCOMES' }),
  /** Head of an attempt's results sequence: the seqs given so far (lib/results/sequence.ts). */
  resultsHead: (campaignId: string, attemptId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: `RESULTS#${attemptId}` }),
  /**
   * One readable batch's seqs in an attempt (lib/results/sequence.ts), in a partition per attempt, sorted
   * by its last seq (10 digits), so the ranges after a seq are one Query.
   */
  resultsRange: (campaignId: string, attemptId: string, toSeq: number) => ({
    pk: `CAMPAIGN#${campaignId}#RESULTS#${attemptId}`,
    sk: `SEQ#${String(toSeq).padStart(10, '0')}`,
  }),
  /** Index keys of a campaign for list (docs/pagination.md). */
  campaignIndexes: (
    organizationId: string,
    campaign: { id: string; createdAt: string; status: string; createdVia: string; resultsExpireAt?: string },
  ) => ({
    gsi1pk: `ORG#${organizationId}#CAMPAIGNS`,
    gsi2pk: `ORG#${organizationId}#CAMPAIGNS#STATUS#${campaign.status}`,
    gsi3pk: `ORG#${organizationId}#CAMPAIGNS#VIA#${campaign.createdVia}`,
    gsi4pk: `ORG#${organizationId}#CAMPAIGNS#STATUS#${campaign.status}#VIA#${campaign.createdVia}`,
    listSk: `${campaign.createdAt}#${campaign.id}`,
    ...(campaign.status === 'enriched' && campaign.resultsExpireAt
      ? enrichedExpiry(organizationId, { ...campaign, resultsExpireAt: campaign.resultsExpireAt })
      : {}),
  }),
  enrichedExpiry,
  /** Partition of the recency-pending index of an organization. */
  recencyPending: (organizationId: string) => ({ gsi6pk: `ORG#${organizationId}#RECENCY_PENDING` }),
  /** Organizations registry partition of gsi1 (reconciliation walks every organization). */
  organizationRegistry: (organization: { id: string; createdAt: string }) => ({
    gsi1pk: 'ORGANIZATIONS',
    listSk: `${organization.createdAt}#${organization.id}`,
  }),
  /**
   * Immutable ledger entry of a credit movement, in its organization's
   * partition: `LEDGER#<campaignId or ->#<entryId>`, so an organization's
   * ledger and a campaign's are each one consistent Query by prefix.
   */
  ledgerEntry: (organizationId: string, entry: { id: string; campaignId: string | null }) => ({
    pk: `ORG#${organizationId}`,
    sk: `LEDGER#${entry.campaignId ?? '-'}#${entry.id}`,
  }),
  /** Prefix of an organization's ledger entries, or of one campaign's (for begins_with). */
  ledgerPrefix: (campaignId?: string) => (campaignId === undefined ? 'LEDGER#' : `LEDGER#${campaignId}#`),
  /** List-index keys of a ledger entry: all, by kind, by campaign, by both; newest first. */
  ledgerIndexes: (organizationId: string, entry: { id: string; createdAt: string; kind: string; campaignId: string | null }) => ({
    gsi1pk: `ORG#${organizationId}#LEDGER`,
    gsi2pk: `ORG#${organizationId}#LEDGER#KIND#${entry.kind}`,
    ...(entry.campaignId
      ? {
          gsi3pk: `ORG#${organizationId}#LEDGER#CAMPAIGN#${entry.campaignId}`,
          gsi4pk: `ORG#${organizationId}#LEDGER#KIND#${entry.kind}#CAMPAIGN#${entry.campaignId}`,
        }
      : {}),
    listSk: `${entry.createdAt}#${entry.id}`,
  }),
  /** Partition of an organization's webhook items: endpoints, their counter, events, messages and the delivery log (docs/webhooks.md). */
  webhooks: (organizationId: string) => `ORG#${organizationId}#WEBHOOKS`,
  /** Counter of an organization's webhook endpoints (at most 10). */
  webhookEndpointCount: (organizationId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: 'ENDPOINTS' }),
  /** A webhook endpoint. */
  webhookEndpoint: (organizationId: string, endpointId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: `ENDPOINT#${endpointId}` }),
  /** An event (the outbox row written with the state change that caused it). */
  webhookEvent: (organizationId: string, eventId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: `EVENT#${eventId}` }),
  /** A message: one event for one endpoint, its state and retry schedule. */
  webhookMessage: (organizationId: string, messageId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: `MESSAGE#${messageId}` }),
  /** One delivery attempt of a message (the delivery log); IDs sort in time order. */
  webhookDelivery: (organizationId: string, deliveryId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: `DELIVERY#${deliveryId}` }),
  /**
   * Privacy partition of an organization, or of the operator's global list (`scope` = `GLOBAL`): suppressions,
   * the compact hash set, erasures (lib/privacy/store.ts; docs/data-model.md "Privacy"). Holds hashes, never a raw identifier.
   */
  privacy: (scope: string) => `PRIVACY#${scope}`,
  /** One suppression of a scope (an organization, or `GLOBAL`), by its ID (derived from scope and hash: one per hash). */
  suppression: (scope: string, suppressionId: string) => ({ pk: `PRIVACY#${scope}`, sk: `SUP#${suppressionId}` }),
  /** The compact set of a scope's suppressed hashes (8-byte prefixes, a binary set): what a delivery reads once. */
  suppressionSet: (scope: string) => ({ pk: `PRIVACY#${scope}`, sk: 'SUPSET' }),
  /** One erasure of an organization, by its ID (derived from the organization and `requestRef`: one per requestRef). */
  erasure: (scope: string, erasureId: string) => ({ pk: `PRIVACY#${scope}`, sk: `ERA#${erasureId}` }),
  /** Keys of an erasure job in {@link UNFINISHED_ERASURES_INDEX} while it is `pending` or `running`. */
  erasureUnfinished: (createdAt: string, erasureId: string) => ({ gsi6pk: 'ERASURES#UNFINISHED', listSk: `${createdAt}#${erasureId}` }),
  /** Sort-key prefixes of the privacy partition. */
  privacyPrefixes: { suppression: 'SUP#', erasure: 'ERA#' },
  /** Sort-key prefixes of the webhook partition. */
  webhookPrefixes: { endpoint: 'ENDPOINT#', event: 'EVENT#', message: 'MESSAGE#', delivery: 'DELIVERY#' },
  /**
   * List-index keys of an event of the feed (docs/events.md): all, by type, by campaign, by both; newest first.
   * `listSk` is the one the pending index gives the event ({@link keys.webhookPending} at `occurredAt`): it stays
   * when the event leaves the pending index.
   */
  eventIndexes: (organizationId: string, event: { id: string; occurredAt: string; type: string; campaignId?: string }) => ({
    gsi1pk: `ORG#${organizationId}#EVENTS`,
    gsi2pk: `ORG#${organizationId}#EVENTS#TYPE#${event.type}`,
    ...(event.campaignId
      ? {
          gsi3pk: `ORG#${organizationId}#EVENTS#CAMPAIGN#${event.campaignId}`,
          gsi4pk: `ORG#${organizationId}#EVENTS#TYPE#${event.type}#CAMPAIGN#${event.campaignId}`,
        }
      : {}),
    listSk: `${event.occurredAt}#${event.id}`,
  }),
  /** Keys of pending webhook work in {@link WEBHOOK_PENDING_INDEX}: due at `dueAt` (ISO 8601). */
  webhookPending: (dueAt: string, id: string) => ({ gsi6pk: 'WEBHOOKS#PENDING', listSk: `${dueAt}#${id}` }),
  /**
   * One bucket of an organization's account history (lib/history/store.ts; docs/data-model.md
   * "Recency and CRM targets"): the entries of every account whose hash falls in bucket `bucket`
   * under linear hashing, in one item of at most a few KB.
   */
  accountHistoryBucket: (organizationId: string, bucket: number) => ({ pk: `ORG#${organizationId}#HBUCKET#${bucket}`, sk: 'HISTORY' }),
  /** Former fixed shard of an organization's account history (read only by the migration that retires it, lib/migrations/history-buckets.ts). */
  accountHistoryShard: (organizationId: string, shard: number) => ({ pk: `ORG#${organizationId}#HISTORY#${shard}`, sk: 'HISTORY' }),
  /** Former per-account recency item (read only by the migrations that retire it). */
  accountEnrichment: (organizationId: string, accountId: string) => ({ pk: `ORG#${organizationId}#ACCOUNT#${accountId}`, sk: 'ENRICHED' }),
  /** Former per-account CRM item (read only by the migrations that retire it). */
  crmTarget: (organizationId: string, accountId: string) => ({ pk: `ORG#${organizationId}#ACCOUNT#${accountId}`, sk: 'CRM' }),
  /**
   * Idempotency record of one `Idempotency-Key` (docs/idempotency.md), scoped to
   * organization + operation + key, in a partition of its own. The key is
   * the last part, so any visible ASCII (`#` included) cannot collide.
   */
  idempotencyRecord: (organizationId: string, operationId: string, key: string) => ({
    pk: `ORG#${organizationId}#IDEMPOTENCY#${operationId}#${key}`,
    sk: 'IDEMPOTENCY',
  }),
  /**
   * List-index keys of a saved idempotent answer that can name a person (an
   * operation declared `personalAnswers`: its answer holds identifier hashes),
   * so an erasure finds the organization's such answers with one Query of gsi1
   * (lib/idempotency/store.ts `purgeAnswers`; docs/privacy.md "Erasure").
   */
  personalSavedAnswer: (organizationId: string, operationId: string, key: string) => ({
    gsi1pk: `ORG#${organizationId}#IDEMPOTENCY#PERSONAL`,
    listSk: `${operationId}#${key}`,
  }),
  /** The work a request did under an idempotency key (docs/idempotency.md): written with the work, beside its record, outliving a released record. */
  idempotentWork: (organizationId: string, operationId: string, key: string) => ({
    pk: `ORG#${organizationId}#IDEMPOTENCY#${operationId}#${key}`,
    sk: 'WORK',
  }),
  /**
   * Fixed-window counter of one limit of an organization (docs/limits.md):
   * `policy` (requests, exports, uploads) in the window of `windowSeconds`
   * starting at `windowStart` (epoch seconds), in a partition of its own;
   * expires (TTL) after its window.
   */
  limitCounter: (organizationId: string, policy: string, windowSeconds: number, windowStart: number) => ({
    pk: `ORG#${organizationId}#LIMIT#${policy}#${windowSeconds}#${windowStart}`,
    sk: 'COUNTER',
  }),
  /**
   * An organization's requests on one UTC day (`YYYY-MM-DD`; lib/http/request-counts.ts, docs/data-model.md):
   * the request-rate window's counter (the limiter's leases) and the day's requests per API key, in one
   * partition per organization sorted by day, so a range of days is one Query.
   */
  requestDay: (organizationId: string, day: string) => ({ pk: `ORG#${organizationId}#LIMIT#REQUESTS`, sk: `DAY#${day}` }),
  /**
   * An organization's requests of one API key (`K`) or one campaign (`C`) in one UTC month (`YYYY-MM`), per day
   * (lib/http/request-counts.ts, docs/data-model.md "Entities" (usage month)): one partition per organization, sorted by kind,
   * month and ID, so the rows of a range are one Query of at most 4 months of items. Under `LIMIT#` like the other
   * counters a read-only function may write ({@link LIMIT_COUNTER_KEY_PATTERN}).
   */
  usageMonth: (organizationId: string, kind: 'K' | 'C', month: string, id: string) => ({
    pk: keys.usageMonths(organizationId),
    sk: `${kind}#${month}#${id}`,
  }),
  /** The partition of {@link keys.usageMonth}. */
  usageMonths: (organizationId: string) => `ORG#${organizationId}#LIMIT#USAGE`,
  /** When each API key of an organization was last used, to the minute (docs/authentication.md): one item per key ID, sorted as the key descriptions are. */
  keyLastUse: (organizationId: string, keyId: string) => ({
    pk: keys.keyLastUses(organizationId),
    sk: keys.apiKeyDescription(organizationId, keyId).sk,
  }),
  /** The partition of {@link keys.keyLastUse}. */
  keyLastUses: (organizationId: string) => `ORG#${organizationId}#LIMIT#KEYUSE`,
  /** The organization's spend in one UTC calendar month (`YYYY-MM`), net of refunds (docs/limits.md). */
  monthlySpend: (organizationId: string, month: string) => ({ pk: `ORG#${organizationId}#SPEND#${month}`, sk: 'SPEND' }),
  /** One API key's charges in one UTC calendar month (`YYYY-MM`), net of refunds (docs/authentication.md#per-key-credit-limits). */
  keyMonthlySpend: (organizationId: string, keyId: string, month: string) => ({
    pk: `ORG#${organizationId}#SPEND#${month}#KEY#${keyId}`,
    sk: 'SPEND',
  }),
  /** Upload record (docs/campaigns.md#large-account-lists-upload-first): one presigned account-ID file, in a partition of its own. */
  upload: (organizationId: string, uploadId: string) => ({ pk: `ORG#${organizationId}#UPLOAD#${uploadId}`, sk: 'UPLOAD' }),
  /** That a data migration ran on this table (lib/migrations/index.ts): one item per migration ID, in one partition. */
  migration: (migrationId: string) => ({ pk: 'MIGRATIONS', sk: `MIGRATION#${migrationId}` }),
  /** Partition of the migration records (one Query reads them all). */
  migrations: 'MIGRATIONS',
  /** Warehouse account (embedded default warehouse, README.md#operator-cli). */
  warehouseAccount: (accountId: string) => ({ pk: `WAREHOUSE#ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /** Contacts of a warehouse account. */
  warehouseContacts: (accountId: string) => ({ pk: `WAREHOUSE#ACCOUNT#${accountId}`, sk: 'CONTACTS' }),
  /**
   * The warehouse's identifier index (docs/data-model.md "Entities", the warehouse identifier index): that an account's contacts hold a contact with
   * this identifier hash (lib/warehouse/identifiers.ts). One partition per hash, one item per account.
   */
  warehouseIdentifier: (hash: string, accountId: string) => ({ pk: `WAREHOUSE#IDENT#${hash}`, sk: `ACCOUNT#${accountId}` }),
  /** Partition of one identifier hash in the warehouse's identifier index. */
  warehouseIdentifierPartition: (hash: string) => `WAREHOUSE#IDENT#${hash}`,
  /**
   * The copy index (docs/data-model.md "Entities", the copy index; lib/privacy/copies.ts): which result part (its
   * object key) holds identifier digests whose first `level` bits are `bucket`. One item per (level, bucket, part).
   */
  copyIndex: (level: number, bucket: number, partKey: string) => ({ pk: `COPIES#${level}#${bucket}`, sk: partKey }),
  /** Partition of one (level, bucket) of the copy index. */
  copyIndexPartition: (level: number, bucket: number) => `COPIES#${level}#${bucket}`,
};
