/**
 * The AsyncAPI 3.1 document of the webhook events (docs/webhooks.md, README.md;
 * issue #34): what this API POSTs to a webhook endpoint, generated from the
 * same zod schemas as the OpenAPI document's `webhooks` section
 * (lib/webhooks/docs.ts): one message per event type, with its Standard
 * Webhooks headers, its payload and a real example.
 *
 * `npm run openapi:write` writes it to `docs/asyncapi.json`,
 * `npm run openapi:check` fails when that file differs from this output,
 * `npm run asyncapi:validate` validates it with @asyncapi/parser, and the
 * docs function serves it at `GET /asyncapi.json`.
 */
import * as z from 'zod';
import type { WEBHOOK_EVENT_TYPES } from '../webhooks/events';
import { RETRY_SCHEDULE_TEXT, WEBHOOK_HEADERS } from '../webhooks/docs';
import { ALL_EVENT_DESCRIPTIONS, ALL_EVENT_EXAMPLES, allEventPayloadSchemas } from './events';
import { contactOf, LOCAL_SERVER_URL } from './openapi';

type JsonSchema = Record<string, unknown>;
type EventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The JSON Schema keywords whose value maps names (data) to schemas. */
const MAPS_OF_SCHEMAS = new Set(['properties', 'patternProperties']);

/** `campaign.enriched` → `campaignEnriched` (message and schema keys). */
const keyOf = (type: EventType) => type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * A zod schema as an AsyncAPI Schema (a superset of JSON Schema draft-07):
 * every schema with an `id` moves to `components/schemas` (shared by all
 * messages: one `EnrichedCampaign`, one `CampaignAccounts`), referenced
 * as `#/components/schemas/<id>`.
 */
function toAsyncApiSchema(schema: z.core.$ZodType, components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as JsonSchema;
  // A schema node loses the keywords AsyncAPI places elsewhere (`$schema`,
  // `definitions`, zod's `id`/`$id`); a map of names to schemas
  // (`properties`, `patternProperties`) keeps every name, `id` included:
  // a payload property named `id` is data, not the schema's identifier.
  const rewriteMap = (map: unknown): unknown =>
    map && typeof map === 'object' && !Array.isArray(map)
      ? Object.fromEntries(Object.entries(map).map(([name, value]) => [name, rewrite(value)]))
      : rewrite(map);
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    const { $schema: _schema, definitions: _definitions, id: _id, $id: _$id, ...rest } = node as JsonSchema;
    return Object.fromEntries(
      Object.entries(rest).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string'
          ? value.replace('#/definitions/', '#/components/schemas/')
          : MAPS_OF_SCHEMAS.has(key)
            ? rewriteMap(value)
            : rewrite(value),
      ]),
    );
  };
  for (const [id, definition] of Object.entries((json.definitions ?? {}) as Record<string, JsonSchema>))
    components[id] = rewrite(definition) as JsonSchema;
  return rewrite(json) as JsonSchema;
}

/** The Standard Webhooks headers of every message, as one object schema. */
function headersSchema(): JsonSchema {
  return {
    type: 'object',
    required: Object.keys(WEBHOOK_HEADERS),
    properties: Object.fromEntries(
      Object.entries(WEBHOOK_HEADERS).map(([name, header]) => [
        name,
        { ...header.schema, description: header.description, examples: [header.example] },
      ]),
    ),
  };
}

/**
 * Builds the AsyncAPI document of the webhook events.
 * @param serverUrl - the deployment serving it (its `info.contact` names that deployment's support guide).
 * @returns an AsyncAPI 3.1.0 document (JSON-serializable).
 */
export function buildAsyncApiDocument(serverUrl = LOCAL_SERVER_URL) {
  const schemas: Record<string, JsonSchema> = {};
  const events = allEventPayloadSchemas();
  const messages: Record<string, JsonSchema> = {};
  for (const [type, schema] of events) {
    const payload = toAsyncApiSchema(schema, schemas);
    const example = ALL_EVENT_EXAMPLES[type] as { timestamp: string };
    messages[keyOf(type)] = {
      name: type,
      title: type,
      summary: ALL_EVENT_DESCRIPTIONS[type],
      contentType: 'application/json',
      headers: { $ref: '#/components/schemas/WebhookHeaders' },
      payload,
      examples: [
        {
          name: keyOf(type),
          summary: `A ${type} request body.`,
          headers: Object.fromEntries(
            Object.entries(WEBHOOK_HEADERS).map(([name, header]) => [
              name,
              name === 'webhook-timestamp' ? String(Date.parse(example.timestamp) / 1000) : header.example,
            ]),
          ),
          payload: example,
        },
      ],
    };
  }
  schemas.WebhookHeaders = headersSchema();
  const messageRefs = Object.fromEntries(Object.keys(messages).map((key) => [key, { $ref: `#/components/messages/${key}` }]));
  return {
    asyncapi: '3.1.0',
    id: 'urn:campaign-enrichment-api:webhooks',
    info: {
      title: 'Campaign Enrichment API webhooks',
      version: '1.0.0',
      description: [
        'The events this API POSTs to each enabled webhook endpoint of an organization (`POST /v1/webhooks/create`), signed with Standard Webhooks 1.0: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the endpoint secret (`whsec_…`). Deduplicate on `webhook-id`.',
        '',
        RETRY_SCHEDULE_TEXT,
        '',
        'The request operations are described by the OpenAPI document (`/openapi.json`), whose `webhooks` section shows the same events.',
      ].join('\n'),
      contact: contactOf(serverUrl),
      license: { name: 'Proprietary' },
    },
    defaultContentType: 'application/json',
    servers: {
      receiver: {
        host: 'hooks.example.com',
        protocol: 'https',
        description:
          'Your webhook endpoint: the `url` of the endpoint (https; the local stack also sends to http://127.0.0.1 and http://localhost).',
      },
    },
    channels: {
      webhookEndpoint: {
        address: null,
        title: 'A webhook endpoint',
        description: 'The URL registered with `POST /v1/webhooks/create`; every event the endpoint subscribes to is POSTed to it.',
        servers: [{ $ref: '#/servers/receiver' }],
        messages: messageRefs,
      },
    },
    operations: {
      sendCampaignEvent: {
        action: 'send',
        title: 'Send an event to an endpoint',
        summary:
          'POSTs one event to an endpoint subscribed to its type; a 2xx answer within 15 s delivers it, 410 disables the endpoint, anything else is retried.',
        channel: { $ref: '#/channels/webhookEndpoint' },
        messages: Object.keys(messages).map((key) => ({ $ref: `#/channels/webhookEndpoint/messages/${key}` })),
        bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
      },
    },
    components: { schemas, messages },
  };
}
