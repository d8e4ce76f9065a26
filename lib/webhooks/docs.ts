/**
 * The published contract of the webhook operations beyond what their handlers
 * need (docs/webhooks.md): the response shapes, the event payloads of the
 * OpenAPI `webhooks` section, summaries, descriptions and examples. Only the
 * OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { timestamp } from '../schemas';
import { documentOperation } from '../http/operation';
import { DraftCampaignSchema, EXAMPLE_ENRICHED, EnrichedCampaignSchema, ExpiredCampaignSchema } from '../campaigns/docs';
import { WEBHOOK_MESSAGE_ID_PATTERN } from '../ids';
import { CAMPAIGN_EVENT_TYPES, inEventFeed, type PrivacyEventType, type WebhookEventType, type WEBHOOK_EVENT_TYPES } from './events';

/** The event types whose bodies this domain documents: every one but the privacy events (lib/privacy/docs.ts; lib/contract/events.ts joins them). */
export type WebhookDocumentedEventType = Exclude<WebhookEventType, PrivacyEventType>;
import {
  AnyEventTypeSchema,
  MAX_WEBHOOK_ENDPOINTS,
  SECRET_OVERLAP_HOURS,
  WebhookEventTypeSchema,
  createWebhookEndpointOperation,
  deleteWebhookEndpointOperation,
  deliveryId,
  endpointId,
  listEventsOperation,
  listWebhookDeliveriesOperation,
  listWebhookEndpointsOperation,
  messageId,
  redeliverWebhookOperation,
  rotateWebhookSecretOperation,
  testWebhookEndpointOperation,
} from './schema';

/** The retry schedule as the docs state it (lib/webhooks/schedule.ts). */
export const RETRY_SCHEDULE_TEXT =
  'Delivery is at least once. An attempt succeeds on a 2xx answer within 15 s; a redirect is not followed and counts as a failure; 410 Gone disables the endpoint. Failed attempts are retried with exponential backoff and jitter: 14 attempts, immediately and then after about 30 s, 1, 2, 4, 8, 16, 32 min, 1.1, 2.1, 4.3, 6, 6 and 6 h (each wait 0–25 % longer at random), so the last attempt comes 26.5 to 33 hours after the first.';

const secret = () =>
  z.string().check(
    z.meta({
      description: 'Signing secret, `whsec_` + base64 of 32 random bytes. Shown only by create and rotate-secret: store it.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3mTCtQDu0M4=',
    }),
  );

/** An endpoint as list shows it (never its secret). */
export const WebhookEndpointSchema = z
  .strictObject({
    id: endpointId(),
    url: z.string().check(z.meta({ example: 'https://hooks.example.com/enrichment' })),
    events: z.array(WebhookEventTypeSchema).check(z.meta({ description: 'Event types sent to it.' })),
    description: z.nullable(z.string()),
    createdAt: timestamp(),
    status: z
      .enum(['enabled', 'disabled'])
      .check(
        z.meta({ description: '`disabled` once it answered 410 Gone: it receives nothing more. Delete it and create it again to resume.' }),
      ),
    disabledAt: z.nullable(timestamp()),
  })
  .check(z.meta({ id: 'WebhookEndpoint' }));

/** Fields of the create and rotate-secret answers: the endpoint and its secret (docs/webhooks.md). */
const endpointWithSecret = () => ({
  id: endpointId(),
  url: z.string(),
  events: z.array(WebhookEventTypeSchema),
  description: z.nullable(z.string()),
  createdAt: timestamp(),
  // Optional only for a replay (docs/idempotency.md): a saved answer holds no secret, and a replay shows it only while it still signs.
  secret: z.optional(secret()).check(
    z.meta({
      description:
        "Signing secret, `whsec_` + base64 of 32 random bytes. Shown only by create and rotate-secret: store it. Always present in the first answer; an `Idempotency-Key` replay shows it as long as it still signs (the endpoint's current secret, or its previous one for 24 h after a rotation), never once it no longer signs.",
    }),
  ),
});

/** The create answer: the endpoint and its secret (docs/webhooks.md). */
export const CreatedWebhookEndpointSchema = z.strictObject(endpointWithSecret()).check(z.meta({ id: 'CreatedWebhookEndpoint' }));

