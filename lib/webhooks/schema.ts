/**
 * Schemas of the webhook operations and of the event payloads (decisions
 * §12), from which the OpenAPI document's paths and `webhooks` section are
 * generated.
 */
import * as z from 'zod/mini';
import { timestamp } from '../schemas';
import { defineOperation } from '../http/operation';
import { WEBHOOK_DELIVERY_ID_PATTERN, WEBHOOK_ENDPOINT_ID_PATTERN, WEBHOOK_MESSAGE_ID_PATTERN } from '../ids';
import { CampaignSchema } from '../campaigns/schema';
import { CAMPAIGN_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from './events';

/** Most endpoints an organization may have (decisions §12). */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** Longest endpoint URL (characters). */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;
/** Longest endpoint description (characters). */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
/** Largest delivery-log page. */
export const MAX_DELIVERY_PAGE_SIZE = 100;
/** Delivery-log page size when `limit` is omitted. */
export const DEFAULT_DELIVERY_PAGE_SIZE = 25;
/** Hours both secrets sign after a rotation. */
export const SECRET_OVERLAP_HOURS = 24;

/** The retry schedule as the docs state it (lib/webhooks/schedule.ts). */
export const RETRY_SCHEDULE_TEXT =
  'Delivery is at least once. An attempt succeeds on a 2xx answer within 15 s; a redirect is not followed and counts as a failure; 410 Gone disables the endpoint. Failed attempts are retried with exponential backoff and jitter: 14 attempts, immediately and then after about 30 s, 1, 2, 4, 8, 16, 32 min, 1.1, 2.1, 4.3, 6, 6 and 6 h (each wait 0–25 % longer at random), so the last attempt comes 26.5 to 33 hours after the first.';

const endpointId = () =>
  z.string().check(z.regex(WEBHOOK_ENDPOINT_ID_PATTERN, { error: 'must be a webhook endpoint ID: "whe_" followed by 21 base58 characters' }), z.meta({ example: 'whe_4fRt7YpK2mXq9WzN3bVc8' }));
const messageId = () =>
  z.string().check(z.regex(WEBHOOK_MESSAGE_ID_PATTERN, { error: 'must be a webhook message ID: "msg_" followed by 21 base58 characters' }), z.meta({ example: 'msg_2Jd8KfQz5LmR7tVx3NpWb' }));
const deliveryId = () =>
  z.string().check(z.regex(WEBHOOK_DELIVERY_ID_PATTERN, { error: 'must be a webhook delivery ID: "whd_" followed by 21 base58 characters' }), z.meta({ example: 'whd_3pQ9zT7kHn4Vx8Rb2Wc6L' }));

/** A campaign event type an endpoint can subscribe to. */
export const WebhookEventTypeSchema = z.enum(CAMPAIGN_EVENT_TYPES).check(z.meta({
  id: 'WebhookEventType',
  description: '`campaign.enriched`, `campaign.enrichment_failed`, `campaign.enrichment_canceled`, `campaign.expired`.',
}));
const AnyEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES).check(z.meta({ description: 'A campaign event type, or `webhook.test`.' }));

const secret = () => z.string().check(z.meta({ description: 'Signing secret, `whsec_` + base64 of 32 random bytes. Shown only by create and rotate-secret: store it.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3mTCtQDu0M4=' }));

/** An endpoint as list shows it (never its secret). */
export const WebhookEndpointSchema = z
  .strictObject({
    id: endpointId(),
    url: z.string().check(z.meta({ example: 'https://hooks.example.com/enrichment' })),
    events: z.array(WebhookEventTypeSchema).check(z.meta({ description: 'Event types sent to it.' })),
    description: z.nullable(z.string()),
    createdAt: timestamp(),
    status: z.enum(['enabled', 'disabled']).check(z.meta({ description: '`disabled` once it answered 410 Gone: it receives nothing more. Delete it and create it again to resume.' })),
    disabledAt: z.nullable(timestamp()),
  }).check(z.meta({ id: 'WebhookEndpoint' }));

