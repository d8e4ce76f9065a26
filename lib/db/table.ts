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
// concat marked pure (a spread may run an iterator, so esbuild would keep it and every object built from it): a
// bundle that reads none of the indexes below carries none of them (docs/deploy.md "Prerequisites").
const LIST_INDEX_ATTRIBUTES = /* @__PURE__ */ LIST_ITEM_ATTRIBUTES.concat(LEDGER_ENTRY_ATTRIBUTES);

/**
 * The list indexes (docs/pagination.md, docs/launch.md), by the filter each serves. gsi1-gsi4
 * are overloaded: the same four indexes list campaigns (partitions
 * `ORG#…#CAMPAIGNS…`) and ledger entries (`ORG#…#LEDGER…`), newest first by
 * `listSk` = `createdAt#id`; gsi1 also lists organizations (`ORGANIZATIONS`).
 */
/** Campaigns of an organization, newest first (list without filters). */
const allIndex = {
  indexName: 'gsi1',
  partitionKey: 'gsi1pk',
  sortKey: 'listSk',
  projectedAttributes: LIST_INDEX_ATTRIBUTES,
} as const satisfies IndexDefinition;
/** Campaigns of an organization in one status. */
const byStatusIndex = {
  indexName: 'gsi2',
  partitionKey: 'gsi2pk',
  sortKey: 'listSk',
  projectedAttributes: LIST_INDEX_ATTRIBUTES,
} as const satisfies IndexDefinition;
/** Campaigns of an organization created through one surface. */
const byCreatedViaIndex = {
  indexName: 'gsi3',
  partitionKey: 'gsi3pk',
  sortKey: 'listSk',
  projectedAttributes: LIST_INDEX_ATTRIBUTES,
} as const satisfies IndexDefinition;
/** Campaigns of an organization in one status and created through one surface. */
const byStatusAndCreatedViaIndex = {
  indexName: 'gsi4',
  partitionKey: 'gsi4pk',
  sortKey: 'listSk',
  projectedAttributes: LIST_INDEX_ATTRIBUTES,
} as const satisfies IndexDefinition;
/**
 * Sparse: enriched campaigns whose per-account enrichment times are not all
 * recorded yet. Launch evaluation treats their accounts as enriched at
 * `completedAt`, so recency holds from the moment a campaign reads `enriched`.
 */
const recencyPendingIndex = {
  indexName: 'gsi6',
  partitionKey: 'gsi6pk',
  sortKey: 'listSk',
  projectedAttributes: ['id', 'completedAt', 'attempt'],
} as const satisfies IndexDefinition;

/**
 * Every index of the table, by what it serves. Each is also its own constant above, so a function that reads
 * one use of the overloaded indexes (the ledger's, the event feed's…) bundles those indexes, not this object.
 */
export const TABLE_INDEXES = {
  all: allIndex,
  byStatus: byStatusIndex,
  byCreatedVia: byCreatedViaIndex,
  byStatusAndCreatedVia: byStatusAndCreatedViaIndex,
  /**
   * Sparse: only campaigns stored as `enriched`, by `resultsExpireAt`. Finds
   * the ones whose results lapsed before the workflow rewrote them as
   * `expired` (normally none), without reading live ones.
   */
  enrichedByExpiry: {
    indexName: 'gsi5',
    partitionKey: 'gsi5pk',
    sortKey: 'expirySk',
    projectedAttributes: /* @__PURE__ */ LIST_ITEM_ATTRIBUTES.concat('listSk'),
  },
  recencyPending: recencyPendingIndex,
} as const satisfies Record<string, IndexDefinition>;

/** Key schema and indexes of the table. */
export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'ttl',
  indexes: /* @__PURE__ */ Object.values(TABLE_INDEXES) as IndexDefinition[],
} as const;

/** The ledger's uses of the overloaded list indexes, by the filter each serves (docs/launch.md#the-credit-ledger). */
export const LEDGER_INDEXES = {
  all: allIndex,
  byKind: byStatusIndex,
  byCampaign: byCreatedViaIndex,
  byKindAndCampaign: byStatusAndCreatedViaIndex,
} as const satisfies Record<string, IndexDefinition>;

/**
 * The event feed's uses of the overloaded list indexes (docs/events.md), by the filter each serves:
 * partitions `ORG#…#EVENTS…`, newest first by `listSk` = `occurredAt#eventId`.
 */
export const EVENT_INDEXES = {
  all: allIndex,
  byType: byStatusIndex,
  byCampaign: byCreatedViaIndex,
  byTypeAndCampaign: byStatusAndCreatedViaIndex,
} as const satisfies Record<string, IndexDefinition>;

/**
 * The audit log's uses of the overloaded list indexes (docs/audit.md), by the filter each serves:
 * partitions `ORG#…#AUDIT#…`, newest first by `listSk` = `at#entryId`. Without a key or operation
 * filter the log is read from its own partition (`keys.auditEntry`), not from an index.
 */
export const AUDIT_INDEXES = {
  byKey: byStatusIndex,
  byOperation: byCreatedViaIndex,
  byKeyAndOperation: byStatusAndCreatedViaIndex,
} as const satisfies Record<string, IndexDefinition>;

/**
 * Webhook work waiting for its time (docs/webhooks.md): events not yet fanned
 * out to endpoints and messages whose next attempt is due, in gsi6 (sparse)
 * under one partition, by due time. The local stack's poller reads it; in
 * AWS the table's stream and the delivery state machine drive the same work
 * and the index only shows what is in flight.
 */
export const WEBHOOK_PENDING_INDEX = recencyPendingIndex;

/**
 * Erasure jobs not yet ended (docs/privacy.md "The erasure job"): in gsi6
 * (sparse) under one partition, by creation time, while `pending` or
 * `running`. The local stack resumes them at start; in AWS the queue's
 * redelivery does, and the index shows what is in flight.
 */
export const UNFINISHED_ERASURES_INDEX = recencyPendingIndex;

/** IAM pattern of the partitions of `keys.limitCounter` (lib/db/keys.ts): what a read-only API function may write (infra/constructs/route-permissions.ts). */
export const LIMIT_COUNTER_KEY_PATTERN = 'ORG#*#LIMIT#*';
