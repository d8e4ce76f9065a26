/**
 * The webhook operations (docs/webhooks.md): endpoints, the test event, the
 * delivery log and redelivery.
 */
import type { TransactItem } from '../db/conditional';
import { createHash } from 'node:crypto';
import { setting, cursorSecretSetting } from '../config';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { InvalidRequestError, NotFoundError, WebhookEndpointLimitReachedError } from '../errors';
import { newWebhookEndpointId, newWebhookEventId, newWebhookSecret } from '../ids';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_RETENTION_SECONDS, eventPayload, messageIdOf, type WebhookEvent } from './events';
import { redeliverMessage, type DeliveryDependencies } from './delivery';
import { checkWebhookUrl, type Resolver } from './ssrf';
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStore } from './store';
import type { OrganizationStore } from '../organizations/store';
import {
  DEFAULT_DELIVERY_PAGE_SIZE,
  DEFAULT_EVENT_PAGE_SIZE,
  MAX_WEBHOOK_ENDPOINTS,
  SECRET_OVERLAP_HOURS,
  type CreateWebhookEndpointInput,
  type ListEventsInput,
  type ListWebhookDeliveriesInput,
  type RedeliverInput,
} from './schema';

/** What the endpoint operations need. */
export interface WebhookDependencies {
  /** What creating an endpoint writes, and its saved answer reads. */
  webhooks: Pick<WebhookStore, 'createEndpoint' | 'getEndpoint'>;
  /** How URLs' hosts are resolved for the address checks (default: the system resolver, lib/webhooks/ssrf.ts). */
  resolve?: Resolver;
  allowLocalhost: boolean;
}

/** An endpoint as list shows it. */
const toApiEndpoint = (endpoint: WebhookEndpointRecord) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  createdAt: endpoint.createdAt,
  status: endpoint.status,
  disabledAt: endpoint.disabledAt,
});

/** A delivery as the log shows it. */
const toApiDelivery = ({ organizationId: _organizationId, ...delivery }: WebhookDeliveryRecord) => delivery;

const endpointOf = async (deps: { webhooks: Pick<WebhookStore, 'getEndpoint'> }, organizationId: string, endpointId: string) => {
  const endpoint = await deps.webhooks.getEndpoint(organizationId, endpointId);
  if (!endpoint) throw new NotFoundError('webhook endpoint', endpointId);
  return endpoint;
};

/**
 * Creates an endpoint with a new secret, after checking its URL (https,
 * public addresses only; docs/webhooks.md).
 * @throws InvalidRequestError naming `url` when the URL is refused.
 * @throws WebhookEndpointLimitReachedError at {@link MAX_WEBHOOK_ENDPOINTS} endpoints.
 */
export async function createWebhookEndpoint(
  deps: WebhookDependencies,
  organizationId: string,
  input: CreateWebhookEndpointInput,
  now = new Date(),
  auditItem?: () => TransactItem,
) {
  const check = await checkWebhookUrl(input.url, { allowLocalhost: deps.allowLocalhost, resolve: deps.resolve });
  if (!check.ok) throw new InvalidRequestError('The webhook URL is refused.', [`url: ${check.reason}`]);
  const endpoint: WebhookEndpointRecord = {
    id: newWebhookEndpointId(),
    organizationId,
    url: check.url.href,
    events: input.events ? SUBSCRIBABLE_EVENT_TYPES.filter((type) => input.events!.includes(type)) : [...SUBSCRIBABLE_EVENT_TYPES],
    description: input.description ?? null,
    createdAt: now.toISOString(),
    status: 'enabled',
    disabledAt: null,
    disabledReason: null,
    secret: newWebhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
  };
  if (!(await deps.webhooks.createEndpoint(endpoint, MAX_WEBHOOK_ENDPOINTS, auditItem ? [auditItem()] : [])))
    throw new WebhookEndpointLimitReachedError(MAX_WEBHOOK_ENDPOINTS);
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    createdAt: endpoint.createdAt,
    secret: endpoint.secret,
  };
}

