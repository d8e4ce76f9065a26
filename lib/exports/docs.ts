/**
 * The published contract of the export operation beyond what its handler
 * needs (spec "Export result"): the response shape (also the TypeScript type
 * of what export returns), summary, description and examples. Only the
 * OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { documentOperation } from '../http/operation';
import { campaignId, count, timestamp } from '../schemas';
import { exportCampaignOperation } from './schema';
import { PHONE_COLUMNS } from '../results/csv';

/** `data` of export (spec "Export result"). */
export const ExportResultSchema = z
  .strictObject({
    campaignId: campaignId(),
    url: z.url().check(z.meta({ description: 'Presigned GET URL of the CSV file.' })),
    urlExpiresAt: timestamp().check(z.meta({ description: 'When the URL stops working: 15 minutes after signing by default, never later than the campaign’s `resultsExpireAt`.' })),
    rows: z.strictObject({
      accounts: count().check(z.meta({ description: 'Distinct accounts in the file (always results.totalAccounts).' })),
      contacts: count().check(z.meta({ description: 'Rows that carry a contact.' })),
    }),
    file: z.strictObject({ format: z.literal('csv'), encoding: z.literal('utf-8-bom') }),
  }).check(z.meta({ id: 'ExportResult' }));

/** An export result. */
export type ExportResult = z.infer<typeof ExportResultSchema>;

/** The export operation, documented. */
export const exportOperationDocs = [
  documentOperation(exportCampaignOperation, {
    summary: 'Export campaign results as CSV',
    description:
      'Writes a fresh CSV file of an `enriched` campaign (UTF-8 with BOM, RFC 4180, CRLF, the standard column catalog) and returns a fresh presigned URL (15 minutes by default, cut at `resultsExpireAt`). Contacts within an account are ordered best first (seniority, then contact_id); filters apply first, then `maxContactsPerAccount`. An account with no kept contact has one account-only row. Cells starting with =, +, -, @, tab or CR are prefixed with an apostrophe, with one exception: a plain E.164 number (`+15551234567`) in ' +
      PHONE_COLUMNS.map((column) => '`' + column + '`').join(' or ') +
      ' is written as it is (docs/csv.md).',
    response: ExportResultSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'results_not_ready', 'results_expired', 'no_eligible_accounts'],
    example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz', maxContactsPerAccount: 3, hasEmail: true },
    responseExample: {
      campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
      url: 'https://campaign-enrichment-data.s3.eu-west-1.amazonaws.com/exports/org_4fJ8kQ2mN7pR9sT3vW5xY/camp_7Hq2kXv9LmN3pR5sT8wYz/exp_2bC4dE6fG8hJ0kL2mN4pQ.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-Signature=3f1c9a7e52b04d8e6a1f0c2b9d7e4a6c8b1f3e5d7a9c0b2e4f6a8c1d3e5f7a9b',
      urlExpiresAt: '2026-11-22T10:15:00.000Z',
      rows: { accounts: 262, contacts: 584 },
      file: { format: 'csv', encoding: 'utf-8-bom' },
    },
  }),
];
