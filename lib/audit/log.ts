/**
 * The organization's audit log (docs/audit.md): the one owner of the audit
 * entry, its item in the table (docs/data-model.md "Audit log"), how it is
 * written (in a change's own transaction, or after an answer that changed
 * nothing) and how it is read (newest first, filtered through the overloaded
 * list indexes, in proportion to the page).
 *
 * An entry holds who (the key's ID, or `operator`), what (the operation or
 * operator command), when, the request and idempotency key, the answer's
 * status and code, the campaign, and the caller's address: never a secret,
 * a request body, contact data or a privacy identifier.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { AUDIT_INDEXES } from '../db/table';
import * as keys from '../db/keys';
import { BATCH_WRITE_SIZE, batchGetAtOnce, batchWriteCall } from '../db/batch-call';
import { derivedId } from '../ids';
import type { RequestAnswer, RequestAudit, RequestRecord, TransactItem } from '../http/request-record';
import { OPERATOR_KEY_ID } from './schema';

/** How long an entry is kept: 365 days (the table's TTL removes it after). */
export const AUDIT_RETENTION_DAYS = 365;

/** One entry of the audit log as `org/audit` answers it. Times ISO 8601. */
export interface AuditEntry {
  /** `aud_…`, derived from the organization and the request. */
  id: string;
  at: string;
  /** The acting key's ID, `operator` for an operator's change, `null` for a key from before key IDs. */
  keyId: string | null;
  /** The operationId, or the operator command (`org:credits`). */
  operation: string;
  requestId: string;
  idempotencyKey: string | null;
  /** HTTP status of the answer (200 for an operator's change). */
  status: number;
  /** The error code of a refusal; `null` on success. */
  code: string | null;
  campaignId: string | null;
  sourceIp: string | null;
}

/** The fields of {@link AuditEntry} in the order `org/audit` shows them: the one list of what an entry stores. */
export const AUDIT_ENTRY_FIELDS = [
  'id',
  'at',
  'keyId',
  'operation',
  'requestId',
  'idempotencyKey',
  'status',
  'code',
  'campaignId',
  'sourceIp',
] as const satisfies readonly (keyof AuditEntry)[];

/** The entry ID of a request: derived, so every write of one request's entry addresses the same item. */
const entryIdOf = (organizationId: string, requestId: string) => derivedId('aud', organizationId, requestId);

/** The entry of a request and its answer. */
export function auditEntryOf(record: RequestRecord, answer: RequestAnswer): AuditEntry {
  return {
    id: entryIdOf(record.organizationId, record.requestId),
    at: record.at,
    keyId: record.keyId,
    operation: record.operation,
    requestId: record.requestId,
    idempotencyKey: record.idempotencyKey,
    status: answer.status,
    code: answer.code,
    campaignId: answer.campaignId,
    sourceIp: record.sourceIp,
  };
}

/**
 * The entry as a conditional Put (new item only): for a change's TransactWriteItems, or written alone.
 * Expires {@link AUDIT_RETENTION_DAYS} after `at` (the table's `ttl`).
 */
export function auditEntryPut(tableName: string, organizationId: string, entry: AuditEntry) {
  const ttl = Math.floor(Date.parse(entry.at) / 1000) + AUDIT_RETENTION_DAYS * 86_400;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...keys.auditEntry(organizationId, entry),
        ...keys.auditEntryIndexes(organizationId, entry),
        type: 'auditEntry',
        ...entry,
        ttl,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  } satisfies TransactItem;
}

/**
 * Writes the entries of refusals (401 of a known key, 429) that arrive together in one process as one
 * BatchWriteItem (up to 25 entries; more: the next 25 in the next call): each caller's promise settles once its own
 * entry is stored, so a refusal's answer still leaves after its entry (docs/audit.md "Refusals, and the cost of
 * a flood"). "Together": in the same turn of the event loop, or while the process's previous batch is in flight
 * (one batch at a time, so a flood's refusals, answered from memory without any other round trip, share writes).
 * The items are plain Puts: a refusal comes before any use case, so no transaction wrote its entry.
 */
function refusalWriter(client: DynamoDBDocumentClient, tableName: string): (item: Record<string, unknown>) => Promise<void> {
  let waiting: { item: Record<string, unknown>; settle: (error?: unknown) => void }[] = [];
  const flush = async () => {
    const batch = waiting.splice(0, BATCH_WRITE_SIZE);
    try {
      await batchWriteCall(
        client,
        tableName,
        batch.map(({ item }) => ({ PutRequest: { Item: item } })),
      );
      for (const { settle } of batch) settle();
    } catch (error) {
      for (const { settle } of batch) settle(error);
    }
  };
  let writing = false;
  // Batches one after the other until none waits; `flush` settles every caller and never throws.
  const drain = async () => {
    while (waiting.length > 0) await flush();
    writing = false;
  };
  return (item) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ item, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      // The first refusal starts the writer after its turn of the event loop (those of the same turn join it); those
      // arriving while a batch is in flight go in the next one.
      if (!writing) {
        writing = true;
        setImmediate(() => void drain());
      }
    });
}

/**
 * The audit log as the request pipeline uses it (lib/http/request-record.ts), on one table.
 * @example
 * createApiHandler(operation, useCase, { findApiKey, audit: createRequestAudit({ client, tableName }) });
 */
