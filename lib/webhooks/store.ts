/**
 * Webhook endpoints, events, messages and the delivery log in the single
 * table (docs/data-model.md "Webhooks"; docs/webhooks.md). Every item lives in
 * the organization's webhook partition `ORG#<orgId>#WEBHOOKS`; pending work
 * is also in the sparse pending index ({@link WEBHOOK_PENDING_INDEX}).
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { storeOf, type StoreMethod, type TableAccess } from '../db/methods';
import { EVENT_INDEXES, WEBHOOK_PENDING_INDEX, type IndexDefinition } from '../db/table';
import * as keys from '../db/keys';
import { batchGetCall } from '../db/batch-call';
import { putIf, transactWrite, updateIf, type TransactItem } from '../db/conditional';
import { and, updateParts, type Change, type Clause } from '../db/expression';
import { eventItem, toWebhookEvent, webhookTtl, type SubscribableEventType, type WebhookEvent, type WebhookEventType } from './events';

/** An endpoint as stored. The secrets never leave the service except in the create and rotate-secret answers. */
export interface WebhookEndpointRecord {
  /** `whe_` + 21 base58. */
  id: string;
  organizationId: string;
  url: string;
  /** Campaign event types it receives. */
  events: SubscribableEventType[];
  description: string | null;
  createdAt: string;
  /** `disabled` once it answered 410 Gone; disabled endpoints receive nothing. */
  status: 'enabled' | 'disabled';
  disabledAt: string | null;
  disabledReason: string | null;
  /** Current signing secret (`whsec_…`). */
  secret: string;
  /** The secret before the last rotation, still signing until {@link previousSecretExpiresAt}. */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
}

/** State of a message: waiting for an attempt, answered 2xx, or given up (schedule exhausted, endpoint gone, disabled or deleted). */
export type MessageState = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint: the unit of delivery, retried on its schedule. */
export interface WebhookMessageRecord {
  /** `msg_` + 21 base58, derived from (event, endpoint): the `webhook-id` header of every attempt. */
  id: string;
  organizationId: string;
  eventId: string;
  endpointId: string;
  eventType: WebhookEventType;
  /** The exact body sent on every attempt (JSON text). */
  payload: string;
  createdAt: string;
  state: MessageState;
  /** Attempts made so far, redeliveries included. */
  attempts: number;
  /** Attempts made by the schedule (they set the next wait). */
  scheduledAttempts: number;
  /** When the next scheduled attempt is due; null once the message is no longer pending. */
  nextAttemptAt: string | null;
  /** A scheduled attempt in progress holds the message until then. */
  leaseUntil: string | null;
  /** Why a `failed` message was given up. */
  endedReason: string | null;
}

/** How an attempt went. */
export type DeliveryStatus = 'succeeded' | 'failed';

/** One attempt of a message (the delivery log, docs/webhooks.md). */
export interface WebhookDeliveryRecord {
  /** `whd_` + 21 base58, time-ordered. */
  id: string;
  organizationId: string;
  messageId: string;
  endpointId: string;
  eventType: WebhookEventType;
  /** 1-based number of the attempt within its message. */
  attempt: number;
  /** `scheduled` (the retry schedule) or `redeliver` (the redeliver operation). */
  trigger: 'scheduled' | 'redeliver';
  attemptedAt: string;
  status: DeliveryStatus;
  /** HTTP status of the answer; null when none came. */
  responseStatus: number | null;
  /** Milliseconds until the answer was read or the attempt failed. */
  latencyMs: number;
  /** First 1 KB of the answer's body (UTF-8). */
  responseBody: string | null;
  /** Why the attempt failed without (or despite) an answer, e.g. `timeout after 15 s`, `redirect (302) not followed`. */
  error: string | null;
  /** When the schedule tries again; null when it does not. */
  nextAttemptAt: string | null;
}

/** Filters of the delivery log. */
export interface DeliveryFilters {
  endpointId?: string;
  eventType?: WebhookEventType;
  status?: DeliveryStatus;
}

