/**
 * Webhook delivery (docs/webhooks.md), the same code in AWS and on the local
 * stack:
 *
 * 1. {@link dispatchEvent} fans a recorded event out: one message per
 *    endpoint subscribed to its type, its body frozen, and the message's
 *    schedule started ({@link DeliveryScheduler}: a Step Functions execution
 *    in AWS, the local poller's pending index on the local stack).
 * 2. {@link attemptDelivery} makes one scheduled attempt of a due message:
 *    the URL checked again (SSRF), the body signed with the `standardwebhooks`
 *    library (both secrets during a rotation's overlap), POSTed with a 15 s
 *    limit and no redirects, the attempt logged, and the message moved on:
 *    `delivered` on 2xx, `failed` on 410 (the endpoint is disabled) or when
 *    the schedule is exhausted, otherwise due again after the backoff.
 * 3. {@link redeliverMessage} sends one message again now, outside its
 *    schedule, with the same `webhook-id`.
 *
 * Delivery is at least once: an attempt whose outcome was not recorded (a
 * crash) is made again once its lease ends.
 */
import { Webhook } from 'standardwebhooks';
import type { TransactItem } from '../db/conditional';
import { NotFoundError, WebhookEndpointDisabledError } from '../errors';
import { newWebhookDeliveryId } from '../ids';
import { emitMetrics, logger } from '../observability';
import type { OrganizationStore } from '../organizations/store';
import { eventPayload, messageIdOf } from './events';
import { postWebhook, WEBHOOK_TIMEOUT_MS, type HttpOutcome } from './http';
import { MAX_ATTEMPTS, retryDelaySeconds } from './schedule';
import { checkWebhookUrl, type Resolver } from './ssrf';
import type { AttemptResult, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookMessageRecord, WebhookStore } from './store';

/** Starts the schedule of a new message (AWS: a Step Functions execution; local: nothing, the poller reads the pending index). */
export interface DeliveryScheduler {
  start(message: { organizationId: string; messageId: string }): Promise<void>;
}

/** Settings of delivery (lib/config.ts). */
export interface DeliverySettings {
  /** `WEBHOOKS_ALLOW_LOCALHOST`: http to 127.0.0.1 / localhost allowed. */
  allowLocalhost: boolean;
  /** `WEBHOOK_RETRY_BASE_SECONDS`: first wait of the schedule (seconds). */
  retryBaseSeconds: number;
}

/** What delivery needs. */
export interface DeliveryDependencies {
  webhooks: WebhookStore;
  organizations: Pick<OrganizationStore, 'get'>;
  scheduler: DeliveryScheduler;
  /** How URLs' hosts are resolved for the address checks (default: the system resolver, lib/webhooks/ssrf.ts). */
  resolve?: Resolver;
  settings: DeliverySettings;
}

/** A scheduled attempt holds its message this long: the request's 15 s limit plus time to record the outcome. */
export const LEASE_MS = WEBHOOK_TIMEOUT_MS + 5_000;

/** `User-Agent` of every webhook request. */
export const WEBHOOK_USER_AGENT = 'CampaignEnrichmentAPI-Webhooks/1.0';

/**
 * The `webhook-signature` header of a message at `at`: `v1,<base64>` signed
 * with the current secret, followed (space-separated) by one signed with the
 * previous secret while its overlap lasts (Standard Webhooks' rotation).
 */
export function signatureHeader(
  endpoint: Pick<WebhookEndpointRecord, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  messageId: string,
  at: Date,
  payload: string,
): string {
  const previousLive =
    endpoint.previousSecret && endpoint.previousSecretExpiresAt && Date.parse(endpoint.previousSecretExpiresAt) > at.getTime();
  const secrets = previousLive ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, payload)).join(' ');
}

/**
 * Fans an event out into one message per target endpoint and starts each
 * message's schedule; then the event leaves the pending index. Safe to run
 * again (messages have derived IDs and are created once).
 * @returns the IDs of the event's messages.
 */
export async function dispatchEvent(
  deps: DeliveryDependencies,
  organizationId: string,
  eventId: string,
  now = new Date(),
): Promise<string[]> {
  const event = await deps.webhooks.getEvent(organizationId, eventId);
  if (!event) return [];
  const targets = event.endpointId
    ? [await deps.webhooks.getEndpoint(organizationId, event.endpointId)].filter(
        (endpoint): endpoint is WebhookEndpointRecord => endpoint !== undefined,
      )
    : (await deps.webhooks.listEndpoints(organizationId)).filter(
        (endpoint) => endpoint.status === 'enabled' && (endpoint.events as string[]).includes(event.type),
      );
  const messageIds: string[] = [];
  if (targets.length > 0) {
    // The balance of `data.campaign.credits.remaining` is read here, once per event: every endpoint and every retry gets the same body.
    const remaining = event.campaign ? ((await deps.organizations.get(organizationId))?.smbCredits ?? 0) : 0;
    const payload = eventPayload(event, remaining);
    for (const endpoint of targets) {
      const message: WebhookMessageRecord = {
        id: messageIdOf(event.id, endpoint.id),
        organizationId,
        eventId: event.id,
        endpointId: endpoint.id,
        eventType: event.type,
        payload,
        createdAt: now.toISOString(),
        state: 'pending',
        attempts: 0,
        scheduledAttempts: 0,
        nextAttemptAt: now.toISOString(),
        leaseUntil: null,
        endedReason: null,
      };
      await deps.webhooks.createMessage(message);
      await deps.scheduler.start({ organizationId, messageId: message.id });
      messageIds.push(message.id);
    }
  }
  if (!event.dispatched) await deps.webhooks.markDispatched(organizationId, event.id, now.toISOString());
  return messageIds;
}

