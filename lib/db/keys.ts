/**
 * Key builders, one per entity: nothing else in the code spells a key (docs/data-model.md lists them).
 * Imported as the namespace `keys` (`export * as keys` of lib/db/table.ts), each builder its own export, so a
 * bundle carries the builders its function calls and not every entity's (bench `bundles`, docs/deploy.md).
 */

/** Keys of the sparse expiry index, present only while a campaign is stored as `enriched`. */
const enrichedExpiry = (organizationId: string, campaign: { id: string; resultsExpireAt: string }) => ({
  gsi5pk: `ORG#${organizationId}#ENRICHED`,
  expirySk: `${campaign.resultsExpireAt}#${campaign.id}`,
});

/** Organization item: balances, capacity. */
export const organization = (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' });
/** API key item, addressed by the SHA-256 hex digest of the key. */
export const apiKey = (keyHash: string) => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' });
/** What an organization's API key is across rotations (name, scopes, limits, its current secret's hash): one partition per organization, listed by key ID. */
export const apiKeyDescription = (organizationId: string, keyId: string) => ({ pk: `ORG#${organizationId}#KEYS`, sk: `KEY#${keyId}` });
/** The partition of {@link apiKeyDescription}. */
export const apiKeyDescriptions = (organizationId: string) => `ORG#${organizationId}#KEYS`;
/**
 * One audit-log entry (docs/audit.md): one partition per organization, sorted by `at#entryId`
 * (newest first when read backwards). The entry's id is derived from its request, so the entry a
 * change wrote in its transaction and the one the pipeline writes after an error are the same item.
 */
export const auditEntry = (organizationId: string, entry: { at: string; id: string }) => ({
  pk: `ORG#${organizationId}#AUDIT`,
  sk: `${entry.at}#${entry.id}`,
});
/** The partition of {@link auditEntry}. */
export const auditEntries = (organizationId: string) => `ORG#${organizationId}#AUDIT`;
/** Index keys of an audit entry for its filters ({@link AUDIT_INDEXES}); a request without a key ID has no key partitions. */
export const auditEntryIndexes = (organizationId: string, entry: { at: string; id: string; keyId: string | null; operation: string }) => ({
  listSk: `${entry.at}#${entry.id}`,
  gsi3pk: `ORG#${organizationId}#AUDIT#OP#${entry.operation}`,
  ...(entry.keyId === null
    ? {}
    : {
        gsi2pk: `ORG#${organizationId}#AUDIT#KEY#${entry.keyId}`,
        gsi4pk: `ORG#${organizationId}#AUDIT#KEY#${entry.keyId}#OP#${entry.operation}`,
      }),
});
/** The index partition of the audit entries of one key and/or one operation ({@link AUDIT_INDEXES}). */
export const auditIndexPartition = (organizationId: string, filter: { keyId?: string; operation?: string }) =>
  filter.keyId !== undefined && filter.operation !== undefined
    ? `ORG#${organizationId}#AUDIT#KEY#${filter.keyId}#OP#${filter.operation}`
    : filter.keyId !== undefined
      ? `ORG#${organizationId}#AUDIT#KEY#${filter.keyId}`
      : `ORG#${organizationId}#AUDIT#OP#${filter.operation}`;
/** Campaign item, inside its organization's partition. */
export const campaign = (organizationId: string, campaignId: string) => ({ pk: `ORG#${organizationId}`, sk: `CAMPAIGN#${campaignId}` });
/** Prefix of an organization's campaign items in its partition (for begins_with: the credits reconciliation). */
export const campaignPrefix = () => 'CAMPAIGN#';
/** Which organization a campaign belongs to (operator commands that name only the campaign). */
export const campaignOwner = (campaignId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: 'OWNER' });
/** Per-account outcomes of a campaign's most recent launch evaluation: manifest and progress (lib/enrichment/outcomes.ts). */
export const campaignOutcomes = (campaignId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: 'OUTCOMES' });
/** Head of an attempt's results sequence: the seqs given so far (lib/results/sequence.ts). */
export const resultsHead = (campaignId: string, attemptId: string) => ({ pk: `CAMPAIGN#${campaignId}`, sk: `RESULTS#${attemptId}` });
/**
 * One readable batch's seqs in an attempt (lib/results/sequence.ts), in a partition per attempt, sorted
 * by its last seq (10 digits), so the ranges after a seq are one Query.
 */
