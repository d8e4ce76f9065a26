/**
 * The published contract of the launch quote and the per-account outcomes
 * beyond what their handlers need (docs/launch.md): the response shapes (also
 * the TypeScript types of what they return), summaries, descriptions and
 * examples. Only the OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { campaignId, count } from '../schemas';
import { documentOperation } from '../http/operation';
import { CampaignResponseSchema, ExcludedSchema } from '../campaigns/docs';
import { LAUNCH_OUTCOMES } from './decision';
import { ACCOUNT_OUTCOMES } from './account-outcome';
import { AccountOutcomeSchema, cancelCampaignOperation, campaignAccountsOperation, quoteCampaignOperation } from './schema';

const EXAMPLE_CAMPAIGN_ID = 'camp_7Hq2kXv9LmN3pR5sT8wYz';

/** `data` of quote (docs/launch.md#quote). */
export const LaunchQuoteSchema = z
  .strictObject({
    campaignId: campaignId(),
    accounts: z.strictObject({
      requested: count().check(z.meta({ description: 'Distinct account IDs submitted.' })),
      eligible: count().check(z.meta({ description: 'Accounts a launch now would enrich (and charge for).' })),
      excluded: ExcludedSchema,
    }),
    credits: z.strictObject({
      required: count().check(z.meta({ description: 'Credits the launch would charge: eligible × credits per account.' })),
      available: count().check(z.meta({ description: 'The organization’s smb balance now.' })),
      shortfall: count().check(z.meta({ description: 'max(0, required − available).' })),
    }),
    enrichment: z.strictObject({
      maxEnrichingAccounts: count().check(z.meta({ description: 'The organization’s ceiling on accounts enriching at once.' })),
      enrichingAccounts: count().check(z.meta({ description: 'Accounts enriching now, every surface included.' })),
      available: count().check(z.meta({ description: 'max(0, maxEnrichingAccounts − enrichingAccounts).' })),
    }),
    outcome: z.enum(LAUNCH_OUTCOMES).check(
      z.meta({
        description:
          "`launchable`, or the refusal enrich would answer now, in its order: `no_eligible_accounts` (422), `insufficient_credits` (402), `spend_limit_exceeded` (402: the monthly spend limit), `key_spend_limit_exceeded` (402: the API key's own credit limits), `concurrency_limit_exceeded` (429).",
      }),
    ),
  })
  .check(
    z.meta({
      id: 'LaunchQuote',
      example: {
        campaignId: EXAMPLE_CAMPAIGN_ID,
        accounts: { requested: 300, eligible: 212, excluded: { total: 88, invalid: 47, recentlyEnriched: 30, crmExcluded: 11 } },
        credits: { required: 212, available: 150, shortfall: 62 },
        enrichment: { maxEnrichingAccounts: 5000, enrichingAccounts: 1200, available: 3800 },
        outcome: 'insufficient_credits',
      },
    }),
  );

/** A launch quote. */
export type LaunchQuote = z.infer<typeof LaunchQuoteSchema>;

/** Counts of every outcome over the whole list. */
const OutcomeSummarySchema = z
  .strictObject(
    Object.fromEntries(ACCOUNT_OUTCOMES.map((outcome) => [outcome, count()])) as Record<
      (typeof ACCOUNT_OUTCOMES)[number],
      ReturnType<typeof count>
    >,
  )
  .check(
    z.meta({
      id: 'AccountOutcomeSummary',
      description:
        'Accounts of the whole list per outcome; while `enriching`, `pending` falls and `found` + `not_found` rise at least once per batch of 1,000 accounts.',
    }),
  );

/** `data` of accounts (docs/launch.md). */
export const CampaignAccountsPageSchema = z
  .strictObject({
    accounts: z.array(
      z.strictObject({
        accountId: z.string(),
        outcome: AccountOutcomeSchema,
        contactsFound: z
          .nullable(count())
          .check(z.meta({ description: 'Contacts found; an integer only for `found` and `not_found` (0), null otherwise.' })),
      }),
    ),
    nextCursor: z.nullable(z.string()),
    summary: OutcomeSummarySchema,
  })
  .check(
    z.meta({
      id: 'CampaignAccountsPage',
      example: {
        accounts: [
          { accountId: 'acc_00001', outcome: 'found', contactsFound: 4 },
          { accountId: 'acc_00002', outcome: 'invalid', contactsFound: null },
          { accountId: 'acc_00003', outcome: 'not_found', contactsFound: 0 },
          { accountId: 'acc_00004', outcome: 'pending', contactsFound: null },
        ],
        nextCursor: 'eyJvIjoib3JnXzRmSjhrUTJtTjdwUjlzVDN2VzV4WSJ9.c2lnbmF0dXJl',
        summary: { invalid: 47, recently_enriched: 30, crm_excluded: 11, pending: 112, found: 80, not_found: 20 },
      },
    }),
  );

