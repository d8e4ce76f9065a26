/**
 * The published contract of the export operation beyond what its handler
 * needs (docs/csv.md): the response shape (also the TypeScript type
 * of what export returns), summary, description and examples. Only the
 * OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { documentOperation } from '../http/operation';
import { campaignId, count, timestamp } from '../schemas';
import { campaignResultsOperation, exportCampaignOperation } from './schema';
import { PHONE_COLUMNS } from '../results/csv';
import { RESULT_ACCOUNT_FIELDS, RESULT_CONTACT_FIELDS } from '../results/json';
import type { ResultField } from '../warehouse/fields';

/** `data` of export (docs/csv.md). */
export const ExportResultSchema = z
  .strictObject({
    campaignId: campaignId(),
    url: z.url().check(z.meta({ description: 'Presigned GET URL of the CSV file.' })),
    urlExpiresAt: timestamp().check(
      z.meta({
        description: 'When the URL stops working: 15 minutes after signing by default, never later than the campaign’s `resultsExpireAt`.',
      }),
    ),
    rows: z.strictObject({
      accounts: count().check(z.meta({ description: 'Distinct accounts in the file (always results.totalAccounts).' })),
      contacts: count().check(z.meta({ description: 'Rows that carry a contact.' })),
    }),
    file: z.strictObject({ format: z.literal('csv'), encoding: z.literal('utf-8-bom') }),
  })
  .check(z.meta({ id: 'ExportResult' }));

/** An export result. */
export type ExportResult = z.infer<typeof ExportResultSchema>;

/** The schema of a field's value in the results (lib/warehouse/fields.ts), with its meaning. */
const resultValue = (field: ResultField): z.ZodMiniType =>
  (field.type === 'id' ? z.string() : field.type === 'count' ? z.nullable(count()) : z.nullable(z.string())).check(
    z.meta({ description: field.meaning }),
  );
/** The strict object of a list of fields, each under its JSON key. */
const resultObject = (fields: readonly ResultField[]) =>
  z.strictObject(Object.fromEntries(fields.map((field) => [field.json, resultValue(field)])));
/** The example of a list of fields, each under its JSON key. */
const exampleOf = (fields: readonly ResultField[]) => Object.fromEntries(fields.map((field) => [field.json, field.example]));

/** A contact as the results show it: stored values, null where absent, no spreadsheet prefix. */
export const ResultContactSchema = resultObject(RESULT_CONTACT_FIELDS).check(z.meta({ id: 'ResultContact' }));

/** One account of the results, in seq order. */
export const ResultAccountSchema = z
  .strictObject({
    seq: z
      .int()
      .check(
        z.minimum(1),
        z.maximum(Number.MAX_SAFE_INTEGER),
        z.meta({ description: 'Its position in the attempt: 1, 2, 3, … gap-free, never reused.' }),
      ),
    accountId: z.string(),
    outcome: z.enum(['found', 'not_found']).check(
      z.meta({
        description: '`found`: the workflow found at least one contact (before the filters); `not_found`: none (its credit was refunded).',
      }),
    ),
    account: resultObject(RESULT_ACCOUNT_FIELDS),
    contacts: z
      .array(ResultContactSchema)
      .check(
        z.meta({ description: 'Best first (seniority, then contactId); the filters, then the cap, as in export. `[]` when none is kept.' }),
      ),
  })
  .check(z.meta({ id: 'ResultAccount' }));

const EXAMPLE_RESULT_ACCOUNT = {
  seq: 1,
  accountId: 'acc_00001',
  outcome: 'found',
  account: exampleOf(RESULT_ACCOUNT_FIELDS),
  contacts: [exampleOf(RESULT_CONTACT_FIELDS)],
};

/** `data` of results (docs/results.md). */
export const ResultsPageSchema = z
  .strictObject({
    campaignId: campaignId(),
    attemptId: z.string().check(z.meta({ description: 'The attempt these seqs belong to; another attempt starts again at 1.' })),
    status: z.enum(['enriching', 'enriched']),
    eligible: count().check(z.meta({ description: 'Eligible accounts of the attempt.' })),
    processed: count().check(z.meta({ description: 'Accounts of the attempt that have a seq now.' })),
    complete: z.boolean().check(z.meta({ description: 'The attempt is `enriched` and `processed = eligible`: nothing more will come.' })),
    lastSeq: count().check(
      z.meta({ description: 'The seq of the last account returned, or `afterSeq` when none: the next page asks `afterSeq = lastSeq`.' }),
    ),
    accounts: z.array(ResultAccountSchema),
  })
  .check(
    z.meta({
      id: 'ResultsPage',
      example: {
        campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
        attemptId: 'att_9xK2mN4pQ6rS8tU1vW3yZ',
        status: 'enriching',
        eligible: 212,
        processed: 1,
        complete: false,
        lastSeq: 1,
        accounts: [EXAMPLE_RESULT_ACCOUNT],
      },
    }),
  );

/** A page of results. */
export type ResultsPageData = z.infer<typeof ResultsPageSchema>;

/** The export and results operations, documented. */
export const exportOperationDocs = [
  documentOperation(campaignResultsOperation, {
    summary: 'Read results as they arrive',
    description:
      "The contacts of the campaign's current attempt as JSON, while it enriches and after: each eligible account gets a `seq` (1, 2, 3, … gap-free, never reused) once the workflow has processed its batch, and a page answers the accounts with `seq > afterSeq`, in seq order, at most `limit`. Ask the next page with `afterSeq = lastSeq` (and `attemptId`); stop when `complete`. The filters and the cap act as in export, on contacts only (an account whose contacts are all filtered out appears with `contacts: []`); values are as stored, with no spreadsheet prefix. Long poll: with `waitSeconds`, while the campaign is `enriching` and nothing after `afterSeq` is readable, the call waits (one small read a second) and answers as soon as an account is, or with `accounts: []`. A draft (never launched, or its last attempt failed or was canceled: its results went with it), or an `afterSeq`/`attemptId` of an attempt that is not the current one: 409 `results_not_ready` (`details.attemptId` names the current attempt: read it from `afterSeq` 0); expired: 410 `results_expired`.",
    response: ResultsPageSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'results_not_ready', 'results_expired'],
    example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz', afterSeq: 0, limit: 100, waitSeconds: 20, hasEmail: true },
  }),
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
