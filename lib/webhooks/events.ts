/**
 * Webhook events (docs/webhooks.md): what happened, recorded as an outbox item
 * in the same DynamoDB transaction as the state change that caused it, so a
 * crash between the change and its delivery cannot lose the event.
 *
 * The stores that change a campaign compose {@link eventItems} into their
 * transaction (like `movementItems` of lib/credits); fan-out to endpoints and
 * delivery happen later (lib/webhooks/delivery.ts).
 */
import type { TransactItem } from '../credits/ledger';
import * as keys from '../db/keys';
import { derivedId } from '../ids';
import { toCampaign, type CampaignRecord } from '../campaigns/model';

/** Events about campaigns, one per state change (docs/webhooks.md). */
export const CAMPAIGN_EVENT_TYPES = [
  'campaign.enriched',
  'campaign.enrichment_failed',
  'campaign.enrichment_canceled',
  'campaign.expired',
] as const;
/** A campaign event type. */
export type CampaignEventType = (typeof CAMPAIGN_EVENT_TYPES)[number];
/** Events about the organization (docs/limits.md): its smb balance fell below its low-balance threshold. */
export const ORGANIZATION_EVENT_TYPES = ['organization.credits_low'] as const;
/** An organization event type. */
export type OrganizationEventType = (typeof ORGANIZATION_EVENT_TYPES)[number];
/**
 * Privacy events (docs/privacy.md "Events"): an erasure the organization asked for completed; the vendor erased a
 * contact the organization was delivered. Their `data` carries hashes and IDs, never a raw identifier.
 */
export const PRIVACY_EVENT_TYPES = ['privacy.erasure_completed', 'privacy.contact_erased'] as const;
/** A privacy event type. */
export type PrivacyEventType = (typeof PRIVACY_EVENT_TYPES)[number];
/** Events about results as they arrive (docs/results.md): a batch of accounts became readable. */
export const RESULTS_EVENT_TYPES = ['campaign.accounts_processed'] as const;
/** The event types an endpoint subscribes to (its `events`; all by default). */
export const SUBSCRIBABLE_EVENT_TYPES = [
  ...CAMPAIGN_EVENT_TYPES,
  ...ORGANIZATION_EVENT_TYPES,
  ...RESULTS_EVENT_TYPES,
  ...PRIVACY_EVENT_TYPES,
] as const;
/** An event type an endpoint can subscribe to. */
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
/** Every event type an endpoint can receive: the subscribable ones and `webhook.test` (sent on request to one endpoint). */
export const WEBHOOK_EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, 'webhook.test'] as const;
/** An event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Events are kept this long after they happen, then removed by the table's TTL (seconds). */
export const WEBHOOK_RETENTION_SECONDS = 30 * 86_400;

/** An event as stored. */
export interface WebhookEvent {
  /** `evt_` + 21 base58; derived from (campaign, attempt, type) for campaign events. */
  id: string;
  organizationId: string;
  type: WebhookEventType;
  /** When the state change happened (ISO 8601 UTC): the payload's `timestamp`. */
  occurredAt: string;
  /** The campaign record right after the change (campaign events). */
  campaign?: CampaignRecord;
  /** The only endpoint the event goes to (`webhook.test`); absent: every subscribed endpoint. */
  endpointId?: string;
  /** `organization.credits_low`: the smb balance the charge left and the threshold it fell below (credits). */
  credits?: { smb: number; threshold: number };
  /** A privacy event's `data`, as sent (built by lib/privacy/events.ts). */
  data?: Record<string, unknown>;
  /** `campaign.accounts_processed`: the batch that became readable (docs/results.md). */
  batch?: ProcessedBatch;
  /**
   * The live organization's ID when `organizationId` is a test twin's: the ID the customer knows, which the
   * payload names (docs/test-mode.md); absent for a live organization.
   */
  liveOrganizationId?: string;
}

/**
 * ID of the message of `eventId` for `endpointId` (the `webhook-id` header):
 * the same however often the event is fanned out. Here, beside the event, so
 * that an operation naming a message (test) does not bundle delivery and its
 * signing library.
 */
