/**
 * Schemas of the webhook operations' requests (docs/webhooks.md): what the
 * handlers validate. The response shapes, the event payloads and the docs
 * are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { campaignId, listFilters, listRequest, treeShakable } from '../schemas';
import { WEBHOOK_DELIVERY_ID_PATTERN, WEBHOOK_ENDPOINT_ID_PATTERN, WEBHOOK_MESSAGE_ID_PATTERN } from '../ids';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from './events';

/** Most endpoints an organization may have (docs/webhooks.md). */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** Longest endpoint URL (characters). */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;
/** Longest endpoint description (characters). */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
/** Largest delivery-log page. */
export const MAX_DELIVERY_PAGE_SIZE = 100;
/** Delivery-log page size when `limit` is omitted. */
export const DEFAULT_DELIVERY_PAGE_SIZE = 25;
/** Largest event-feed page (docs/events.md). */
export const MAX_EVENT_PAGE_SIZE = 100;
/** Event-feed page size when `limit` is omitted. */
export const DEFAULT_EVENT_PAGE_SIZE = 25;
/** Hours both secrets sign after a rotation. */
export const SECRET_OVERLAP_HOURS = 24;

/** A webhook endpoint ID: `whe_` + 21 base58 characters (requests and answers). */
export const endpointId = () =>
  z
    .string()
    .check(
      z.regex(WEBHOOK_ENDPOINT_ID_PATTERN, { error: 'must be a webhook endpoint ID: "whe_" followed by 21 base58 characters' }),
      z.meta({ example: 'whe_4fRt7YpK2mXq9WzN3bVc8' }),
    );
/** A webhook message ID (`webhook-id`): `msg_` + 21 base58 characters. */
export const messageId = () =>
  z
    .string()
    .check(
      z.regex(WEBHOOK_MESSAGE_ID_PATTERN, { error: 'must be a webhook message ID: "msg_" followed by 21 base58 characters' }),
      z.meta({ example: 'msg_2Jd8KfQz5LmR7tVx3NpWb' }),
    );
/** A delivery-attempt ID: `whd_` + 21 base58 characters. */
export const deliveryId = () =>
  z
    .string()
    .check(
      z.regex(WEBHOOK_DELIVERY_ID_PATTERN, { error: 'must be a webhook delivery ID: "whd_" followed by 21 base58 characters' }),
      z.meta({ example: 'whd_3pQ9zT7kHn4Vx8Rb2Wc6L' }),
    );

/** An event type an endpoint can subscribe to: a campaign event or `organization.credits_low`. */
export const WebhookEventTypeSchema = /* @__PURE__ */ treeShakable(() =>
  z.enum(SUBSCRIBABLE_EVENT_TYPES).check(
    z.meta({
      id: 'WebhookEventType',
      description:
        '`campaign.enriched`, `campaign.enrichment_failed`, `campaign.enrichment_canceled`, `campaign.expired`, `organization.credits_low`, `campaign.accounts_processed`, `privacy.erasure_completed`, `privacy.contact_erased`.',
    }),
  ),
);
/** Any event type a delivery can carry: a campaign event or `webhook.test` (the deliveries filter, the delivery log). */
export const AnyEventTypeSchema = /* @__PURE__ */ treeShakable(() =>
  z
    .enum(WEBHOOK_EVENT_TYPES)
    .check(z.meta({ description: 'A campaign event type, `organization.credits_low`, a privacy event type, or `webhook.test`.' })),
);

/** `POST /v1/webhooks/create` body. */
export const CreateWebhookEndpointRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    url: z.string().check(
      z.minLength(1),
      z.maxLength(MAX_WEBHOOK_URL_LENGTH),
      z.meta({
        format: 'uri',
        pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+',
        description:
          '`https` URL whose host resolves only to public addresses (never loopback, private, link-local, unique-local or metadata). The local stack also takes `http://127.0.0.1` and `http://localhost` when `WEBHOOKS_ALLOW_LOCALHOST` is on.',
        example: 'https://hooks.example.com/enrichment',
      }),
    ),
    events: z
      .optional(z.array(WebhookEventTypeSchema).check(z.minLength(1), z.maxLength(SUBSCRIBABLE_EVENT_TYPES.length)))
      .check(z.meta({ description: 'Event types to send; default all of them. urlencoded/multipart: repeat `events`.' })),
    description: z
      .optional(z.nullable(z.string().check(z.maxLength(MAX_WEBHOOK_DESCRIPTION_LENGTH))))
      .check(z.meta({ description: 'Free text for your own reference.' })),
  }),
);
/** Validated create request. */
export type CreateWebhookEndpointInput = z.output<typeof CreateWebhookEndpointRequest>;

/** `{endpointId}` bodies. */
export const WebhookEndpointIdRequest = /* @__PURE__ */ treeShakable(() => z.strictObject({ endpointId: endpointId() }));