/** A page of account outcomes. */
export type CampaignAccountsPage = z.infer<typeof CampaignAccountsPageSchema>;

/** The quote, accounts and cancel operations, documented. */
export const enrichmentOperationDocs = [
  documentOperation(quoteCampaignOperation, {
    creditsRemaining: true,
    summary: 'Quote a launch (no charge, no write)',
    description:
      'The launch evaluation of enrich for an API-created `draft`, charging, reserving and writing nothing: the account buckets, the credits the launch would charge, the capacity it would take, and `outcome`: `launchable` or the refusal enrich would answer at this moment (`no_eligible_accounts`, then `insufficient_credits`, then `concurrency_limit_exceeded`). Concurrent launches or top-ups can change the figures before a later enrich. Errors as enrich: `not_found`, `campaign_not_enrichable`.',
    response: LaunchQuoteSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'campaign_not_enrichable'],
    example: { campaignId: EXAMPLE_CAMPAIGN_ID },
  }),
  documentOperation(campaignAccountsOperation, {
    summary: 'Why each account was or was not enriched',
    description:
      'Each requested account of the most recent launch evaluation (refused ones too), in the order first submitted, with its `outcome` and `contactsFound`, plus a `summary` of every outcome over the whole list: while `enriching` it is the progress, updated at least once per batch of 1,000 accounts. `filters.outcome` takes one outcome or an array (urlencoded/multipart: `filters[outcome]=found`, repeated for several). Pass `nextCursor` unchanged as `cursor` with the same campaignId, filters and limit; stop when it is null. After a failed or canceled attempt the campaign is back in `draft` and its eligible accounts read `pending` again. Never evaluated: 409 `results_not_ready`; expired: 410 `results_expired`.',
    response: CampaignAccountsPageSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'results_not_ready', 'results_expired'],
    example: { campaignId: EXAMPLE_CAMPAIGN_ID, filters: { outcome: ['invalid', 'not_found'] }, limit: 100 },
  }),
  documentOperation(cancelCampaignOperation, {
    summary: 'Cancel a running enrichment',
    description:
      'Stops the running enrichment of an API-created campaign: the attempt ends `canceled`, its whole charge is refunded on the ledger (entry `refund`/`canceled`), its capacity is released, the campaign returns to `draft` with `lastEnrichment: {status: "canceled", startedAt, endedAt, refunded: true}`, and `campaign.enrichment_canceled` is emitted. The answer is the campaign after the cancel. Retries are safe: on a `draft` whose `lastEnrichment` is a canceled attempt, cancel answers the campaign again and changes nothing (`Idempotency-Key` is honoured too). A campaign that is not `enriching` otherwise (it finished or failed first, never launched, another surface created it): 409 `campaign_not_cancelable` with `details.status`. A cancel racing the attempt\'s completion: exactly one of the two wins, and the money follows the winner.',
    response: CampaignResponseSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'campaign_not_cancelable'],
    example: { campaignId: EXAMPLE_CAMPAIGN_ID },
    responseExample: {
      id: EXAMPLE_CAMPAIGN_ID,
      status: 'draft',
      createdVia: 'api',
      name: 'Q4 expansion targets',
      accounts: { requested: 300, eligible: 212, excluded: { total: 88, invalid: 47, recentlyEnriched: 30, crmExcluded: 11 } },
      credits: { charged: 0, remaining: 9950 },
      excludeEnrichedWithinDays: 30,
      lastEnrichment: { status: 'canceled', startedAt: '2026-11-22T09:31:02.114Z', endedAt: '2026-11-22T09:33:40.870Z', refunded: true },
      createdAt: '2026-11-22T09:30:00.000Z',
    },
  }),
];