export const messageIdOf = (eventId: string, endpointId: string): string => derivedId('msg', eventId, endpointId);

/** A campaign event of `type`, with the record as the change left it. The ID derives from (campaign, attempt, type): one event per change. */
export function campaignEvent(type: CampaignEventType, campaign: CampaignRecord, attemptId: string, occurredAt: string): WebhookEvent {
  return { id: derivedId('evt', campaign.id, attemptId, type), organizationId: campaign.organizationId, type, occurredAt, campaign };
}

/**
 * The `organization.credits_low` event of the charge of `attemptId` that took
 * the smb balance from at or above `threshold` to `smb`, below it (
 * docs/limits.md). The ID derives from (organization, attempt, type): one event per
 * crossing, however often the charge's transaction is retried.
 */
export function creditsLowEvent(
  organizationId: string,
  attemptId: string,
  occurredAt: string,
  credits: { smb: number; threshold: number },
  liveOrganizationId?: string,
): WebhookEvent {
  return {
    id: derivedId('evt', organizationId, attemptId, 'organization.credits_low'),
    organizationId,
    type: 'organization.credits_low',
    occurredAt,
    credits,
    ...(liveOrganizationId !== undefined ? { liveOrganizationId } : {}),
  };
}

/** A privacy event: its ID derives from `idParts` (one event per erasure, or per vendor erasure and organization). */
export function privacyEvent(
  type: PrivacyEventType,
  organizationId: string,
  occurredAt: string,
  data: Record<string, unknown>,
  ...idParts: string[]
): WebhookEvent {
  return { id: derivedId('evt', organizationId, type, ...idParts), organizationId, type, occurredAt, data };
}

/** What `campaign.accounts_processed` tells: the campaign, the attempt, the seqs the batch took and what it found. */
export interface ProcessedBatch {
  campaignId: string;
  /** The campaign's status when the batch became readable (`enriching`). */
  status: string;
  attemptId: string;
  fromSeq: number;
  toSeq: number;
  found: number;
  notFound: number;
}

/**
 * The `campaign.accounts_processed` event of one readable batch (docs/results.md).
 * The ID derives from (campaign, attempt, first seq): one event per batch,
 * however often its transaction is retried.
 */
export function accountsProcessedEvent(organizationId: string, occurredAt: string, batch: ProcessedBatch): WebhookEvent {
  return {
    id: derivedId('evt', batch.campaignId, batch.attemptId, 'campaign.accounts_processed', String(batch.fromSeq)),
    organizationId,
    type: 'campaign.accounts_processed',
    occurredAt,
    batch,
  };
}

/** TTL attribute value (epoch seconds) of webhook items written at `at`. */
export const webhookTtl = (at: string | Date): number => Math.floor(new Date(at).getTime() / 1000) + WEBHOOK_RETENTION_SECONDS;

/** The campaign an event is about, if any: the filter `campaignId` of the event feed (docs/events.md). */
export const campaignIdOf = (event: WebhookEvent): string | undefined => event.campaign?.id ?? event.batch?.campaignId;

/**
 * Whether an event is in the organization's event feed (docs/events.md): every event but `webhook.test`, which is
 * a request to one endpoint, not something that happened.
 */
export const inEventFeed = (type: WebhookEventType): type is SubscribableEventType => type !== 'webhook.test';

/**
 * The stored item of an event: pending fan-out (in the pending index) until dispatched, and in the event feed's
 * list indexes (docs/data-model.md) until its TTL removes it.
 */
