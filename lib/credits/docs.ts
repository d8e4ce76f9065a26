/**
 * The published contract of the ledger operation beyond what its handler needs
 * (docs/launch.md#the-credit-ledger): the entry and page shapes (also the TypeScript types of what
 * it returns), summary, description and example. Only the OpenAPI document
 * (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { campaignId, timestamp } from '../schemas';
import { documentOperation } from '../http/operation';
import { LEDGER_REASONS } from './ledger';
import { LedgerKindSchema, listLedgerOperation } from './schema';

/** A ledger entry (docs/launch.md#the-credit-ledger). */
export const LedgerEntrySchema = z
  .strictObject({
    id: z
      .string()
      .check(z.meta({ description: 'Entry identifier; the same movement always has the same ID.', example: 'led_8mZk2QxR4vN7pT9sW3yHb' })),
    createdAt: timestamp(),
    kind: LedgerKindSchema,
    reason: z.enum([...LEDGER_REASONS.charge, ...LEDGER_REASONS.refund, ...LEDGER_REASONS.adjustment]).check(
      z.meta({
        description:
          '`charge`: `launch`. `refund`: `no_contacts_found` (accounts without results at completion), `failed`, `canceled`. `adjustment`: `initial_grant`, `operator`.',
      }),
    ),
    amount: z.int().check(
      z.meta({
        description: 'Change to the smb balance in credits: negative for a charge, positive for a refund or a grant.',
        example: -250,
      }),
    ),
    campaignId: z.nullable(campaignId()).check(z.meta({ description: 'Campaign of a charge or refund; null for adjustments.' })),
    attemptId: z
      .nullable(z.string())
      .check(
        z.meta({ description: 'Enrichment attempt of a charge or refund; null for adjustments.', example: 'att_3kTMd9nPq2ZbXw7vRfGh1' }),
      ),
    note: z.nullable(z.string()).check(z.meta({ description: "Operator's note of an adjustment; null otherwise." })),
  })
  .check(z.meta({ id: 'LedgerEntry' }));

/** `data` of the ledger operation. */
export const LedgerPageSchema = z
  .strictObject({ entries: z.array(LedgerEntrySchema), nextCursor: z.nullable(z.string()) })
  .check(z.meta({ id: 'LedgerPage' }));

/** A ledger page as the API returns it. */
export type LedgerPage = z.infer<typeof LedgerPageSchema>;

/** The ledger operation, documented. */
export const creditOperationDocs = [
  documentOperation(listLedgerOperation, {
    summary: "List the organization's credit ledger",
    description:
      'Every movement of the smb balance, newest first (`createdAt` desc, then `id` desc): launch charges, refunds (accounts without results at completion, failed and canceled attempts), the initial grant and operator adjustments. The balance always equals the sum of the entries. `filters.campaignId` and `filters.kind` narrow the list (both: AND). Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[kind]=refund`, `limit=50`.',
    response: LedgerPageSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { kind: 'refund' }, limit: 50 },
    responseExample: {
      entries: [
        {
          id: 'led_8mZk2QxR4vN7pT9sW3yHb',
          createdAt: '2026-11-22T09:31:12.204Z',
          kind: 'refund',
          reason: 'no_contacts_found',
          amount: 50,
          campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
          attemptId: 'att_3kTMd9nPq2ZbXw7vRfGh1',
          note: null,
        },
        {
          id: 'led_5tQw9ZkR2mX7vN4pH8yJc',
          createdAt: '2026-11-21T16:04:55.871Z',
          kind: 'refund',
          reason: 'failed',
          amount: 120,
          campaignId: 'camp_9Ab3cDe4FgH5jK6mN7pQr',
          attemptId: 'att_7pLm2Xq9RtV4nZk8WbHc3',
          note: null,
        },
      ],
      nextCursor: 'eyJvIjoib3JnXzRmSjhrUTJtTjdwUjlzVDN2VzV4WSJ9.c2lnbmF0dXJl',
    },
  }),
];