/** `POST /v1/webhooks/deliveries` body. */
export const ListWebhookDeliveriesRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    {
      filters: listFilters({
        endpointId: z.optional(endpointId()),
        eventType: z.optional(AnyEventTypeSchema),
        status: z.optional(z.enum(['succeeded', 'failed'])),
      }),
    },
    { max: MAX_DELIVERY_PAGE_SIZE, default: DEFAULT_DELIVERY_PAGE_SIZE },
  ),
);
/** Validated deliveries request. */
export type ListWebhookDeliveriesInput = z.output<typeof ListWebhookDeliveriesRequest>;

/** `POST /v1/events/list` body (docs/events.md). */
export const ListEventsRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    {
      filters: listFilters({
        type: z
          .optional(
            z.union([
              WebhookEventTypeSchema,
              z.array(WebhookEventTypeSchema).check(z.minLength(1), z.maxLength(SUBSCRIBABLE_EVENT_TYPES.length)),
            ]),
          )
          .check(
            z.meta({
              description: 'One event type, or an array of them (any of them). urlencoded/multipart: repeat `filters[type]`.',
            }),
          ),
        campaignId: z.optional(campaignId()).check(z.meta({ description: 'Only the events about this campaign.' })),
      }),
    },
    { max: MAX_EVENT_PAGE_SIZE, default: DEFAULT_EVENT_PAGE_SIZE },
  ),
);
/** Validated event-feed request. */
export type ListEventsInput = z.output<typeof ListEventsRequest>;

/** `POST /v1/webhooks/redeliver` body: exactly one of `messageId`, `deliveryId`. */
export const RedeliverRequest = /* @__PURE__ */ treeShakable(() =>
  z
    .strictObject({
      messageId: z.optional(messageId()),
      deliveryId: z.optional(deliveryId()).check(z.meta({ description: 'Any attempt of the message; the message is sent again.' })),
    })
    .check(
      (ctx) => {
        const given = ['messageId', 'deliveryId'].filter((key) => ctx.value[key as 'messageId'] !== undefined);
        if (given.length !== 1) {
          ctx.issues.push({
            code: 'custom',
            input: ctx.value,
            path: [given.length === 0 ? 'messageId' : 'deliveryId'],
            message: 'send exactly one of messageId and deliveryId',
          });
        }
      },
      // The rule, machine-readable (issue #34): the document shows one body per field.
      z.meta({ oneOf: [{ required: ['messageId'] }, { required: ['deliveryId'] }] }),
    ),
);
/** Validated redeliver request. */
export type RedeliverInput = z.output<typeof RedeliverRequest>;

export const createWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createWebhookEndpoint',
  audited: true,
  scope: 'webhooks:manage',
  // Retry-safe with an Idempotency-Key (docs/idempotency.md).
  idempotent: true,
  path: '/v1/webhooks/create',
  request: CreateWebhookEndpointRequest,
});

export const listWebhookEndpointsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listWebhookEndpoints',
  scope: 'webhooks:manage',
  path: '/v1/webhooks/list',
  request: /* @__PURE__ */ treeShakable(() => z.strictObject({})),
});

export const deleteWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'deleteWebhookEndpoint',
  audited: true,
  scope: 'webhooks:manage',
  // Retry-safe with an Idempotency-Key (docs/idempotency.md).
  idempotent: true,
  path: '/v1/webhooks/delete',
  request: WebhookEndpointIdRequest,
});

export const rotateWebhookSecretOperation = /* @__PURE__ */ defineOperation({
  operationId: 'rotateWebhookSecret',
  audited: true,
  scope: 'webhooks:manage',
  // Retry-safe with an Idempotency-Key (docs/idempotency.md).
  idempotent: true,
  path: '/v1/webhooks/rotate-secret',
  request: WebhookEndpointIdRequest,
});

export const testWebhookEndpointOperation = /* @__PURE__ */ defineOperation({
  operationId: 'testWebhookEndpoint',
  audited: true,
  scope: 'webhooks:manage',
  // Retry-safe with an Idempotency-Key (docs/idempotency.md).
  idempotent: true,
  path: '/v1/webhooks/test',
  request: WebhookEndpointIdRequest,
});

export const listWebhookDeliveriesOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listWebhookDeliveries',
  scope: 'webhooks:manage',
  path: '/v1/webhooks/deliveries',
  request: ListWebhookDeliveriesRequest,
});

export const redeliverWebhookOperation = /* @__PURE__ */ defineOperation({
  operationId: 'redeliverWebhook',
  audited: true,
  scope: 'webhooks:manage',
  // Retry-safe with an Idempotency-Key (docs/idempotency.md).
  idempotent: true,
  path: '/v1/webhooks/redeliver',
  request: RedeliverRequest,
});

export const listEventsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listEvents',
  scope: 'events:read',
  path: '/v1/events/list',
  request: ListEventsRequest,
});