/** The rotate-secret answer. */
export const RotatedWebhookSecretSchema = z
  .strictObject({
    ...endpointWithSecret(),
    previousSecretExpiresAt: timestamp().check(
      z.meta({
        description: `Until then (${SECRET_OVERLAP_HOURS} h) every message carries two signatures: the new secret's and the previous one's.`,
      }),
    ),
  })
  .check(z.meta({ id: 'RotatedWebhookSecret' }));

/** One attempt in the delivery log. */
export const WebhookDeliverySchema = z
  .strictObject({
    id: deliveryId(),
    messageId: messageId().check(
      z.meta({ description: 'The message (one event for one endpoint): the `webhook-id` header of every attempt of it.' }),
    ),
    endpointId: endpointId(),
    eventType: AnyEventTypeSchema,
    attempt: z.int().check(z.minimum(1), z.meta({ description: '1-based number of this attempt of the message (redeliveries included).' })),
    trigger: z
      .enum(['scheduled', 'redeliver'])
      .check(z.meta({ description: '`scheduled`: the retry schedule; `redeliver`: the redeliver operation.' })),
    attemptedAt: timestamp(),
    status: z.enum(['succeeded', 'failed']).check(z.meta({ description: '`succeeded`: a 2xx answer within 15 s.' })),
    responseStatus: z.nullable(z.int()).check(z.meta({ description: 'HTTP status of the answer; null when none came.', example: 200 })),
    latencyMs: z
      .int()
      .check(z.minimum(0), z.meta({ description: 'Milliseconds until the answer (its first 1 KB) was read, or the attempt failed.' })),
    responseBody: z.nullable(z.string()).check(z.meta({ description: 'First 1 KB of the answer body (UTF-8); null when no answer came.' })),
    error: z.nullable(z.string()).check(
      z.meta({
        description:
          'Why it failed without a usable answer: `timeout after 15 s`, `redirect (302) not followed`, a connection error code, or a refused address.',
      }),
    ),
    nextAttemptAt: z
      .nullable(timestamp())
      .check(
        z.meta({ description: 'When the schedule tries the message again; null when it does not (delivered, given up, or a redelivery).' }),
      ),
  })
  .check(z.meta({ id: 'WebhookDelivery' }));

const ENDPOINT_NOT_FOUND = ['invalid_request', 'revoked_api_key', 'not_found'] as const;

/** The campaign each event carries, by status: the event's state change decides it (docs/webhooks.md). */
const EVENT_CAMPAIGN = {
  'campaign.enriched': EnrichedCampaignSchema,
  'campaign.enrichment_failed': DraftCampaignSchema,
  'campaign.enrichment_canceled': DraftCampaignSchema,
  'campaign.expired': ExpiredCampaignSchema,
} as const;

/** The body of a campaign event (docs/webhooks.md), as the OpenAPI `webhooks` section and the AsyncAPI document show it. */
export const campaignEventPayloadSchema = (type: (typeof CAMPAIGN_EVENT_TYPES)[number]) =>
  z
    .strictObject({
      type: z.literal(type),
      timestamp: timestamp().check(z.meta({ description: 'When the change happened.' })),
      data: z.strictObject({ campaign: EVENT_CAMPAIGN[type] }).check(
        z.meta({
          description:
            '`campaign`: the campaign as get showed it at `timestamp`; `credits.remaining` is the balance when the event was fanned out to endpoints (normally within a second of the change).',
        }),
      ),
    })
    .check(z.meta({ id: `WebhookEvent_${type.replace(/[^a-z]/g, '_')}` }));

/** The body of `organization.credits_low` (docs/limits.md). */
export const CreditsLowEventPayloadSchema = z
  .strictObject({
    type: z.literal('organization.credits_low'),
    timestamp: timestamp().check(z.meta({ description: 'When the charge that crossed the threshold happened.' })),
    data: z.strictObject({
      organization: z.strictObject({ id: z.string() }),
      credits: z.strictObject({
        smb: z.int().check(z.minimum(0), z.meta({ description: 'The smb balance the charge left (credits).' })),
        threshold: z.int().check(z.minimum(0), z.meta({ description: 'The low-balance threshold it fell below (credits).' })),
      }),
    }),
  })
  .check(z.meta({ id: 'WebhookEvent_organization_credits_low' }));