/** Sends a message once and says how it went (never throws for the endpoint's faults). */
async function send(
  deps: Pick<DeliveryDependencies, 'resolve' | 'settings'>,
  message: WebhookMessageRecord,
  endpoint: WebhookEndpointRecord,
  at: Date,
): Promise<HttpOutcome> {
  const check = await checkWebhookUrl(endpoint.url, { allowLocalhost: deps.settings.allowLocalhost, resolve: deps.resolve });
  if (!check.ok) return { status: null, body: '', latencyMs: 0, error: `refused before sending: the URL ${check.reason}` };
  return postWebhook({
    url: check.url,
    addresses: check.addresses,
    body: message.payload,
    headers: {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'webhook-id': message.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader(endpoint, message.id, at, message.payload),
    },
  });
}

const succeeded = (outcome: HttpOutcome) => outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
const errorOf = (outcome: HttpOutcome): string | null =>
  outcome.error ??
  (outcome.status !== null && outcome.status >= 300 && outcome.status < 400 ? `redirect (${outcome.status}) not followed` : null);

/**
 * Logs an attempt and moves its message on, retrying when another attempt
 * (a redelivery) was recorded meanwhile; `decide` sees the message as it is then.
 */
async function record(
  deps: Pick<DeliveryDependencies, 'webhooks'>,
  seen: WebhookMessageRecord,
  attempt: { at: Date; outcome: HttpOutcome; trigger: WebhookDeliveryRecord['trigger'] },
  decide: (message: WebhookMessageRecord) => AttemptResult,
  alsoPut: readonly TransactItem[] = [],
): Promise<{ delivery: WebhookDeliveryRecord; result: AttemptResult }> {
  const id = newWebhookDeliveryId(attempt.at);
  for (
    let message: WebhookMessageRecord | undefined = seen;
    message;
    message = await deps.webhooks.getMessage(seen.organizationId, seen.id)
  ) {
    const result = decide(message);
    const delivery: WebhookDeliveryRecord = {
      id,
      organizationId: message.organizationId,
      messageId: message.id,
      endpointId: message.endpointId,
      eventType: message.eventType,
      attempt: message.attempts + 1,
      trigger: attempt.trigger,
      attemptedAt: attempt.at.toISOString(),
      status: succeeded(attempt.outcome) ? 'succeeded' : 'failed',
      responseStatus: attempt.outcome.status,
      latencyMs: attempt.outcome.latencyMs,
      responseBody: attempt.outcome.status === null ? null : attempt.outcome.body,
      error: errorOf(attempt.outcome),
      nextAttemptAt: result.state === 'pending' ? result.nextAttemptAt : null,
    };
    if (await deps.webhooks.recordAttempt(message, delivery, result, alsoPut)) return { delivery, result };
  }
  throw new Error(`Webhook message ${seen.id} disappeared while its attempt was being recorded`);
}

/** After a 410: the endpoint is disabled (it asked never to be called again). */
async function disableIfGone(
  deps: Pick<DeliveryDependencies, 'webhooks'>,
  outcome: HttpOutcome,
  endpoint: WebhookEndpointRecord,
  at: Date,
): Promise<void> {
  if (outcome.status !== 410) return;
  await deps.webhooks.disableEndpoint(endpoint.organizationId, endpoint.id, at.toISOString(), 'The endpoint answered 410 Gone.');
  logger.info('Webhook endpoint disabled after 410 Gone', { organizationId: endpoint.organizationId, endpointId: endpoint.id });
}

/** Outcome of {@link attemptDelivery}: the message is finished, or when to come back. */
export type ScheduledOutcome = { done: true } | { done: false; nextAttemptAt: string };

/**
 * One scheduled attempt of a message, if it is pending, due and not held by
 * another attempt; otherwise says when to come back.
 */