/** `POST /v1/webhooks/create` body. */
export const CreateWebhookEndpointRequest = z.strictObject({
  url: z
    .string().check(z.minLength(1), z.maxLength(MAX_WEBHOOK_URL_LENGTH), z.meta({ description: '`https` URL whose host resolves only to public addresses (never loopback, private, link-local, unique-local or metadata). The local stack also takes `http://127.0.0.1` and `http://localhost` when `WEBHOOKS_ALLOW_LOCALHOST` is on.', example: 'https://hooks.example.com/enrichment' })),
  events: z.optional(z.array(WebhookEventTypeSchema).check(z.minLength(1), z.maxLength(CAMPAIGN_EVENT_TYPES.length))).check(z.meta({ description: 'Event types to send; default all four. urlencoded/multipart: repeat `events`.' })),
  description: z.optional(z.nullable(z.string().check(z.maxLength(MAX_WEBHOOK_DESCRIPTION_LENGTH)))).check(z.meta({ description: 'Free text for your own reference.' })),
});
/** Validated create request. */
export type CreateWebhookEndpointInput = z.output<typeof CreateWebhookEndpointRequest>;

/** The create answer: the endpoint and its secret (decisions §12). */
export const CreatedWebhookEndpointSchema = z
  .strictObject({
    id: endpointId(),
    url: z.string(),
    events: z.array(WebhookEventTypeSchema),
    description: z.nullable(z.string()),
    createdAt: timestamp(),
    secret: secret(),
  }).check(z.meta({ id: 'CreatedWebhookEndpoint' }));

/** `{endpointId}` bodies. */
export const WebhookEndpointIdRequest = z.strictObject({ endpointId: endpointId() });

/** The rotate-secret answer. */
export const RotatedWebhookSecretSchema = z
  .strictObject({
    id: endpointId(),
    url: z.string(),
    events: z.array(WebhookEventTypeSchema),
    description: z.nullable(z.string()),
    createdAt: timestamp(),
    secret: secret(),
    previousSecretExpiresAt: timestamp().check(z.meta({ description: `Until then (${SECRET_OVERLAP_HOURS} h) every message carries two signatures: the new secret's and the previous one's.` })),
  }).check(z.meta({ id: 'RotatedWebhookSecret' }));

/** One attempt in the delivery log. */
export const WebhookDeliverySchema = z
  .strictObject({
    id: deliveryId(),
    messageId: messageId().check(z.meta({ description: 'The message (one event for one endpoint): the `webhook-id` header of every attempt of it.' })),
    endpointId: endpointId(),
    eventType: AnyEventTypeSchema,
    attempt: z.int().check(z.minimum(1), z.meta({ description: '1-based number of this attempt of the message (redeliveries included).' })),
    trigger: z.enum(['scheduled', 'redeliver']).check(z.meta({ description: '`scheduled`: the retry schedule; `redeliver`: the redeliver operation.' })),
    attemptedAt: timestamp(),
    status: z.enum(['succeeded', 'failed']).check(z.meta({ description: '`succeeded`: a 2xx answer within 15 s.' })),
    responseStatus: z.nullable(z.int()).check(z.meta({ description: 'HTTP status of the answer; null when none came.', example: 200 })),
    latencyMs: z.int().check(z.minimum(0), z.meta({ description: 'Milliseconds until the answer (its first 1 KB) was read, or the attempt failed.' })),
    responseBody: z.nullable(z.string()).check(z.meta({ description: 'First 1 KB of the answer body (UTF-8); null when no answer came.' })),
    error: z.nullable(z.string()).check(z.meta({ description: 'Why it failed without a usable answer: `timeout after 15 s`, `redirect (302) not followed`, a connection error code, or a refused address.' })),
    nextAttemptAt: z.nullable(timestamp()).check(z.meta({ description: 'When the schedule tries the message again; null when it does not (delivered, given up, or a redelivery).' })),
  }).check(z.meta({ id: 'WebhookDelivery' }));

/** `POST /v1/webhooks/deliveries` body. */
export const ListWebhookDeliveriesRequest = z.strictObject({
  filters: z.optional(z
    .strictObject({
      endpointId: z.optional(endpointId()),
      eventType: z.optional(AnyEventTypeSchema),
      status: z.optional(z.enum(['succeeded', 'failed'])),
    })),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))).check(z.meta({ description: 'Opaque `nextCursor` of the previous page, unchanged.' })),
  limit: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_DELIVERY_PAGE_SIZE))).check(z.meta({ description: `Page size, default ${DEFAULT_DELIVERY_PAGE_SIZE}.` })),
});
/** Validated deliveries request. */
export type ListWebhookDeliveriesInput = z.output<typeof ListWebhookDeliveriesRequest>;

