/**
 * Request schema of `POST /v1/org/audit` (docs/audit.md).
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { API_KEY_ID_PATTERN } from '../ids';
import { listFilters, listRequest, timestamp, treeShakable } from '../schemas';

/** Page size of org/audit when `limit` is omitted. */
export const DEFAULT_AUDIT_PAGE_SIZE = 100;
/** Largest page of org/audit. */
export const MAX_AUDIT_PAGE_SIZE = 1_000;
/** The `keyId` of an operator's change in the audit log (docs/audit.md). */
export const OPERATOR_KEY_ID = 'operator';

/** `POST /v1/org/audit` body: filters, cursor and page size. */
export const ListAuditRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    {
      filters: listFilters({
        keyId: z.optional(
          z.string().check(
            z.regex(new RegExp(`^(${OPERATOR_KEY_ID}|${API_KEY_ID_PATTERN.source.slice(1, -1)})$`), {
              error: `must be a key ID ("key_" followed by 21 base58 characters) or "${OPERATOR_KEY_ID}"`,
            }),
            z.meta({ description: `Only the entries of this key (\`key_…\`), or \`${OPERATOR_KEY_ID}\` for the operator's changes.` }),
          ),
        ),
        operation: z.optional(
          z.string().check(
            z.regex(/^[a-zA-Z][a-zA-Z0-9:]{0,63}$/, { error: 'must be an operationId (e.g. createCampaign) or an operator command' }),
            z.meta({
              description: 'Only the entries of this operation: its operationId (`createCampaign`) or an operator command (`org:credits`).',
            }),
          ),
        ),
        from: z.optional(timestamp().check(z.meta({ description: 'Only entries at or after this time (ISO 8601).' }))),
        to: z.optional(timestamp().check(z.meta({ description: 'Only entries at or before this time (ISO 8601).' }))),
      }),
    },
    { max: MAX_AUDIT_PAGE_SIZE, default: DEFAULT_AUDIT_PAGE_SIZE },
  ).check(
    z.refine((input) => !input.filters?.from || !input.filters.to || Date.parse(input.filters.from) <= Date.parse(input.filters.to), {
      error: 'filters.from must not be after filters.to',
      path: ['filters', 'to'],
    }),
  ),
);

/** Validated org/audit request. */
export type ListAuditInput = z.output<typeof ListAuditRequest>;

/** `POST /v1/org/audit` (docs/audit.md). */
export const listAuditOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listAuditEntries',
  scope: 'usage:read',
  path: '/v1/org/audit',
  request: ListAuditRequest,
});