export async function attemptDelivery(
  deps: DeliveryDependencies,
  organizationId: string,
  messageId: string,
  now = new Date(),
): Promise<ScheduledOutcome> {
  const claim = await deps.webhooks.claim(organizationId, messageId, now, new Date(now.getTime() + LEASE_MS));
  if (!claim.ok) {
    const message = claim.message;
    if (!message || message.state !== 'pending' || !message.nextAttemptAt) return { done: true };
    const wake = [message.nextAttemptAt, message.leaseUntil]
      .filter((t): t is string => t !== null)
      .sort()
      .at(-1)!;
    return { done: false, nextAttemptAt: wake };
  }
  const message = claim.message;
  const endpoint = await deps.webhooks.getEndpoint(organizationId, message.endpointId);
  if (!endpoint || endpoint.status === 'disabled') {
    await deps.webhooks.endMessage(organizationId, messageId, endpoint ? 'endpoint_disabled' : 'endpoint_deleted');
    return { done: true };
  }
  const at = new Date();
  const outcome = await send(deps, message, endpoint, at);
  const ended = new Date();
  const { delivery, result } = await record(deps, message, { at, outcome, trigger: 'scheduled' }, (current) => {
    if (current.state !== 'pending')
      return { state: current.state, nextAttemptAt: null, endedReason: current.endedReason, scheduled: true };
    if (succeeded(outcome)) return { state: 'delivered', nextAttemptAt: null, endedReason: null, scheduled: true };
    if (outcome.status === 410) return { state: 'failed', nextAttemptAt: null, endedReason: 'endpoint_gone', scheduled: true };
    const failedAttempts = current.scheduledAttempts + 1;
    if (failedAttempts >= MAX_ATTEMPTS) return { state: 'failed', nextAttemptAt: null, endedReason: 'schedule_exhausted', scheduled: true };
    const next = new Date(ended.getTime() + retryDelaySeconds(failedAttempts, deps.settings.retryBaseSeconds) * 1000);
    return { state: 'pending', nextAttemptAt: next.toISOString(), endedReason: null, scheduled: true };
  });
  await disableIfGone(deps, outcome, endpoint, ended);
  emitMetrics({
    ...(delivery.status === 'failed' ? { WebhookAttemptsFailed: 1 } : {}),
    ...(result.state === 'delivered' && message.state === 'pending' ? { WebhookMessagesDelivered: 1 } : {}),
    ...(result.state === 'failed' ? { WebhookMessagesFailed: 1 } : {}),
  });
  if (result.state === 'failed')
    logger.warn('Webhook message failed', { organizationId, messageId, endpointId: endpoint.id, reason: result.endedReason });
  return result.state === 'pending' && result.nextAttemptAt ? { done: false, nextAttemptAt: result.nextAttemptAt } : { done: true };
}

/**
 * Sends one message again now with the same `webhook-id` (docs/webhooks.md
 * `/redeliver`), whatever its state, and logs the attempt (`trigger:
 * redeliver`). A 2xx marks it delivered; a failure leaves its schedule as it
 * was; a 410 disables the endpoint.
 * @throws NotFoundError for a message, delivery or endpoint the organization does not have.
 * @throws WebhookEndpointDisabledError when the message's endpoint was disabled (it answered 410 Gone): nothing is sent.
 */
export async function redeliverMessage(
  deps: DeliveryDependencies,
  organizationId: string,
  ref: { messageId: string } | { deliveryId: string },
  auditItem?: () => TransactItem,
): Promise<WebhookDeliveryRecord> {
  let messageId: string;
  if ('deliveryId' in ref) {
    const delivery = await deps.webhooks.getDelivery(organizationId, ref.deliveryId);
    if (!delivery) throw new NotFoundError('webhook delivery', ref.deliveryId);
    messageId = delivery.messageId;
  } else {
    messageId = ref.messageId;
  }
  const message = await deps.webhooks.getMessage(organizationId, messageId);
  if (!message) throw new NotFoundError('webhook message', messageId);
  const endpoint = await deps.webhooks.getEndpoint(organizationId, message.endpointId);
  if (!endpoint) throw new NotFoundError('webhook endpoint', message.endpointId);
  // An endpoint that answered 410 Gone was disabled: nothing more is sent to it, redeliveries included (docs/webhooks.md).
  if (endpoint.status === 'disabled') throw new WebhookEndpointDisabledError(endpoint.id);
  const at = new Date();
  const outcome = await send(deps, message, endpoint, at);
  const { delivery } = await record(
    deps,
    message,
    { at, outcome, trigger: 'redeliver' },
    (current) => {
      if (succeeded(outcome)) return { state: 'delivered', nextAttemptAt: null, endedReason: null, scheduled: false };
      if (outcome.status === 410 && current.state === 'pending')
        return { state: 'failed', nextAttemptAt: null, endedReason: 'endpoint_gone', scheduled: false };
      return { state: current.state, nextAttemptAt: current.nextAttemptAt, endedReason: current.endedReason, scheduled: false };
    },
    auditItem ? [auditItem()] : [],
  );
  await disableIfGone(deps, outcome, endpoint, new Date());
  if (delivery.status === 'failed') emitMetrics({ WebhookAttemptsFailed: 1 });
  return delivery;
}