/** `POST /v1/webhooks/redeliver` body: exactly one of `messageId`, `deliveryId`. */
export const RedeliverRequest = z
  .strictObject({
    messageId: z.optional(messageId()),
    deliveryId: z.optional(deliveryId()).check(z.meta({ description: 'Any attempt of the message; the message is sent again.' })),
  })
  .check((ctx) => {
    const given = ['messageId', 'deliveryId'].filter((key) => ctx.value[key as 'messageId'] !== undefined);
    if (given.length !== 1) {
      ctx.issues.push({ code: 'custom', input: ctx.value, path: [given.length === 0 ? 'messageId' : 'deliveryId'], message: 'send exactly one of messageId and deliveryId' });
    }
  });
/** Validated redeliver request. */
export type RedeliverInput = z.output<typeof RedeliverRequest>;

const ENDPOINT_NOT_FOUND = ['invalid_request', 'revoked_api_key', 'not_found'] as const;

export const createWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createWebhookEndpoint',
  // Retry-safe with an Idempotency-Key (decisions §10).
  idempotent: true,
  path: '/v1/webhooks/create',
  summary: 'Create a webhook endpoint',
  description: `Registers a URL to receive campaign events, signed with Standard Webhooks 1.0 (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`: \`v1,\` + base64 HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<body>\` keyed with the secret). The answer is the only time the secret is shown. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per organization (409 \`webhook_endpoint_limit_reached\`). The URL is checked now and again before every attempt. ${RETRY_SCHEDULE_TEXT}`,
  request: CreateWebhookEndpointRequest,
  response: CreatedWebhookEndpointSchema,
  errors: ['invalid_request', 'revoked_api_key', 'webhook_endpoint_limit_reached'],
  example: { url: 'https://hooks.example.com/enrichment', events: ['campaign.enriched', 'campaign.enrichment_failed'], description: 'CRM sync' },
});

export const listWebhookEndpointsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listWebhookEndpoints',
  path: '/v1/webhooks/list',
  summary: 'List webhook endpoints',
  description: "The organization's endpoints, oldest first, without their secrets.",
  request: z.strictObject({}),
  response: z.strictObject({ endpoints: z.array(WebhookEndpointSchema) }).check(z.meta({ id: 'WebhookEndpointList' })),
  errors: ['invalid_request', 'revoked_api_key'],
});

export const deleteWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'deleteWebhookEndpoint',
  // Retry-safe with an Idempotency-Key (decisions §10).
  idempotent: true,
  path: '/v1/webhooks/delete',
  summary: 'Delete a webhook endpoint',
  description: 'Removes the endpoint; messages still waiting for a retry to it are given up. Its delivery log stays readable (30 days).',
  request: WebhookEndpointIdRequest,
  response: z.strictObject({ id: endpointId(), deleted: z.literal(true) }).check(z.meta({ id: 'DeletedWebhookEndpoint' })),
  errors: [...ENDPOINT_NOT_FOUND],
  example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
});

export const rotateWebhookSecretOperation = /* @__PURE__ */ defineOperation({
  operationId: 'rotateWebhookSecret',
  // Retry-safe with an Idempotency-Key (decisions §10).
  idempotent: true,
  path: '/v1/webhooks/rotate-secret',
  summary: "Rotate a webhook endpoint's signing secret",
  description: `Issues a new secret. For ${SECRET_OVERLAP_HOURS} hours every message is signed with both the new and the previous secret (two space-separated signatures in \`webhook-signature\`), so receivers can switch without losing a message; rotating again within the overlap drops the oldest secret.`,
  request: WebhookEndpointIdRequest,
  response: RotatedWebhookSecretSchema,
  errors: [...ENDPOINT_NOT_FOUND],
  example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
});