export const resultsRange = (campaignId: string, attemptId: string, toSeq: number) => ({
  pk: `CAMPAIGN#${campaignId}#RESULTS#${attemptId}`,
  sk: `SEQ#${String(toSeq).padStart(10, '0')}`,
});
/** Index keys of a campaign for list (docs/pagination.md). */
export const campaignIndexes = (
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
});
export { enrichedExpiry };
/** Partition of the recency-pending index of an organization. */
export const recencyPending = (organizationId: string) => ({ gsi6pk: `ORG#${organizationId}#RECENCY_PENDING` });
/** Organizations registry partition of gsi1 (reconciliation walks every organization). */
export const organizationRegistry = (organization: { id: string; createdAt: string }) => ({
  gsi1pk: 'ORGANIZATIONS',
  listSk: `${organization.createdAt}#${organization.id}`,
});
/**
 * Immutable ledger entry of a credit movement, in its organization's
 * partition: `LEDGER#<campaignId or ->#<entryId>`, so an organization's
 * ledger and a campaign's are each one consistent Query by prefix.
 */
export const ledgerEntry = (organizationId: string, entry: { id: string; campaignId: string | null }) => ({
  pk: `ORG#${organizationId}`,
  sk: `LEDGER#${entry.campaignId ?? '-'}#${entry.id}`,
});
/** Prefix of an organization's ledger entries, or of one campaign's (for begins_with). */
export const ledgerPrefix = (campaignId?: string) => (campaignId === undefined ? 'LEDGER#' : `LEDGER#${campaignId}#`);
/** List-index keys of a ledger entry: all, by kind, by campaign, by both; newest first. */
export const ledgerIndexes = (
  organizationId: string,
  entry: { id: string; createdAt: string; kind: string; campaignId: string | null },
) => ({
  gsi1pk: `ORG#${organizationId}#LEDGER`,
  gsi2pk: `ORG#${organizationId}#LEDGER#KIND#${entry.kind}`,
  ...(entry.campaignId
    ? {
        gsi3pk: `ORG#${organizationId}#LEDGER#CAMPAIGN#${entry.campaignId}`,
        gsi4pk: `ORG#${organizationId}#LEDGER#KIND#${entry.kind}#CAMPAIGN#${entry.campaignId}`,
      }
    : {}),
  listSk: `${entry.createdAt}#${entry.id}`,
});
/** Partition of an organization's webhook items: endpoints, their counter, events, messages and the delivery log (docs/webhooks.md). */
export const webhooks = (organizationId: string) => `ORG#${organizationId}#WEBHOOKS`;
/** Counter of an organization's webhook endpoints (at most 10). */
export const webhookEndpointCount = (organizationId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: 'ENDPOINTS' });
/** A webhook endpoint. */
export const webhookEndpoint = (organizationId: string, endpointId: string) => ({
  pk: `ORG#${organizationId}#WEBHOOKS`,
  sk: `ENDPOINT#${endpointId}`,
});
/** An event (the outbox row written with the state change that caused it). */
export const webhookEvent = (organizationId: string, eventId: string) => ({ pk: `ORG#${organizationId}#WEBHOOKS`, sk: `EVENT#${eventId}` });
/** A message: one event for one endpoint, its state and retry schedule. */
export const webhookMessage = (organizationId: string, messageId: string) => ({
  pk: `ORG#${organizationId}#WEBHOOKS`,
  sk: `MESSAGE#${messageId}`,
});
/** One delivery attempt of a message (the delivery log); IDs sort in time order. */
export const webhookDelivery = (organizationId: string, deliveryId: string) => ({
  pk: `ORG#${organizationId}#WEBHOOKS`,
  sk: `DELIVERY#${deliveryId}`,
});
/**
 * Privacy partition of an organization, or of the operator's global list (`scope` = `GLOBAL`): suppressions,
 * the compact hash set, erasures (lib/privacy/store.ts; docs/data-model.md "Privacy"). Holds hashes, never a raw identifier.
 */
export const privacy = (scope: string) => `PRIVACY#${scope}`;
/** One suppression of a scope (an organization, or `GLOBAL`), by its ID (derived from scope and hash: one per hash). */
export const suppression = (scope: string, suppressionId: string) => ({ pk: `PRIVACY#${scope}`, sk: `SUP#${suppressionId}` });
/** The compact set of a scope's suppressed hashes (8-byte prefixes, a binary set): what a delivery reads once. */
export const suppressionSet = (scope: string) => ({ pk: `PRIVACY#${scope}`, sk: 'SUPSET' });
/** One erasure of an organization, by its ID (derived from the organization and `requestRef`: one per requestRef). */
export const erasure = (scope: string, erasureId: string) => ({ pk: `PRIVACY#${scope}`, sk: `ERA#${erasureId}` });
/** Keys of an erasure job in {@link UNFINISHED_ERASURES_INDEX} while it is `pending` or `running`. */
export const erasureUnfinished = (createdAt: string, erasureId: string) => ({
  gsi6pk: 'ERASURES#UNFINISHED',
  listSk: `${createdAt}#${erasureId}`,
});
/** Sort-key prefixes of the privacy partition. */
export const privacyPrefixes = { suppression: 'SUP#', erasure: 'ERA#' };
/** Sort-key prefixes of the webhook partition. */
export const webhookPrefixes = { endpoint: 'ENDPOINT#', event: 'EVENT#', message: 'MESSAGE#', delivery: 'DELIVERY#' };
/**
 * List-index keys of an event of the feed (docs/events.md): all, by type, by campaign, by both; newest first.
 * `listSk` is the one the pending index gives the event ({@link webhookPending} at `occurredAt`): it stays
 * when the event leaves the pending index.
 */
