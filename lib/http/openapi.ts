/**
 * The OpenAPI 3.1 document (version 1.0.0, spec "Versioning"), generated from
 * the operations' zod schemas by zod-openapi: the schemas that validate
 * requests are the ones the document shows.
 */
import * as z from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import type { Operation } from './operation';
import { CAMPAIGN_EVENT_TYPES } from '../webhooks/events';
import { campaignEventPayloadSchema, EVENT_DESCRIPTIONS, RETRY_SCHEDULE_TEXT, TestEventPayloadSchema } from '../webhooks/schema';

const ErrorObject = z
  .strictObject({
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Error' });

const ErrorEnvelope = z.strictObject({ data: z.null(), error: ErrorObject }).meta({ id: 'ErrorEnvelope' });

const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: 'Malformed or invalid body, or an invalid cursor; `details.issues` names each field.',
  invalid_api_key: 'Missing, malformed or unrecognized API key.',
  revoked_api_key: 'The API key has been revoked.',
  insufficient_credits: 'The smb balance is below the launch charge (`details.available`, `required`, `shortfall`).',
  not_found: 'No such resource (campaign, webhook endpoint, message or delivery) in the authenticated organization (`details.resource`, `id`).',
  campaign_not_enrichable: 'The campaign is not an API-created draft (`details.status`).',
  campaign_not_editable: 'The campaign is not an API-created draft (`details.status`).',
  enrichment_pending: 'Another enrich call is evaluating this campaign right now; retry shortly.',
  no_eligible_accounts: 'No account is eligible (`details.requested`).',
  concurrency_limit_exceeded: "The launch would exceed the organization's ceiling (`details.limit`, `inFlight`, `requested`).",
  results_not_ready: 'The campaign is not enriched yet.',
  results_expired: 'The result access period has ended.',
  webhook_endpoint_limit_reached: 'The organization already has the most webhook endpoints allowed (`details.limit`, 10).',
  internal_error: 'Unexpected failure; the message is always `Internal error.`',
};

function operationObject(operation: Operation): ZodOpenApiOperationObject {
  const codes: ErrorCode[] = ['invalid_api_key', ...operation.errors, 'internal_error'];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: Record<string, ZodOpenApiResponseObject> = {
    '200': {
      description: 'Success.',
      content: { 'application/json': { schema: z.strictObject({ data: operation.response, error: z.null() }) } },
    },
  };
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: statusCodes.map((code) => `\`${code}\`: ${ERROR_DESCRIPTIONS[code]}`).join(' '),
      content: { 'application/json': { schema: ErrorEnvelope } },
    };
  }
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    security: [{ apiKey: [] }],
    requestBody: {
      required: false,
      content: {
        'application/json': { schema: operation.request, ...(operation.example ? { example: operation.example } : {}) },
        'application/x-www-form-urlencoded': { schema: operation.request },
        'multipart/form-data': { schema: operation.request },
      },
    },
    responses,
  };
}

/** Headers of every webhook request (Standard Webhooks 1.0). */
const WEBHOOK_HEADERS = {
  'webhook-id': { required: true, description: 'The message ID (`msg_…`): the same on every retry and redelivery of one message; deduplicate on it.', schema: { type: 'string' } },
  'webhook-timestamp': { required: true, description: 'Seconds since the epoch when this attempt was signed; refuse ones more than 5 minutes off.', schema: { type: 'string' } },
  'webhook-signature': {
    required: true,
    description: 'Space-separated `v1,<base64>` signatures: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64-decoded secret after `whsec_`. Two during the 24 h after a rotation (new secret, previous secret); accept the request when any one verifies.',
    schema: { type: 'string' },
  },
} as const;

/** The document's `webhooks` section: one POST per event type, with its body (decisions §12, §13). */
function webhooksSection(): ZodOpenApiPathsObject {
  const events = [...CAMPAIGN_EVENT_TYPES.map((type) => [type, campaignEventPayloadSchema(type)] as const), ['webhook.test', TestEventPayloadSchema] as const];
  return Object.fromEntries(
    events.map(([type, schema]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/[^a-z]/g, '_')}`,
          summary: type,
          description: `${EVENT_DESCRIPTIONS[type]} Sent to every enabled endpoint subscribed to \`${type}\`${type === 'webhook.test' ? ' (here: the one endpoint tested)' : ''}. ${RETRY_SCHEDULE_TEXT}`,
          parameters: Object.entries(WEBHOOK_HEADERS).map(([name, header]) => ({ in: 'header' as const, name, ...header })),
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: {
            '2XX': { description: 'Received: the message is delivered.' },
            '410': { description: 'Gone: the endpoint is disabled and receives nothing more.' },
            default: { description: 'Any other answer (or none within 15 s, or a redirect) is a failed attempt, retried on the schedule.' },
          },
        },
      },
    ]),
  );
}

/**
 * Builds the OpenAPI document of the given operations.
 * @param operations - every operation the API serves.
 * @param serverUrl - base URL shown in the document (for example `http://127.0.0.1:3000`).
 */
export function buildOpenApiDocument(operations: readonly Operation[], serverUrl = '{base_url}') {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of operations) paths[operation.path] = { post: operationObject(operation) };
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Campaign Enrichment API',
      version: '1.0.0',
      description:
        'Create campaigns from account lists, launch enrichment (credits are charged per eligible account), poll progress, read result metrics and export results as CSV. Every response is the envelope `{ data, error }`. Request bodies may be JSON, urlencoded or multipart.',
    },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Organization API key: `Authorization: Bearer cek_…`' } } },
    paths,
    webhooks: webhooksSection(),
  });
}