export function eventItem(event: WebhookEvent): Record<string, unknown> {
  const campaignId = campaignIdOf(event);
  return {
    ...keys.webhookEvent(event.organizationId, event.id),
    ...(inEventFeed(event.type)
      ? keys.eventIndexes(event.organizationId, {
          id: event.id,
          occurredAt: event.occurredAt,
          type: event.type,
          ...(campaignId ? { campaignId } : {}),
        })
      : {}),
    ...keys.webhookPending(event.occurredAt, event.id),
    type: 'webhookEvent',
    id: event.id,
    organizationId: event.organizationId,
    eventType: event.type,
    occurredAt: event.occurredAt,
    ...(event.campaign ? { campaign: event.campaign } : {}),
    ...(event.endpointId ? { endpointId: event.endpointId } : {}),
    ...(event.credits ? { credits: event.credits } : {}),
    ...(event.data ? { data: event.data } : {}),
    ...(event.batch ? { batch: event.batch } : {}),
    ...(event.liveOrganizationId ? { liveOrganizationId: event.liveOrganizationId } : {}),
    ttl: webhookTtl(event.occurredAt),
  };
}

/** Maps a stored event item back to its {@link WebhookEvent}. */
export function toWebhookEvent(item: Record<string, unknown>): WebhookEvent {
  return {
    id: String(item.id),
    organizationId: String(item.organizationId),
    type: item.eventType as WebhookEventType,
    occurredAt: String(item.occurredAt),
    ...(item.campaign ? { campaign: item.campaign as CampaignRecord } : {}),
    ...(typeof item.endpointId === 'string' ? { endpointId: item.endpointId } : {}),
    ...(item.data ? { data: item.data as Record<string, unknown> } : {}),
    ...(item.credits
      ? {
          credits: {
            smb: Number((item.credits as { smb: unknown }).smb),
            threshold: Number((item.credits as { threshold: unknown }).threshold),
          },
        }
      : {}),
    ...(typeof item.liveOrganizationId === 'string' ? { liveOrganizationId: item.liveOrganizationId } : {}),
    ...(item.batch ? { batch: toBatch(item.batch as Record<string, unknown>) } : {}),
  };
}

const toBatch = (b: Record<string, unknown>): ProcessedBatch => ({
  campaignId: String(b.campaignId),
  status: String(b.status),
  attemptId: String(b.attemptId),
  fromSeq: Number(b.fromSeq),
  toSeq: Number(b.toSeq),
  found: Number(b.found),
  notFound: Number(b.notFound),
});

/** The `data` of `campaign.accounts_processed` (docs/results.md), members in the document's order. */
const processedData = (batch: ProcessedBatch) => ({
  campaign: { id: batch.campaignId, status: batch.status },
  attemptId: batch.attemptId,
  fromSeq: batch.fromSeq,
  toSeq: batch.toSeq,
  counts: { found: batch.found, notFound: batch.notFound },
});

/**
 * The transaction items that record `event` with the state change that
 * causes it: one Put, refused if the same event was already recorded.
 */
export function eventItems(tableName: string, event: WebhookEvent): TransactItem[] {
  return [{ Put: { TableName: tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' } }];
}

/**
 * The body every endpoint receives for `event` (docs/webhooks.md):
 * `{type, timestamp, data}`, `data.campaign` as get shows the campaign at
 * `occurredAt`; `organization.credits_low`: `data: {organization: {id},
 * credits: {smb, threshold}}` (docs/limits.md), `id` the live organization's
 * ID for a test twin's event (docs/test-mode.md); `campaign.accounts_processed`:
 * `data: {campaign: {id, status}, attemptId, fromSeq, toSeq, counts}` (docs/results.md).
 *
 * @param remainingCredits - the organization's smb balance (credits) for
 *   `data.campaign.credits.remaining`, read when the event is fanned out (the
 *   transaction that records the event cannot read the balance it leaves).
 */
export function eventPayload(event: WebhookEvent, remainingCredits: number): string {
  const data = event.campaign
    ? { campaign: toCampaign(event.campaign, remainingCredits, new Date(event.occurredAt)) }
    : event.data
      ? event.data
      : event.credits
        ? { organization: { id: event.liveOrganizationId ?? event.organizationId }, credits: event.credits }
        : event.batch
          ? processedData(event.batch)
          : { endpointId: event.endpointId ?? null };
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data });
}
