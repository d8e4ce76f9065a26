/**
 * Schemas of the ledger operation (decisions §11 `POST /v1/org/ledger`).
 */
import * as z from 'zod/mini';
import { campaignId, timestamp } from '../schemas';
import { defineOperation } from '../http/operation';
import { LEDGER_KINDS, LEDGER_REASONS } from './ledger';

/** Largest ledger page. */
export const MAX_LEDGER_PAGE_SIZE = 1_000;
/** Ledger page size when `limit` is omitted. */
export const DEFAULT_LEDGER_PAGE_SIZE = 100;

const LedgerKindSchema = z.enum(LEDGER_KINDS).check(z.meta({ id: 'LedgerKind', description: 'What moved the balance: `charge` (launch), `refund` (of an attempt), `adjustment` (grant or operator).' }));

/** A ledger entry (decisions §11). */
export const LedgerEntrySchema = z
  .strictObject({
    id: z.string().check(z.meta({ description: 'Entry identifier; the same movement always has the same ID.', example: 'led_8mZk2QxR4vN7pT9sW3yHb' })),
    createdAt: timestamp(),
    kind: LedgerKindSchema,
    reason: z.enum([...LEDGER_REASONS.charge, ...LEDGER_REASONS.refund, ...LEDGER_REASONS.adjustment]).check(z.meta({
      description: '`charge`: `launch`. `refund`: `no_contacts_found` (accounts without results at completion), `failed`, `canceled`. `adjustment`: `initial_grant`, `operator`.',
    })),
    amount: z.int().check(z.meta({ description: 'Change to the smb balance in credits: negative for a charge, positive for a refund or a grant.', example: -250 })),
    campaignId: z.nullable(campaignId()).check(z.meta({ description: 'Campaign of a charge or refund; null for adjustments.' })),
    attemptId: z.nullable(z.string()).check(z.meta({ description: 'Enrichment attempt of a charge or refund; null for adjustments.', example: 'att_3kTMd9nPq2ZbXw7vRfGh1' })),
    note: z.nullable(z.string()).check(z.meta({ description: "Operator's note of an adjustment; null otherwise." })),
  }).check(z.meta({ id: 'LedgerEntry' }));

/** `POST /v1/org/ledger` body (decisions §11). */
export const ListLedgerRequest = z.strictObject({
  filters: z.optional(z
    .strictObject({
      campaignId: z.optional(campaignId()),
      kind: z.optional(LedgerKindSchema),
    })),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))).check(z.meta({ description: 'Opaque `nextCursor` of the previous page, unchanged.' })),
  limit: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_LEDGER_PAGE_SIZE))).check(z.meta({ description: `Page size, default ${DEFAULT_LEDGER_PAGE_SIZE}.` })),
});

/** Validated ledger request. */
export type ListLedgerInput = z.output<typeof ListLedgerRequest>;

/** `data` of the ledger operation. */
export const LedgerPageSchema = z.strictObject({ entries: z.array(LedgerEntrySchema), nextCursor: z.nullable(z.string()) }).check(z.meta({ id: 'LedgerPage' }));

/** A ledger page as the API returns it. */
export type LedgerPage = z.infer<typeof LedgerPageSchema>;

export const listLedgerOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listLedger',
  path: '/v1/org/ledger',
  summary: "List the organization's credit ledger",
  description:
    'Every movement of the smb balance, newest first (`createdAt` desc, then `id` desc): launch charges, refunds (accounts without results at completion, failed and canceled attempts), the initial grant and operator adjustments. The balance always equals the sum of the entries. `filters.campaignId` and `filters.kind` narrow the list (both: AND). Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[kind]=refund`, `limit=50`.',
  request: ListLedgerRequest,
  response: LedgerPageSchema,
  errors: ['invalid_request', 'revoked_api_key'],
  example: { filters: { kind: 'refund' }, limit: 50 },
});
