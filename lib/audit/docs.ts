/**
 * The published contract of `POST /v1/org/audit` beyond what its handler needs (docs/audit.md):
 * the entry and page shapes, summary, description and example. Only the OpenAPI document
 * (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { campaignId, timestamp } from '../schemas';
import { documentOperation } from '../http/operation';
import { AUDIT_RETENTION_DAYS, type AuditEntry } from './log';
import { listAuditOperation, OPERATOR_KEY_ID } from './schema';

/** An audit-log entry (docs/audit.md). */
export const AuditEntrySchema = z
  .strictObject({
    id: z
      .string()
      .check(z.meta({ description: 'Entry identifier (one per request or operator change).', example: 'aud_5nQw8RtY2kLp4ZxV7cMb3' })),
    at: timestamp().check(z.meta({ description: 'When the request arrived, or the operator made the change.' })),
    keyId: z.nullable(z.string()).check(
      z.meta({
        description: `The acting API key's ID; \`${OPERATOR_KEY_ID}\` for an operator's change; null for a key from before key IDs.`,
        example: 'key_3kTMd9nPq2ZbXw7vRfGh1',
      }),
    ),
    operation: z
      .string()
      .check(
        z.meta({ description: 'The operationId (`createCampaign`), or the operator command (`org:credits`).', example: 'createCampaign' }),
      ),
    requestId: z.string().check(
      z.meta({
        description: 'The `X-Request-Id` of the answer; `ops_…` for an operator change.',
        example: 'c7f3a1d2-5b6e-4f80-9a1b-2c3d4e5f6a7b',
      }),
    ),
    idempotencyKey: z
      .nullable(z.string())
      .check(z.meta({ description: 'The request’s `Idempotency-Key`, if it sent one.', example: null })),
    status: z.int().check(z.meta({ description: 'HTTP status of the answer (200 for an operator’s change).', example: 200 })),
    code: z.nullable(z.string()).check(z.meta({ description: 'The error code of a refusal; null on success.', example: null })),
    campaignId: z.nullable(campaignId()).check(z.meta({ description: 'The campaign the request named or created, if any.' })),
    sourceIp: z
      .nullable(z.string())
      .check(z.meta({ description: 'The caller’s IP address; null for an operator’s change.', example: '203.0.113.7' })),
  })
  .check(z.meta({ id: 'AuditEntry' }));

/** `data` of org/audit. */
export const AuditPageSchema = z
  .strictObject({ entries: z.array(AuditEntrySchema), nextCursor: z.nullable(z.string()) })
  .check(z.meta({ id: 'AuditPage' }));

const example: AuditEntry = {
  id: 'aud_5nQw8RtY2kLp4ZxV7cMb3',
  at: '2026-11-23T10:00:00.000Z',
  keyId: 'key_3kTMd9nPq2ZbXw7vRfGh1',
  operation: 'enrichCampaign',
  requestId: 'c7f3a1d2-5b6e-4f80-9a1b-2c3d4e5f6a7b',
  idempotencyKey: 'launch-2026-11-23',
  status: 402,
  code: 'insufficient_credits',
  campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
  sourceIp: '203.0.113.7',
};

/** The audit operation, documented. */
export const auditOperationDocs = [
  documentOperation(listAuditOperation, {
    tag: 'organization',
    summary: "List the organization's audit log",
    description: `Who did what, newest first: every call of an operation that changes something (campaigns, uploads, exports, webhooks, keys, privacy), whatever its answer but 401 and 429, and every change an operator made (\`keyId: "${OPERATOR_KEY_ID}"\`). Kept ${AUDIT_RETENTION_DAYS} days. No secret, request body or contact data. \`filters.keyId\`, \`filters.operation\`, \`filters.from\` and \`filters.to\` narrow it (AND). Pass \`nextCursor\` unchanged as \`cursor\` with the same filters and limit; stop when it is null.`,
    response: AuditPageSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { operation: 'enrichCampaign' }, limit: 100 },
    responseExample: { entries: [example], nextCursor: null },
  }),
];