export const eventIndexes = (organizationId: string, event: { id: string; occurredAt: string; type: string; campaignId?: string }) => ({
  gsi1pk: `ORG#${organizationId}#EVENTS`,
  gsi2pk: `ORG#${organizationId}#EVENTS#TYPE#${event.type}`,
  ...(event.campaignId
    ? {
        gsi3pk: `ORG#${organizationId}#EVENTS#CAMPAIGN#${event.campaignId}`,
        gsi4pk: `ORG#${organizationId}#EVENTS#TYPE#${event.type}#CAMPAIGN#${event.campaignId}`,
      }
    : {}),
  listSk: `${event.occurredAt}#${event.id}`,
});
/** Keys of pending webhook work in {@link WEBHOOK_PENDING_INDEX}: due at `dueAt` (ISO 8601). */
export const webhookPending = (dueAt: string, id: string) => ({ gsi6pk: 'WEBHOOKS#PENDING', listSk: `${dueAt}#${id}` });
/**
 * One bucket of an organization's account history (lib/history/store.ts; docs/data-model.md
 * "Recency and CRM targets"): the entries of every account whose hash falls in bucket `bucket`
 * under linear hashing, in one item of at most a few KB.
 */
export const accountHistoryBucket = (organizationId: string, bucket: number) => ({
  pk: `ORG#${organizationId}#HBUCKET#${bucket}`,
  sk: 'HISTORY',
});
/** Former fixed shard of an organization's account history (read only by the migration that retires it, lib/migrations/history-buckets.ts). */
export const accountHistoryShard = (organizationId: string, shard: number) => ({
  pk: `ORG#${organizationId}#HISTORY#${shard}`,
  sk: 'HISTORY',
});
/** Former per-account recency item (read only by the migrations that retire it). */
export const accountEnrichment = (organizationId: string, accountId: string) => ({
  pk: `ORG#${organizationId}#ACCOUNT#${accountId}`,
  sk: 'ENRICHED',
});
/** Former per-account CRM item (read only by the migrations that retire it). */
export const crmTarget = (organizationId: string, accountId: string) => ({ pk: `ORG#${organizationId}#ACCOUNT#${accountId}`, sk: 'CRM' });
/**
 * Idempotency record of one `Idempotency-Key` (docs/idempotency.md), scoped to
 * organization + operation + key, in a partition of its own. The key is
 * the last part, so any visible ASCII (`#` included) cannot collide.
 */
export const idempotencyRecord = (organizationId: string, operationId: string, key: string) => ({
  pk: `ORG#${organizationId}#IDEMPOTENCY#${operationId}#${key}`,
  sk: 'IDEMPOTENCY',
});
/**
 * List-index keys of a saved idempotent answer that can name a person (an
 * operation declared `personalAnswers`: its answer holds identifier hashes),
 * so an erasure finds the organization's such answers with one Query of gsi1
 * (lib/idempotency/store.ts `purgeAnswers`; docs/privacy.md "Erasure").
 */
export const personalSavedAnswer = (organizationId: string, operationId: string, key: string) => ({
  gsi1pk: `ORG#${organizationId}#IDEMPOTENCY#PERSONAL`,
  listSk: `${operationId}#${key}`,
});
/** The work a request did under an idempotency key (docs/idempotency.md): written with the work, beside its record, outliving a released record. */
export const idempotentWork = (organizationId: string, operationId: string, key: string) => ({
  pk: `ORG#${organizationId}#IDEMPOTENCY#${operationId}#${key}`,
  sk: 'WORK',
});
/**
 * Fixed-window counter of one limit of an organization (docs/limits.md):
 * `policy` (requests, exports, uploads) in the window of `windowSeconds`
 * starting at `windowStart` (epoch seconds), in a partition of its own;
 * expires (TTL) after its window.
 */