/** A page of the delivery log. */
export interface DeliveryPage {
  deliveries: WebhookDeliveryRecord[];
  hasMore: boolean;
  /** Sort key of the last delivery of the page (the next page starts below it). */
  last?: string;
}

/** What the event feed is narrowed to (docs/events.md); each absent member matches all. */
export interface EventFeedFilters {
  /** One or more event types (OR). */
  types?: readonly SubscribableEventType[];
  campaignId?: string;
}

/** A page of the event feed. */
export interface EventPage {
  events: WebhookEvent[];
  hasMore: boolean;
  /** `listSk` of the last event of the page (the next page starts below it). */
  last?: string;
}

/** Pending work found in the pending index. */
export interface PendingWork {
  kind: 'event' | 'message';
  organizationId: string;
  id: string;
}

/** What the outcome of an attempt changes on its message. */
export interface AttemptResult {
  state: MessageState;
  nextAttemptAt: string | null;
  endedReason: string | null;
  /** A scheduled attempt (counts towards the schedule and releases the lease). */
  scheduled: boolean;
}

/** Data access for webhooks. */
export interface WebhookStore {
  /** Creates an endpoint and counts it, atomically, with `alsoPut` (the request's audit entry, docs/audit.md). @returns false when the organization already has `maxEndpoints`. */
  createEndpoint(endpoint: WebhookEndpointRecord, maxEndpoints: number, alsoPut?: readonly TransactItem[]): Promise<boolean>;
  /** The organization's endpoints, oldest first. */
  listEndpoints(organizationId: string): Promise<WebhookEndpointRecord[]>;
  getEndpoint(organizationId: string, endpointId: string): Promise<WebhookEndpointRecord | undefined>;
  /** Deletes an endpoint and uncounts it, atomically, with `alsoPut` (the request's audit entry, docs/audit.md). @returns false when there was none. */
  deleteEndpoint(organizationId: string, endpointId: string, alsoPut?: readonly TransactItem[]): Promise<boolean>;
  /** Makes `secret` current and keeps the current one signing until `previousExpiresAt`, with `alsoPut` (the request's audit entry, docs/audit.md). @returns the endpoint with its new secrets (its other fields as read before the write: id, URL, events, description and creation time never change), or undefined when there is none. */
  rotateSecret(
    organizationId: string,
    endpointId: string,
    secret: string,
    previousExpiresAt: string,
    alsoPut?: readonly TransactItem[],
  ): Promise<WebhookEndpointRecord | undefined>;
  /** Disables an endpoint (410 Gone). A no-op for a deleted endpoint. */
  disableEndpoint(organizationId: string, endpointId: string, at: string, reason: string): Promise<void>;
  /** Records an event outside a state change (`webhook.test`), with `alsoPut` (the request's audit entry, docs/audit.md). */
  putEvent(event: WebhookEvent, alsoPut?: readonly TransactItem[]): Promise<void>;
  getEvent(organizationId: string, eventId: string): Promise<(WebhookEvent & { dispatched: boolean }) | undefined>;
  /** The event has its messages: it leaves the pending index. */
  markDispatched(organizationId: string, eventId: string, at: string): Promise<void>;
  /** Creates a message (pending, due at `nextAttemptAt`). @returns false when it already existed. */
  createMessage(message: WebhookMessageRecord): Promise<boolean>;
  getMessage(organizationId: string, messageId: string): Promise<WebhookMessageRecord | undefined>;
  /** Takes a due, pending message for one scheduled attempt until `leaseUntil`. @returns the message, or why not. */
  claim(
    organizationId: string,
    messageId: string,
    now: Date,
    leaseUntil: Date,
  ): Promise<{ ok: true; message: WebhookMessageRecord } | { ok: false; message: WebhookMessageRecord | undefined }>;
  /**
   * Logs an attempt and moves its message on, atomically, if the message made no other attempt since `seen`.
   * @param alsoPut - items written in the same transaction (a redelivery's audit entry, docs/audit.md).
   */
  recordAttempt(
    seen: WebhookMessageRecord,
    delivery: WebhookDeliveryRecord,
    result: AttemptResult,
    alsoPut?: readonly TransactItem[],
  ): Promise<boolean>;
  /** Ends a message without an attempt (its endpoint was deleted or disabled). */
  endMessage(organizationId: string, messageId: string, reason: string): Promise<void>;
  getDelivery(organizationId: string, deliveryId: string): Promise<WebhookDeliveryRecord | undefined>;
  /** A page of the delivery log, newest first, below `after` (a delivery's sort key). */
  deliveries(query: { organizationId: string; limit: number; after?: string; filters: DeliveryFilters }): Promise<DeliveryPage>;
  /**
   * A page of the event feed, newest first, below `after` (an event's `listSk`) and not older than `since`
   * (ISO 8601): at most `limit` + 1 index entries per type queried, then one batch read of the page's events.
   */
  events(query: { organizationId: string; limit: number; after?: string; since: string; filters: EventFeedFilters }): Promise<EventPage>;
  /** Pending work due at `now`, oldest first, at most `limit` items. */
  duePending(now: Date, limit: number): Promise<PendingWork[]>;
}