/** SHA-256 (hex) of a signing secret: what a saved answer keeps to recognize it. */
const secretDigest = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * How the answers of create and rotate-secret are saved under an
 * `Idempotency-Key` (docs/idempotency.md, docs/webhooks.md): never with the secret. The saved
 * answer keeps the secret's SHA-256 instead; a replay re-attaches the
 * secret as long as it still signs: while it is the endpoint's current
 * secret, or its previous one within the 24 h after a rotation. Once it no
 * longer signs (a second rotation, the 24 h passed, the endpoint deleted), the
 * replay answers without `secret`.
 */
export function endpointSecretAnswer(deps: () => { webhooks: Pick<WebhookStore, 'getEndpoint'> }) {
  return {
    toSaved(data: unknown): unknown {
      const { secret, ...rest } = data as { secret?: string };
      return secret === undefined ? rest : { ...rest, secretSha256: secretDigest(secret) };
    },
    async fromSaved(saved: unknown, { organizationId }: { organizationId: string }, now = new Date()): Promise<unknown> {
      // An answer saved before this rule still holds its secret: judged by the same test, and never replayed as saved.
      const { secretSha256 = undefined, secret: legacySecret, ...rest } = saved as { id: string; secretSha256?: string; secret?: string };
      const digest = secretSha256 ?? (legacySecret === undefined ? undefined : secretDigest(legacySecret));
      if (digest === undefined) return rest;
      const endpoint = await deps().webhooks.getEndpoint(organizationId, rest.id);
      if (!endpoint) return rest;
      if (secretDigest(endpoint.secret) === digest) return { ...rest, secret: endpoint.secret };
      const previousSigns =
        endpoint.previousSecret !== null &&
        endpoint.previousSecretExpiresAt !== null &&
        Date.parse(endpoint.previousSecretExpiresAt) > now.getTime() &&
        secretDigest(endpoint.previousSecret) === digest;
      return previousSigns ? { ...rest, secret: endpoint.previousSecret } : rest;
    },
  };
}

/** The organization's endpoints, without secrets. */
export async function listWebhookEndpoints(deps: { webhooks: Pick<WebhookStore, 'listEndpoints'> }, organizationId: string) {
  return { endpoints: (await deps.webhooks.listEndpoints(organizationId)).map(toApiEndpoint) };
}

/** Deletes an endpoint. @throws NotFoundError when the organization has no such endpoint. */
export async function deleteWebhookEndpoint(
  deps: { webhooks: Pick<WebhookStore, 'deleteEndpoint'> },
  organizationId: string,
  endpointId: string,
  auditItem?: () => TransactItem,
) {
  if (!(await deps.webhooks.deleteEndpoint(organizationId, endpointId, auditItem ? [auditItem()] : [])))
    throw new NotFoundError('webhook endpoint', endpointId);
  return { id: endpointId, deleted: true as const };
}

/** Issues a new secret; the previous one keeps signing for 24 h. @throws NotFoundError when the organization has no such endpoint. */
export async function rotateWebhookSecret(
  deps: { webhooks: Pick<WebhookStore, 'rotateSecret'> },
  organizationId: string,
  endpointId: string,
  now = new Date(),
  auditItem?: () => TransactItem,
) {
  const expiresAt = new Date(now.getTime() + SECRET_OVERLAP_HOURS * 3_600_000).toISOString();
  const endpoint = await deps.webhooks.rotateSecret(
    organizationId,
    endpointId,
    newWebhookSecret(),
    expiresAt,
    auditItem ? [auditItem()] : [],
  );
  if (!endpoint) throw new NotFoundError('webhook endpoint', endpointId);
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    createdAt: endpoint.createdAt,
    secret: endpoint.secret,
    previousSecretExpiresAt: expiresAt,
  };
}

/**
 * Records a `webhook.test` event for one endpoint; delivery takes it from
 * there like any event. @throws NotFoundError when the organization has no such endpoint.
 */
export async function sendTestEvent(
  deps: { webhooks: Pick<WebhookStore, 'getEndpoint' | 'putEvent'> },
  organizationId: string,
  endpointId: string,
  now = new Date(),
  auditItem?: () => TransactItem,
) {
  await endpointOf(deps, organizationId, endpointId);
  const eventId = newWebhookEventId();
  await deps.webhooks.putEvent(
    { id: eventId, organizationId, type: 'webhook.test', occurredAt: now.toISOString(), endpointId },
    auditItem ? [auditItem()] : [],
  );
  return { messageId: messageIdOf(eventId, endpointId), eventType: 'webhook.test' as const };
}