export const limitCounter = (organizationId: string, policy: string, windowSeconds: number, windowStart: number) => ({
  pk: `ORG#${organizationId}#LIMIT#${policy}#${windowSeconds}#${windowStart}`,
  sk: 'COUNTER',
});
/**
 * An organization's requests on one UTC day (`YYYY-MM-DD`; lib/http/request-counts.ts, docs/data-model.md):
 * the request-rate window's counter (the limiter's leases) and the day's requests per API key, in one
 * partition per organization sorted by day, so a range of days is one Query.
 */
export const requestDay = (organizationId: string, day: string) => ({ pk: `ORG#${organizationId}#LIMIT#REQUESTS`, sk: `DAY#${day}` });
/**
 * An organization's requests of one API key (`K`) or one campaign (`C`) in one UTC month (`YYYY-MM`), per day
 * (lib/http/request-counts.ts, docs/data-model.md "Entities" (usage month)): one partition per organization, sorted by kind,
 * month and ID, so the rows of a range are one Query of at most 4 months of items. Under `LIMIT#` like the other
 * counters a read-only function may write ({@link LIMIT_COUNTER_KEY_PATTERN}).
 */
export const usageMonth = (organizationId: string, kind: 'K' | 'C', month: string, id: string) => ({
  pk: usageMonths(organizationId),
  sk: `${kind}#${month}#${id}`,
});
/** The partition of {@link usageMonth}. */
export const usageMonths = (organizationId: string) => `ORG#${organizationId}#LIMIT#USAGE`;
/** When each API key of an organization was last used, to the minute (docs/authentication.md): one item per key ID, sorted as the key descriptions are. */
export const keyLastUse = (organizationId: string, keyId: string) => ({
  pk: keyLastUses(organizationId),
  sk: apiKeyDescription(organizationId, keyId).sk,
});
/** The partition of {@link keyLastUse}. */
export const keyLastUses = (organizationId: string) => `ORG#${organizationId}#LIMIT#KEYUSE`;
/** The organization's spend in one UTC calendar month (`YYYY-MM`), net of refunds (docs/limits.md). */
export const monthlySpend = (organizationId: string, month: string) => ({ pk: `ORG#${organizationId}#SPEND#${month}`, sk: 'SPEND' });
/** One API key's charges in one UTC calendar month (`YYYY-MM`), net of refunds (docs/authentication.md#per-key-credit-limits). */
export const keyMonthlySpend = (organizationId: string, keyId: string, month: string) => ({
  pk: `ORG#${organizationId}#SPEND#${month}#KEY#${keyId}`,
  sk: 'SPEND',
});
/** Upload record (docs/campaigns.md#large-account-lists-upload-first): one presigned account-ID file, in a partition of its own. */
export const upload = (organizationId: string, uploadId: string) => ({ pk: `ORG#${organizationId}#UPLOAD#${uploadId}`, sk: 'UPLOAD' });
/** That a data migration ran on this table (lib/migrations/index.ts): one item per migration ID, in one partition. */
export const migration = (migrationId: string) => ({ pk: 'MIGRATIONS', sk: `MIGRATION#${migrationId}` });
/** Partition of the migration records (one Query reads them all). */
export const migrations = 'MIGRATIONS';
/** Warehouse account (embedded default warehouse, README.md#operator-cli). */
export const warehouseAccount = (accountId: string) => ({ pk: `WAREHOUSE#ACCOUNT#${accountId}`, sk: 'ACCOUNT' });
/** Contacts of a warehouse account. */
export const warehouseContacts = (accountId: string) => ({ pk: `WAREHOUSE#ACCOUNT#${accountId}`, sk: 'CONTACTS' });
/**
 * The warehouse's identifier index (docs/data-model.md "Entities", the warehouse identifier index): that an account's contacts hold a contact with
 * this identifier hash (lib/warehouse/identifiers.ts). One partition per hash, one item per account.
 */
export const warehouseIdentifier = (hash: string, accountId: string) => ({ pk: `WAREHOUSE#IDENT#${hash}`, sk: `ACCOUNT#${accountId}` });
/** Partition of one identifier hash in the warehouse's identifier index. */
export const warehouseIdentifierPartition = (hash: string) => `WAREHOUSE#IDENT#${hash}`;
/**
 * The copy index (docs/data-model.md "Entities", the copy index; lib/privacy/copies.ts): which result part (its
 * object key) holds identifier digests whose first `level` bits are `bucket`. One item per (level, bucket, part).
 */
export const copyIndex = (level: number, bucket: number, partKey: string) => ({ pk: `COPIES#${level}#${bucket}`, sk: partKey });
/** Partition of one (level, bucket) of the copy index. */
export const copyIndexPartition = (level: number, bucket: number) => `COPIES#${level}#${bucket}`;