/** Field-by-field mappers: stored maps carry no key order and may carry bookkeeping attributes. */
const toEndpoint = (item: Record<string, unknown>): WebhookEndpointRecord => ({
  id: String(item.id),
  organizationId: String(item.organizationId),
  url: String(item.url),
  events: [...((item.events as SubscribableEventType[] | undefined) ?? [])],
  description: typeof item.description === 'string' ? item.description : null,
  createdAt: String(item.createdAt),
  status: item.status === 'disabled' ? 'disabled' : 'enabled',
  disabledAt: typeof item.disabledAt === 'string' ? item.disabledAt : null,
  disabledReason: typeof item.disabledReason === 'string' ? item.disabledReason : null,
  secret: String(item.secret),
  previousSecret: typeof item.previousSecret === 'string' ? item.previousSecret : null,
  previousSecretExpiresAt: typeof item.previousSecretExpiresAt === 'string' ? item.previousSecretExpiresAt : null,
});

const toMessage = (item: Record<string, unknown>): WebhookMessageRecord => ({
  id: String(item.id),
  organizationId: String(item.organizationId),
  eventId: String(item.eventId),
  endpointId: String(item.endpointId),
  eventType: item.eventType as WebhookEventType,
  payload: String(item.payload),
  createdAt: String(item.createdAt),
  state: item.state as MessageState,
  attempts: Number(item.attempts ?? 0),
  scheduledAttempts: Number(item.scheduledAttempts ?? 0),
  nextAttemptAt: typeof item.nextAttemptAt === 'string' ? item.nextAttemptAt : null,
  leaseUntil: typeof item.leaseUntil === 'string' ? item.leaseUntil : null,
  endedReason: typeof item.endedReason === 'string' ? item.endedReason : null,
});

const toDelivery = (item: Record<string, unknown>): WebhookDeliveryRecord => ({
  id: String(item.id),
  organizationId: String(item.organizationId),
  messageId: String(item.messageId),
  endpointId: String(item.endpointId),
  eventType: item.eventType as WebhookEventType,
  attempt: Number(item.attempt),
  trigger: item.trigger === 'redeliver' ? 'redeliver' : 'scheduled',
  attemptedAt: String(item.attemptedAt),
  status: item.status === 'succeeded' ? 'succeeded' : 'failed',
  responseStatus: typeof item.responseStatus === 'number' ? item.responseStatus : null,
  latencyMs: Number(item.latencyMs),
  responseBody: typeof item.responseBody === 'string' ? item.responseBody : null,
  error: typeof item.error === 'string' ? item.error : null,
  nextAttemptAt: typeof item.nextAttemptAt === 'string' ? item.nextAttemptAt : null,
});

/** Organization ID of a webhook partition key `ORG#<orgId>#WEBHOOKS`. */
const organizationOf = (pk: string): string => pk.slice('ORG#'.length, -'#WEBHOOKS'.length);

const exists: Clause = { expression: 'attribute_exists(pk)' };