/**
 * One page of the delivery log, newest first.
 * @throws InvalidRequestError for a cursor that was altered, belongs to another organization, or comes with other filters or limit.
 */
export async function listWebhookDeliveries(
  deps: { webhooks: Pick<WebhookStore, 'deliveries'> },
  organizationId: string,
  input: ListWebhookDeliveriesInput,
) {
  const limit = input.limit ?? DEFAULT_DELIVERY_PAGE_SIZE;
  const filters = { endpointId: input.filters?.endpointId, eventType: input.filters?.eventType, status: input.filters?.status };
  const binding = {
    o: organizationId,
    f: JSON.stringify(['webhook-deliveries', filters.endpointId ?? null, filters.eventType ?? null, filters.status ?? null]),
    l: limit,
  };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, setting(cursorSecretSetting), binding);
  const page = await deps.webhooks.deliveries({ organizationId, limit, filters, ...(after === undefined ? {} : { after }) });
  return {
    deliveries: page.deliveries.map(toApiDelivery),
    nextCursor: page.hasMore && page.last ? encodeCursor({ ...binding, a: page.last }, setting(cursorSecretSetting)) : null,
  };
}

/**
 * Sends a message again now (see {@link redeliverMessage}); with `auditItem`, the request's audit entry is written in
 * the transaction that logs the attempt (docs/audit.md).
 */
export async function redeliverWebhook(
  deps: DeliveryDependencies,
  organizationId: string,
  input: RedeliverInput,
  auditItem?: () => TransactItem,
) {
  const ref = input.messageId !== undefined ? { messageId: input.messageId } : { deliveryId: input.deliveryId! };
  return toApiDelivery(await redeliverMessage(deps, organizationId, ref, auditItem));
}

/** An event as the feed shows it: its ID, type, time and the `data` its webhook body carries (docs/events.md). */
const toApiEvent = (event: WebhookEvent, remainingCredits: number) => ({
  id: event.id,
  type: event.type,
  createdAt: event.occurredAt,
  data: (JSON.parse(eventPayload(event, remainingCredits)) as { data: unknown }).data,
});

/**
 * One page of the organization's event feed (docs/events.md): every event it has, with or without webhook
 * endpoints, newest first, of the last 30 days. Reads at most `limit` + 1 index entries per type filtered on,
 * the page's events, and the balance once when the page holds a campaign event (`data.campaign.credits.remaining`).
 * @throws InvalidRequestError for a cursor that was altered, belongs to another organization, or comes with other filters or limit.
 */
export async function listEvents(
  deps: { webhooks: Pick<WebhookStore, 'events'>; organizations: Pick<OrganizationStore, 'smbCredits'> },
  organizationId: string,
  input: ListEventsInput,
  now = new Date(),
) {
  const limit = input.limit ?? DEFAULT_EVENT_PAGE_SIZE;
  const given = input.filters?.type;
  const types = given === undefined ? undefined : [...new Set(Array.isArray(given) ? given : [given])].sort();
  const campaignId = input.filters?.campaignId;
  const binding = { o: organizationId, f: JSON.stringify(['events', types ?? null, campaignId ?? null]), l: limit };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, setting(cursorSecretSetting), binding);
  const since = new Date(now.getTime() - WEBHOOK_RETENTION_SECONDS * 1000).toISOString();
  const page = await deps.webhooks.events({
    organizationId,
    limit,
    since,
    filters: { ...(types ? { types } : {}), ...(campaignId ? { campaignId } : {}) },
    ...(after === undefined ? {} : { after }),
  });
  const remaining = page.events.some((event) => event.campaign) ? ((await deps.organizations.smbCredits(organizationId)) ?? 0) : 0;
  return {
    events: page.events.map((event) => toApiEvent(event, remaining)),
    nextCursor: page.hasMore && page.last ? encodeCursor({ ...binding, a: page.last }, setting(cursorSecretSetting)) : null,
  };
}
