/**
 * The OpenAPI 3.1 document (version 1.0.0, spec "Versioning"), generated from
 * the operations' zod schemas by zod-openapi: the schemas that validate
 * requests are the ones the document shows.
 */
import * as z from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import type { Operation } from './operation';

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
  not_found: 'No such campaign in the authenticated organization (`details.resource`, `id`).',
  campaign_not_enrichable: 'The campaign is not an API-created draft (`details.status`).',
  campaign_not_editable: 'The campaign is not an API-created draft (`details.status`).',
  enrichment_pending: 'Another enrich call is evaluating this campaign right now; retry shortly.',
  no_eligible_accounts: 'No account is eligible (`details.requested`).',
  concurrency_limit_exceeded: "The launch would exceed the organization's ceiling (`details.limit`, `inFlight`, `requested`).",
  results_not_ready: 'The campaign is not enriched yet.',
  results_expired: 'The result access period has ended.',
  idempotency_key_reused: 'The Idempotency-Key was first used with a different request.',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still running; `Retry-After: 1`.',
  method_not_allowed: 'The path is an operation, which takes POST only (`details.allow`, header `Allow`).',
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
  });
}