/** A store method's factory (lib/db/methods.ts): each operation's bundle carries only the methods it names. */
type Method<K extends keyof WebhookStore> = StoreMethod<WebhookStore, K>;

/** One item read strongly consistent. */
const getItem = async ({ client, tableName }: TableAccess, key: Record<string, string>) =>
  (await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
/** A conditional update as one item of a transaction. */
const updateItem = (tableName: string, key: Record<string, string>, change: Change, condition: Clause): TransactItem => ({
  Update: { TableName: tableName, Key: key, ...updateParts(change, condition) },
});

/**
 * {@link WebhookStore.listEndpoints} on its own (the store's own method is this one): what `webhooks/list` reads,
 * so its function's bundle carries none of the code that creates, changes or delivers (docs/deploy.md, bench `bundles`).
 */
export const listEndpoints: Method<'listEndpoints'> =
  ({ client, tableName }) =>
  async (organizationId) => {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.webhooks(organizationId), ':prefix': keys.webhookPrefixes.endpoint },
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).map(toEndpoint).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  };

/** {@link WebhookStore.createEndpoint}. */
export const createEndpoint: Method<'createEndpoint'> =
  ({ client, tableName }) =>
  async (endpoint, maxEndpoints, alsoPut = []) => {
    const outcome = await transactWrite(client, {
      TransactItems: [
        updateItem(
          tableName,
          keys.webhookEndpointCount(endpoint.organizationId),
          { increment: { endpoints: 1 } },
          {
            expression: 'attribute_not_exists(endpoints) OR endpoints < :c_max',
            values: { ':c_max': maxEndpoints },
          },
        ),
        {
          Put: {
            TableName: tableName,
            Item: { ...keys.webhookEndpoint(endpoint.organizationId, endpoint.id), type: 'webhookEndpoint', ...endpoint },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...alsoPut,
      ],
    });
    return outcome.ok;
  };

/** {@link WebhookStore.getEndpoint}. */
export const getEndpoint: Method<'getEndpoint'> = (table) => async (organizationId, endpointId) => {
  const item = await getItem(table, keys.webhookEndpoint(organizationId, endpointId));
  return item ? toEndpoint(item) : undefined;
};

/** {@link WebhookStore.deleteEndpoint}. */
export const deleteEndpoint: Method<'deleteEndpoint'> =
  ({ client, tableName }) =>
  async (organizationId, endpointId, alsoPut = []) => {
    const outcome = await transactWrite(client, {
      TransactItems: [
        {
          Delete: {
            TableName: tableName,
            Key: keys.webhookEndpoint(organizationId, endpointId),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        updateItem(
          tableName,
          keys.webhookEndpointCount(organizationId),
          { increment: { endpoints: -1 } },
          { expression: 'endpoints > :c_zero', values: { ':c_zero': 0 } },
        ),
        ...alsoPut,
      ],
    });
    return outcome.ok;
  };

/** {@link WebhookStore.rotateSecret}. */
export const rotateSecret: Method<'rotateSecret'> = (table) => {
  const { client, tableName } = table;
  return async (organizationId, endpointId, secret, previousExpiresAt, alsoPut = []) => {
    for (;;) {
      const current = await getItem(table, keys.webhookEndpoint(organizationId, endpointId));
      if (!current) return undefined;
      const rotated = { secret, previousSecret: current.secret, previousSecretExpiresAt: previousExpiresAt };
      const outcome = await updateIf(
        client,
        {
          TableName: tableName,
          Key: keys.webhookEndpoint(organizationId, endpointId),
          // Optimistic: a concurrent rotation makes this one start again from the secret it left.
          ...updateParts({ set: rotated }, and(exists, { expression: 'secret = :c_secret', values: { ':c_secret': current.secret } })),
          // Nothing is read back: every other field of the answer is immutable, so the endpoint after the write is the one
          // read with this secret plus what the write set. A read-back would find nothing after a delete racing the
          // rotation, and answer an empty endpoint (Schemathesis found it with two workers).
          ReturnValues: 'NONE',
        },
        alsoPut,
      );
      if (outcome.ok) return toEndpoint({ ...current, ...rotated });
      if (!outcome.old) return undefined;
    }
  };
};

/** {@link WebhookStore.disableEndpoint}. */
export const disableEndpoint: Method<'disableEndpoint'> =
  ({ client, tableName }) =>
  async (organizationId, endpointId, at, reason) => {
    await updateIf(client, {
      TableName: tableName,
      Key: keys.webhookEndpoint(organizationId, endpointId),
      ...updateParts({ set: { status: 'disabled', disabledAt: at, disabledReason: reason } }, exists),
      ReturnValues: 'NONE',
    });
  };

/** {@link WebhookStore.putEvent}. */
export const putEvent: Method<'putEvent'> =
  ({ client, tableName }) =>
  async (event, alsoPut = []) => {
    const put = { TableName: tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' };
    if (alsoPut.length > 0) {
      if (!(await putIf(client, put, alsoPut)).ok) throw new Error(`Event ${event.id} exists already; nothing was written`);
    } else await client.send(new PutCommand(put));
  };

/** {@link WebhookStore.getEvent}. */
export const getEvent: Method<'getEvent'> = (table) => async (organizationId, eventId) => {
  const item = await getItem(table, keys.webhookEvent(organizationId, eventId));
  return item ? { ...toWebhookEvent(item), dispatched: item.gsi6pk === undefined } : undefined;
};

/** {@link WebhookStore.markDispatched}. */
export const markDispatched: Method<'markDispatched'> =
  ({ client, tableName }) =>
  async (organizationId, eventId, at) => {
    await updateIf(client, {
      TableName: tableName,
      Key: keys.webhookEvent(organizationId, eventId),
      // `listSk` stays: the event feed's indexes sort by it (docs/data-model.md).
      ...updateParts({ set: { dispatchedAt: at }, remove: ['gsi6pk'] }, exists),
      ReturnValues: 'NONE',
    });
  };

/** {@link WebhookStore.createMessage}. */
export const createMessage: Method<'createMessage'> =
  ({ client, tableName }) =>
  async ({ leaseUntil: _lease, ...message }) => {
    // Refused when this message (event × endpoint) exists already: a re-dispatch creates nothing twice.
    const outcome = await putIf(client, {
      TableName: tableName,
      Item: {
        ...keys.webhookMessage(message.organizationId, message.id),
        ...(message.state === 'pending' && message.nextAttemptAt ? keys.webhookPending(message.nextAttemptAt, message.id) : {}),
        type: 'webhookMessage',
        ...message,
        ttl: webhookTtl(message.createdAt),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return outcome.ok;
  };

/** {@link WebhookStore.getMessage}. */
export const getMessage: Method<'getMessage'> = (table) => async (organizationId, messageId) => {
  const item = await getItem(table, keys.webhookMessage(organizationId, messageId));
  return item ? toMessage(item) : undefined;
};

/** {@link WebhookStore.claim}. */
export const claim: Method<'claim'> =
  ({ client, tableName }) =>
  async (organizationId, messageId, now, leaseUntil) => {
    const outcome = await updateIf(client, {
      TableName: tableName,
      Key: keys.webhookMessage(organizationId, messageId),
      ...updateParts(
        { set: { leaseUntil: leaseUntil.toISOString() } },
        {
          expression: '#state = :c_pending AND nextAttemptAt <= :c_now AND (attribute_not_exists(leaseUntil) OR leaseUntil < :c_now)',
          names: { '#state': 'state' },
          values: { ':c_pending': 'pending', ':c_now': now.toISOString() },
        },
      ),
    });
    return outcome.ok
      ? { ok: true, message: toMessage(outcome.item) }
      : { ok: false, message: outcome.old ? toMessage(outcome.old) : undefined };
  };

/** {@link WebhookStore.recordAttempt}. */
export const recordAttempt: Method<'recordAttempt'> =
  ({ client, tableName }) =>
  async (seen, delivery, result, alsoPut = []) => {
    const pending = result.state === 'pending' && result.nextAttemptAt;
    const change: Change = {
      set: {
        state: result.state,
        attempts: seen.attempts + 1,
        scheduledAttempts: seen.scheduledAttempts + (result.scheduled ? 1 : 0),
        nextAttemptAt: result.nextAttemptAt,
        endedReason: result.endedReason,
        lastDeliveryId: delivery.id,
        ...(pending ? keys.webhookPending(result.nextAttemptAt!, seen.id) : {}),
      },
      remove: [...(result.scheduled ? ['leaseUntil'] : []), ...(pending ? [] : ['gsi6pk', 'listSk'])],
    };
    const outcome = await transactWrite(client, {
      TransactItems: [
        updateItem(tableName, keys.webhookMessage(seen.organizationId, seen.id), change, {
          expression: 'attempts = :c_seen',
          values: { ':c_seen': seen.attempts },
        }),
        {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.webhookDelivery(delivery.organizationId, delivery.id),
              type: 'webhookDelivery',
              ...delivery,
              ttl: webhookTtl(delivery.attemptedAt),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...alsoPut,
      ],
    });
    return outcome.ok;
  };

/** {@link WebhookStore.endMessage}. */
export const endMessage: Method<'endMessage'> =
  ({ client, tableName }) =>
  async (organizationId, messageId, reason) => {
    await updateIf(client, {
      TableName: tableName,
      Key: keys.webhookMessage(organizationId, messageId),
      ...updateParts(
        { set: { state: 'failed', endedReason: reason, nextAttemptAt: null }, remove: ['gsi6pk', 'listSk', 'leaseUntil'] },
        {
          expression: '#state = :c_pending',
          names: { '#state': 'state' },
          values: { ':c_pending': 'pending' },
        },
      ),
      ReturnValues: 'NONE',
    });
  };

/** {@link WebhookStore.getDelivery}. */
export const getDelivery: Method<'getDelivery'> = (table) => async (organizationId, deliveryId) => {
  const item = await getItem(table, keys.webhookDelivery(organizationId, deliveryId));
  return item ? toDelivery(item) : undefined;
};

/** {@link WebhookStore.deliveries}. */
export const deliveries: Method<'deliveries'> =
  ({ client, tableName }) =>
  async ({ organizationId, limit, after, filters }) => {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':pk': keys.webhooks(organizationId), ':prefix': keys.webhookPrefixes.delivery };
    const conditions: string[] = [];
    for (const [attribute, value] of Object.entries(filters)) {
      if (value === undefined) continue;
      names[`#f_${attribute}`] = attribute;
      values[`:f_${attribute}`] = value;
      conditions.push(`#f_${attribute} = :f_${attribute}`);
    }
    if (after !== undefined) values[':after'] = after;
    const found: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    // A filter reads past non-matching deliveries; the log is bounded by its 30-day TTL.
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression:
            after === undefined ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk AND sk BETWEEN :prefix AND :after',
          ...(conditions.length ? { FilterExpression: conditions.join(' AND '), ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: limit + 1,
          ExclusiveStartKey: start,
        }),
      );
      // BETWEEN is inclusive: the cursor's own delivery was on the previous page.
      found.push(...(page.Items ?? []).filter((item) => item.sk !== after));
      start = page.LastEvaluatedKey;
    } while (start && found.length <= limit);
    const pageItems = found.slice(0, limit);
    return {
      deliveries: pageItems.map(toDelivery),
      hasMore: found.length > limit,
      ...(pageItems.length ? { last: String(pageItems.at(-1)!.sk) } : {}),
    };
  };

/** {@link WebhookStore.events}. */
export const events: Method<'events'> =
  ({ client, tableName }) =>
  async ({ organizationId, limit, after, since, filters }) => {
    const campaignId = filters.campaignId;
    // One partition per type asked for (or the all-types one); a type array merges its partitions' pages.
    const partitions: { index: IndexDefinition; pk: string }[] = (filters.types ?? [undefined]).map((type) => {
      const index =
        type === undefined
          ? campaignId === undefined
            ? EVENT_INDEXES.all
            : EVENT_INDEXES.byCampaign
          : campaignId === undefined
            ? EVENT_INDEXES.byType
            : EVENT_INDEXES.byTypeAndCampaign;
      const itemKeys = keys.eventIndexes(organizationId, {
        id: '',
        occurredAt: '',
        type: type ?? '',
        ...(campaignId ? { campaignId } : {}),
      }) as Record<string, string>;
      return { index, pk: itemKeys[index.partitionKey]! };
    });
    const found = (
      await Promise.all(
        partitions.map(async ({ index, pk }) => {
          const { Items } = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: index.indexName,
              KeyConditionExpression: after === undefined ? '#pk = :pk AND #sk >= :since' : '#pk = :pk AND #sk BETWEEN :since AND :after',
              ExpressionAttributeNames: {
                '#pk': index.partitionKey,
                '#sk': index.sortKey,
                '#id': 'pk',
                '#sort': 'sk',
                '#list': 'listSk',
              },
              ExpressionAttributeValues: { ':pk': pk, ':since': since, ...(after === undefined ? {} : { ':after': after }) },
              ProjectionExpression: '#id, #sort, #list',
              ScanIndexForward: false,
              // BETWEEN is inclusive: one more for the cursor's own event, which was on the previous page.
              Limit: limit + (after === undefined ? 1 : 2),
            }),
          );
          return (Items ?? []).filter((item) => item.listSk !== after);
        }),
      )
    )
      .flat()
      .sort((a, b) => String(b.listSk).localeCompare(String(a.listSk)));
    const pageEntries = found.slice(0, limit);
    // A page is at most MAX_EVENT_PAGE_SIZE events (lib/webhooks/schema.ts): one BatchGetItem.
    const items = await batchGetCall(
      client,
      tableName,
      pageEntries.map((entry) => ({ pk: entry.pk, sk: entry.sk })),
    );
    const bySk = new Map(items.map((item) => [String(item.sk), item]));
    const events = pageEntries.flatMap((entry) => {
      const item = bySk.get(String(entry.sk));
      return item ? [toWebhookEvent(item)] : [];
    });
    return { events, hasMore: found.length > limit, ...(pageEntries.length ? { last: String(pageEntries.at(-1)!.listSk) } : {}) };
  };

/** {@link WebhookStore.duePending}. */
export const duePending: Method<'duePending'> =
  ({ client, tableName }) =>
  async (now, limit) => {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: WEBHOOK_PENDING_INDEX.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk <= :due',
        ExpressionAttributeNames: { '#pk': WEBHOOK_PENDING_INDEX.partitionKey, '#sk': WEBHOOK_PENDING_INDEX.sortKey },
        ExpressionAttributeValues: { ':pk': keys.webhookPending('', '').gsi6pk, ':due': `${now.toISOString()}#\uffff` },
        Limit: limit,
      }),
    );
    return (Items ?? []).flatMap((item): PendingWork[] => {
      const sk = String(item.sk);
      const organizationId = organizationOf(String(item.pk));
      if (sk.startsWith(keys.webhookPrefixes.event))
        return [{ kind: 'event', organizationId, id: sk.slice(keys.webhookPrefixes.event.length) }];
      if (sk.startsWith(keys.webhookPrefixes.message))
        return [{ kind: 'message', organizationId, id: sk.slice(keys.webhookPrefixes.message.length) }];
      return [];
    });
  };

/** Builds the DynamoDB implementation of {@link WebhookStore}: every method (an operation's function builds only the ones it calls). */
export function createWebhookStore(table: TableAccess): WebhookStore {
  return storeOf(table, {
    createEndpoint,
    listEndpoints,
    getEndpoint,
    deleteEndpoint,
    rotateSecret,
    disableEndpoint,
    putEvent,
    getEvent,
    markDispatched,
    createMessage,
    getMessage,
    claim,
    recordAttempt,
    endMessage,
    getDelivery,
    deliveries,
    events,
    duePending,
  });
}