export function createRequestAudit({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): RequestAudit {
  const writeRefusal = refusalWriter(client, tableName);
  return {
    changeItem: (record, campaignId) =>
      auditEntryPut(tableName, record.organizationId, auditEntryOf(record, { status: 200, code: null, campaignId })),
    writeRefusal: (record, answer) => writeRefusal(auditEntryPut(tableName, record.organizationId, auditEntryOf(record, answer)).Put.Item),
    async writeAnswer(record, answer) {
      try {
        await client.send(new PutCommand(auditEntryPut(tableName, record.organizationId, auditEntryOf(record, answer)).Put));
      } catch (error) {
        // The change's transaction wrote this request's entry already: it stands.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}

/** An operator's change as the audit log records it (`keyId: "operator"`). */
export interface OperatorChange {
  organizationId: string;
  /** The operator command, e.g. `org:credits`. */
  command: string;
  /** The campaign the command changed, if any. */
  campaignId?: string | null;
  /** The command's own idempotency ID (`org:credits --id`), if any. */
  idempotencyKey?: string | null;
}

/**
 * The entry of an operator's change, as a Put for the change's own transaction (docs/audit.md).
 * Its `requestId` is `ops_` + a fresh UUID: one per change.
 */
export function operatorChangeItem(tableName: string, change: OperatorChange) {
  const requestId = `ops_${randomUUID()}`;
  return auditEntryPut(tableName, change.organizationId, {
    id: entryIdOf(change.organizationId, requestId),
    at: new Date().toISOString(),
    keyId: OPERATOR_KEY_ID,
    operation: change.command,
    requestId,
    idempotencyKey: change.idempotencyKey ?? null,
    status: 200,
    code: null,
    campaignId: change.campaignId ?? null,
    sourceIp: null,
  });
}

/** What a page of the log is read with. */
export interface AuditQuery {
  organizationId: string;
  keyId?: string;
  operation?: string;
  /** ISO 8601 bounds, inclusive. */
  from?: string;
  to?: string;
  limit: number;
  /** The position (`at#id`) the previous page ended at; the page starts below it. */
  after?: string;
}

/** Reads pages of the audit log. */
export interface AuditStore {
  /**
   * One page, newest first: one Query of `limit + 1` items; with a key or operation filter,
   * one index Query of `limit + 1` keys and one BatchGetItem of the page's entries.
   * @returns the entries and, when more follow, the position of the last one.
   */
  page(query: AuditQuery): Promise<{ entries: AuditEntry[]; next: string | undefined }>;
}

/** The largest string below `position` in the order of `at#id` positions (which never hold U+FFFF). */
const justBelow = (position: string) =>
  `${position.slice(0, -1)}${String.fromCharCode(position.charCodeAt(position.length - 1) - 1)}\uffff`;

/** Maps a stored entry item to an {@link AuditEntry} (its fields only, in their order). */
const toEntry = (item: Record<string, unknown>): AuditEntry =>
  Object.fromEntries(AUDIT_ENTRY_FIELDS.map((field) => [field, item[field] ?? null])) as unknown as AuditEntry;

/** Builds the DynamoDB implementation of {@link AuditStore}. */
export function createAuditStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): AuditStore {
  return {
    async page({ organizationId, keyId, operation, from, to, limit, after }) {
      const filtered = keyId !== undefined || operation !== undefined;
      const index =
        keyId !== undefined && operation !== undefined
          ? AUDIT_INDEXES.byKeyAndOperation
          : keyId !== undefined
            ? AUDIT_INDEXES.byKey
            : AUDIT_INDEXES.byOperation;
      const sortKey = filtered ? index.sortKey : 'sk';
      const upper = [after === undefined ? undefined : justBelow(after), to === undefined ? undefined : `${to}#\uffff`]
        .filter((bound): bound is string => bound !== undefined)
        .sort()[0];
      const lower = from;
      const range =
        lower !== undefined && upper !== undefined
          ? `${sortKey} BETWEEN :lower AND :upper`
          : lower !== undefined
            ? `${sortKey} >= :lower`
            : upper !== undefined
              ? `${sortKey} <= :upper`
              : undefined;
      const partitionKey = filtered ? index.partitionKey : 'pk';
      const { Items = [] } = await client.send(
        new QueryCommand({
          TableName: tableName,
          ...(filtered ? { IndexName: index.indexName } : { ConsistentRead: true }),
          KeyConditionExpression: `#pk = :pk${range ? ` AND ${range.replace(sortKey, '#sk')}` : ''}`,
          ExpressionAttributeNames: { '#pk': partitionKey, ...(range ? { '#sk': sortKey } : {}) },
          ExpressionAttributeValues: {
            ':pk': filtered ? keys.auditIndexPartition(organizationId, { keyId, operation }) : keys.auditEntries(organizationId),
            ...(lower !== undefined ? { ':lower': lower } : {}),
            ...(upper !== undefined ? { ':upper': upper } : {}),
          },
          ScanIndexForward: false,
          Limit: limit + 1,
        }),
      );
      const pageItems = Items.slice(0, limit);
      // The indexes project the keys only: the page's entries are read from the table, in one BatchGetItem.
      const entries = filtered ? await readEntries(client, tableName, pageItems) : pageItems.map(toEntry);
      const last = pageItems.at(-1);
      return { entries, next: Items.length > limit && last ? String(last.sk) : undefined };
    },
  };
}

/** The full entries of index items, in the index's order. */
async function readEntries(client: DynamoDBDocumentClient, tableName: string, items: Record<string, unknown>[]): Promise<AuditEntry[]> {
  if (items.length === 0) return [];
  // A page is at most MAX_AUDIT_PAGE_SIZE entries (lib/audit/schema.ts): within what batchGetAtOnce reads.
  const found = await batchGetAtOnce(
    client,
    tableName,
    items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) })),
  );
  const bySk = new Map(found.map((item) => [String(item.sk), item]));
  return items.flatMap((item) => {
    const entry = bySk.get(String(item.sk));
    return entry ? [toEntry(entry)] : [];
  });
}