/** The body of `campaign.accounts_processed` (docs/results.md): one batch of accounts became readable. */
export const AccountsProcessedEventPayloadSchema = z
  .strictObject({
    type: z.literal('campaign.accounts_processed'),
    timestamp: timestamp().check(z.meta({ description: 'When the batch became readable.' })),
    data: z.strictObject({
      campaign: z.strictObject({
        id: z.string(),
        status: z.string().check(z.meta({ description: "The campaign's status then: `enriching`." })),
      }),
      attemptId: z.string().check(z.meta({ description: 'The attempt the seqs belong to.' })),
      fromSeq: z
        .int()
        .check(
          z.minimum(1),
          z.meta({ description: "The batch's first seq: read it with `POST /v1/campaigns/results` and `afterSeq = fromSeq - 1`." }),
        ),
      toSeq: z.int().check(z.minimum(1), z.meta({ description: "The batch's last seq." })),
      counts: z.strictObject({
        found: z.int().check(z.minimum(0), z.meta({ description: 'Accounts of the batch with at least one contact.' })),
        notFound: z.int().check(z.minimum(0), z.meta({ description: 'Accounts of the batch without contacts.' })),
      }),
    }),
  })
  .check(z.meta({ id: 'WebhookEvent_campaign_accounts_processed' }));

/** The body of `webhook.test`. */
export const TestEventPayloadSchema = z
  .strictObject({ type: z.literal('webhook.test'), timestamp: timestamp(), data: z.strictObject({ endpointId: endpointId() }) })
  .check(z.meta({ id: 'WebhookEvent_webhook_test' }));

/**
 * Every webhook event type with the schema of its body, in the order the
 * documents list them: the one list the OpenAPI `webhooks` section and the
 * AsyncAPI document are both built from (lib/contract/).
 */
export const eventPayloadSchemas = () =>
  [
    ...CAMPAIGN_EVENT_TYPES.map((type) => [type, campaignEventPayloadSchema(type)] as const),
    ['organization.credits_low', CreditsLowEventPayloadSchema] as const,
    ['campaign.accounts_processed', AccountsProcessedEventPayloadSchema] as const,
    ['webhook.test', TestEventPayloadSchema] as const,
  ] as const;

/** A failed attempt's campaign: back in `draft` with its credits refunded (docs example). */
const EXAMPLE_RETURNED_DRAFT = (status: 'failed' | 'canceled') => ({
  ...EXAMPLE_ENRICHED,
  status: 'draft',
  name: 'EMEA SaaS accounts',
  id: 'camp_9Ab3cDe4FgH5jK6mN7pQr',
  credits: { charged: 0, remaining: 10000 },
  lastEnrichment: { status, startedAt: '2026-11-22T10:02:41.518Z', endedAt: '2026-11-22T10:09:12.044Z', refunded: true },
  completedAt: undefined,
  resultsExpireAt: undefined,
  results: undefined,
});