export const testWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'testWebhookEndpoint',
  // Retry-safe with an Idempotency-Key (decisions §10).
  idempotent: true,
  path: '/v1/webhooks/test',
  summary: 'Send a test event to an endpoint',
  description: 'Sends a `webhook.test` event (`data.endpointId`) to this endpoint only, through the same delivery, signatures, retries and log as every event. Follow it in the delivery log by `messageId`.',
  request: WebhookEndpointIdRequest,
  response: z.strictObject({ messageId: messageId(), eventType: z.literal('webhook.test') }).check(z.meta({ id: 'WebhookTestSent' })),
  errors: [...ENDPOINT_NOT_FOUND],
  example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
});

export const listWebhookDeliveriesOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listWebhookDeliveries',
  path: '/v1/webhooks/deliveries',
  summary: 'List webhook delivery attempts',
  description:
    'The delivery log: every attempt of every message, newest first, kept 30 days: when, the HTTP status, the latency and the first 1 KB of the answer. `filters.endpointId`, `filters.eventType` and `filters.status` (`succeeded`/`failed`) narrow it (AND). Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[status]=failed`.',
  request: ListWebhookDeliveriesRequest,
  response: z.strictObject({ deliveries: z.array(WebhookDeliverySchema), nextCursor: z.nullable(z.string()) }).check(z.meta({ id: 'WebhookDeliveryPage' })),
  errors: ['invalid_request', 'revoked_api_key'],
  example: { filters: { status: 'failed' }, limit: 25 },
});

export const redeliverWebhookOperation = /* @__PURE__ */ defineOperation({
  operationId: 'redeliverWebhook',
  // Retry-safe with an Idempotency-Key (decisions §10).
  idempotent: true,
  path: '/v1/webhooks/redeliver',
  summary: 'Send a webhook message again now',
  description:
    'Sends one message again at once, with the same `webhook-id` (receivers deduplicate on it), a fresh timestamp and signature, whatever its state, and answers the attempt as the log records it (`trigger: redeliver`). A 2xx marks the message delivered; a failure leaves its retry schedule as it was. Name the message by `messageId`, or by `deliveryId` of any of its attempts.',
  request: RedeliverRequest,
  response: WebhookDeliverySchema,
  errors: [...ENDPOINT_NOT_FOUND],
  example: { messageId: 'msg_2Jd8KfQz5LmR7tVx3NpWb' },
});

/** The body of a campaign event (decisions §12), as the OpenAPI `webhooks` section shows it. */
export const campaignEventPayloadSchema = (type: (typeof CAMPAIGN_EVENT_TYPES)[number]) =>
  z
    .strictObject({
      type: z.literal(type),
      timestamp: timestamp().check(z.meta({ description: 'When the change happened.' })),
      data: z.strictObject({ campaign: CampaignSchema }).check(z.meta({
        description: '`campaign`: the campaign as get showed it at `timestamp`; `credits.remaining` is the balance when the event was fanned out to endpoints (normally within a second of the change).',
      })),
    }).check(z.meta({ id: `WebhookEvent_${type.replace(/[^a-z]/g, '_')}` }));

/** The body of `webhook.test`. */
export const TestEventPayloadSchema = z
  .strictObject({ type: z.literal('webhook.test'), timestamp: timestamp(), data: z.strictObject({ endpointId: endpointId() }) }).check(z.meta({ id: 'WebhookEvent_webhook_test' }));

/** What each event means (the OpenAPI `webhooks` section). */
export const EVENT_DESCRIPTIONS: Record<(typeof WEBHOOK_EVENT_TYPES)[number], string> = {
  'campaign.enriched': 'An enrichment completed: the campaign is `enriched`, with its results and `resultsExpireAt`.',
  'campaign.enrichment_failed': 'An enrichment failed: credits refunded, the campaign is back to `draft` with `lastEnrichment.status = failed`.',
  'campaign.enrichment_canceled': 'An operator canceled an enrichment: credits refunded, the campaign is back to `draft` with `lastEnrichment.status = canceled`.',
  'campaign.expired': 'The result access period ended: the campaign is `expired`.',
  'webhook.test': 'Sent by `/v1/webhooks/test` to one endpoint.',
};

/** Every webhook operation. */
export const WEBHOOK_OPERATIONS = [
  createWebhookEndpointOperation,
  listWebhookEndpointsOperation,
  deleteWebhookEndpointOperation,
  rotateWebhookSecretOperation,
  testWebhookEndpointOperation,
  listWebhookDeliveriesOperation,
  redeliverWebhookOperation,
];