const withoutUndefined = <T extends object>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A real-looking body of each event (the documents' examples). */
export const EVENT_EXAMPLES: Record<WebhookDocumentedEventType, unknown> = {
  'campaign.enriched': { type: 'campaign.enriched', timestamp: EXAMPLE_ENRICHED.completedAt, data: { campaign: EXAMPLE_ENRICHED } },
  'campaign.enrichment_failed': {
    type: 'campaign.enrichment_failed',
    timestamp: '2026-11-22T10:09:12.044Z',
    data: { campaign: withoutUndefined(EXAMPLE_RETURNED_DRAFT('failed')) },
  },
  'campaign.enrichment_canceled': {
    type: 'campaign.enrichment_canceled',
    timestamp: '2026-11-22T10:09:12.044Z',
    data: { campaign: withoutUndefined(EXAMPLE_RETURNED_DRAFT('canceled')) },
  },
  'campaign.expired': {
    type: 'campaign.expired',
    timestamp: EXAMPLE_ENRICHED.resultsExpireAt,
    data: { campaign: withoutUndefined({ ...EXAMPLE_ENRICHED, status: 'expired', completedAt: undefined, results: undefined }) },
  },
  'organization.credits_low': {
    type: 'organization.credits_low',
    timestamp: '2026-11-22T10:02:41.518Z',
    data: { organization: { id: 'org_7Hq2kXv9LmN3pR5sT8wYz' }, credits: { smb: 740, threshold: 1000 } },
  },
  'campaign.accounts_processed': {
    type: 'campaign.accounts_processed',
    timestamp: '2026-11-22T10:03:05.214Z',
    data: {
      campaign: { id: 'camp_7Hq2kXv9LmN3pR5sT8wYz', status: 'enriching' },
      attemptId: 'att_9xK2mN4pQ6rS8tU1vW3yZ',
      fromSeq: 1001,
      toSeq: 2000,
      counts: { found: 812, notFound: 188 },
    },
  },
  'webhook.test': { type: 'webhook.test', timestamp: '2026-11-22T09:45:03.120Z', data: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' } },
};

/** Headers of every webhook request (Standard Webhooks 1.0): the OpenAPI `webhooks` section and the AsyncAPI document. */
export const WEBHOOK_HEADERS = {
  'webhook-id': {
    required: true,
    description: 'The message ID (`msg_…`): the same on every retry and redelivery of one message; deduplicate on it.',
    schema: { type: 'string', pattern: WEBHOOK_MESSAGE_ID_PATTERN.source },
    example: 'msg_2Jd8KfQz5LmR7tVx3NpWb',
  },
  'webhook-timestamp': {
    required: true,
    description: 'Seconds since the epoch when this attempt was signed; refuse ones more than 5 minutes off.',
    schema: { type: 'string', pattern: '^\\d+$' },
    example: '1795339872',
  },
  'webhook-signature': {
    required: true,
    description:
      'Space-separated `v1,<base64>` signatures: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64-decoded secret after `whsec_`. Two during the 24 h after a rotation (new secret, previous secret); accept the request when any one verifies.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})?$' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
} as const;

/** What each event means (the OpenAPI `webhooks` section). */
export const EVENT_DESCRIPTIONS: Record<WebhookDocumentedEventType, string> = {
  'campaign.enriched': 'An enrichment completed: the campaign is `enriched`, with its results and `resultsExpireAt`.',
  'campaign.enrichment_failed':
    'An enrichment failed: credits refunded, the campaign is back to `draft` with `lastEnrichment.status = failed`.',
  'campaign.enrichment_canceled':
    'An operator canceled an enrichment: credits refunded, the campaign is back to `draft` with `lastEnrichment.status = canceled`.',
  'campaign.expired': 'The result access period ended: the campaign is `expired`.',
  'organization.credits_low':
    "A launch's charge took the smb balance from at or above the organization's low-balance threshold to below it (once per crossing; `POST /v1/org/limits` shows the threshold).",
  'campaign.accounts_processed':
    'A batch of accounts became readable as results (docs/results.md): seqs `fromSeq`..`toSeq` of the attempt, once per batch while the campaign enriches.',
  'webhook.test': 'Sent by `/v1/webhooks/test` to one endpoint.',
};

const EXAMPLE_ENDPOINT = {
  id: 'whe_4fRt7YpK2mXq9WzN3bVc8',
  url: 'https://hooks.example.com/enrichment',
  events: ['campaign.enriched', 'campaign.enrichment_failed'],
  description: 'CRM sync',
  createdAt: '2026-11-20T14:12:09.331Z',
};
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3mTCtQDu0M4=';
const EXAMPLE_DELIVERY = {
  id: 'whd_3pQ9zT7kHn4Vx8Rb2Wc6L',
  messageId: 'msg_2Jd8KfQz5LmR7tVx3NpWb',
  endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8',
  eventType: 'campaign.enriched',
  attempt: 3,
  trigger: 'scheduled',
  attemptedAt: '2026-11-22T09:32:43.907Z',
  status: 'failed',
  responseStatus: 503,
  latencyMs: 412,
  responseBody: '{"error":"upstream unavailable"}',
  error: null,
  nextAttemptAt: '2026-11-22T09:34:51.266Z',
};

/** The webhook operations, documented. */
/**
 * An event as the feed shows it (docs/events.md): `{id, type, createdAt, data}`, `data` as the webhook body of
 * its type carries it; one schema per type of `payloads` (every domain's events: the composition root joins
 * them, lib/contract/events.ts).
 */
const feedEventSchema = (payloads: readonly (readonly [WebhookEventType, { shape: { data: z.ZodMiniType } }])[]) =>
  z.union(
    payloads
      .filter(([type]) => inEventFeed(type))
      .map(([type, payload]) =>
        z
          .strictObject({
            id: z.string().check(
              z.meta({
                description: "The event's ID (`evt_` + 21 base58): the same every time the feed shows it.",
                example: 'evt_5kR8pT2vX9mQ4wZ7nB3cD',
              }),
            ),
            type: z.literal(type),
            createdAt: timestamp().check(z.meta({ description: "When it happened: the webhook body's `timestamp`." })),
            data: payload.shape.data,
          })
          .check(z.meta({ id: `FeedEvent_${type.replace(/[^a-z]/g, '_')}` })),
      ),
  );

/**
 * The event feed's documentation (`POST /v1/events/list`), its event schemas built from `payloads`: every event
 * type of every domain, which only the composition root knows (lib/contract/events.ts).
 */
export const eventFeedOperationDoc = (payloads: Parameters<typeof feedEventSchema>[0]) =>
  documentOperation(listEventsOperation, {
    summary: "List the organization's events",
    description:
      'Every event of the organization (campaign state changes, `organization.credits_low`, `campaign.accounts_processed`, the privacy events), whether or not it has webhook endpoints, newest first, kept 30 days; `data` is what the webhook body of the event carries (`data.campaign.credits.remaining`: the balance now). `filters.type` (one type or an array: any of them) and `filters.campaignId` narrow it (AND). A page reads in proportion to its size. Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[type]=campaign.enriched`, repeated for several.',
    response: z
      .strictObject({ events: z.array(feedEventSchema(payloads)), nextCursor: z.nullable(z.string()) })
      .check(z.meta({ id: 'EventPage' })),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { type: ['campaign.enriched', 'campaign.expired'], campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' }, limit: 25 },
    responseExample: {
      events: [
        {
          id: 'evt_5kR8pT2vX9mQ4wZ7nB3cD',
          type: 'campaign.enriched',
          createdAt: EXAMPLE_ENRICHED.completedAt,
          data: (EVENT_EXAMPLES['campaign.enriched'] as { data: unknown }).data,
        },
      ],
      nextCursor: null,
    },
  });

export const webhookOperationDocs = [
  documentOperation(createWebhookEndpointOperation, {
    creates: '/id',
    summary: 'Create a webhook endpoint',
    description: `Registers a URL to receive campaign events, signed with Standard Webhooks 1.0 (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`: \`v1,\` + base64 HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<body>\` keyed with the secret). The answer is the only time the secret is shown. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per organization (409 \`webhook_endpoint_limit_reached\`). The URL is checked now and again before every attempt. ${RETRY_SCHEDULE_TEXT}`,
    response: CreatedWebhookEndpointSchema,
    errors: ['invalid_request', 'revoked_api_key', 'webhook_endpoint_limit_reached'],
    example: {
      url: 'https://hooks.example.com/enrichment',
      events: ['campaign.enriched', 'campaign.enrichment_failed'],
      description: 'CRM sync',
    },
    responseExample: { ...EXAMPLE_ENDPOINT, secret: EXAMPLE_SECRET },
  }),
  documentOperation(listWebhookEndpointsOperation, {
    summary: 'List webhook endpoints',
    description: "The organization's endpoints, oldest first, without their secrets.",
    response: z.strictObject({ endpoints: z.array(WebhookEndpointSchema) }).check(z.meta({ id: 'WebhookEndpointList' })),
    errors: ['invalid_request', 'revoked_api_key'],
    responseExample: { endpoints: [{ ...EXAMPLE_ENDPOINT, status: 'enabled', disabledAt: null }] },
  }),
  documentOperation(deleteWebhookEndpointOperation, {
    summary: 'Delete a webhook endpoint',
    description: 'Removes the endpoint; messages still waiting for a retry to it are given up. Its delivery log stays readable (30 days).',
    response: z.strictObject({ id: endpointId(), deleted: z.literal(true) }).check(z.meta({ id: 'DeletedWebhookEndpoint' })),
    errors: [...ENDPOINT_NOT_FOUND],
    example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
    responseExample: { id: 'whe_4fRt7YpK2mXq9WzN3bVc8', deleted: true },
  }),
  documentOperation(rotateWebhookSecretOperation, {
    summary: "Rotate a webhook endpoint's signing secret",
    description: `Issues a new secret. For ${SECRET_OVERLAP_HOURS} hours every message is signed with both the new and the previous secret (two space-separated signatures in \`webhook-signature\`), so receivers can switch without losing a message; rotating again within the overlap drops the oldest secret.`,
    response: RotatedWebhookSecretSchema,
    errors: [...ENDPOINT_NOT_FOUND],
    example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
    responseExample: {
      ...EXAMPLE_ENDPOINT,
      secret: 'whsec_q0N3vH8pT2xL6cR9mW4zK7bJ1fY5sD3gA8eU2iO6tP0=',
      previousSecretExpiresAt: '2026-11-23T09:40:00.000Z',
    },
  }),
  documentOperation(testWebhookEndpointOperation, {
    summary: 'Send a test event to an endpoint',
    description:
      'Sends a `webhook.test` event (`data.endpointId`) to this endpoint only, through the same delivery, signatures, retries and log as every event. Follow it in the delivery log by `messageId`.',
    response: z.strictObject({ messageId: messageId(), eventType: z.literal('webhook.test') }).check(z.meta({ id: 'WebhookTestSent' })),
    // The message it sends: linked to the operations that take a message ID (redeliver).
    creates: '/messageId',
    errors: [...ENDPOINT_NOT_FOUND],
    example: { endpointId: 'whe_4fRt7YpK2mXq9WzN3bVc8' },
    responseExample: { messageId: 'msg_6Tn3WbK8qZ2xR5vL9pHc4', eventType: 'webhook.test' },
  }),
  documentOperation(listWebhookDeliveriesOperation, {
    summary: 'List webhook delivery attempts',
    description:
      'The delivery log: every attempt of every message, newest first, kept 30 days: when, the HTTP status, the latency and the first 1 KB of the answer. `filters.endpointId`, `filters.eventType` and `filters.status` (`succeeded`/`failed`) narrow it (AND). Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[status]=failed`.',
    response: z
      .strictObject({ deliveries: z.array(WebhookDeliverySchema), nextCursor: z.nullable(z.string()) })
      .check(z.meta({ id: 'WebhookDeliveryPage' })),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { status: 'failed' }, limit: 25 },
    responseExample: { deliveries: [EXAMPLE_DELIVERY], nextCursor: null },
  }),
  documentOperation(redeliverWebhookOperation, {
    summary: 'Send a webhook message again now',
    description:
      'Sends one message again at once, with the same `webhook-id` (receivers deduplicate on it), a fresh timestamp and signature, whatever its state, and answers the attempt as the log records it (`trigger: redeliver`). A 2xx marks the message delivered; a failure leaves its retry schedule as it was. Name the message by `messageId`, or by `deliveryId` of any of its attempts. An endpoint disabled after answering 410 Gone receives nothing: 409 `webhook_endpoint_disabled`.',
    response: WebhookDeliverySchema,
    errors: [...ENDPOINT_NOT_FOUND, 'webhook_endpoint_disabled'],
    example: { messageId: 'msg_2Jd8KfQz5LmR7tVx3NpWb' },
    responseExample: {
      ...EXAMPLE_DELIVERY,
      id: 'whd_8Kp2Rz5Tn9Qx4Wb7Hc3Lm',
      attempt: 4,
      trigger: 'redeliver',
      attemptedAt: '2026-11-22T10:05:17.420Z',
      status: 'succeeded',
      responseStatus: 200,
      latencyMs: 87,
      responseBody: 'ok',
      nextAttemptAt: null,
    },
  }),
];
