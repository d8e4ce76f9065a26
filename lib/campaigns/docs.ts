/**
 * The published contract of the campaign operations beyond what their
 * handlers need (docs/openapi.json,
 * docs/README.md#a-campaigns-life-in-one-paragraph): the response shapes (also the TypeScript
 * types of what the API returns), summaries, descriptions and examples. Only
 * the OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { CAMPAIGN_STATUSES } from '../errors';
import { campaignId, count, fraction, timestamp } from '../schemas';
import { documentOperation } from '../http/operation';
import {
  CampaignStatusSchema,
  CreatedViaSchema,
  MAX_EXCLUDE_DAYS,
  createCampaignOperation,
  enrichCampaignOperation,
  getCampaignOperation,
  listCampaignsOperation,
  updateCampaignOperation,
} from './schema';

/** Exclusion breakdown of a launch evaluation (also the quote's, lib/enrichment/docs.ts). */
export const ExcludedSchema = z
  .strictObject({
    total: count(),
    invalid: count(),
    recentlyEnriched: count(),
    crmExcluded: count(),
  })
  .check(z.meta({ id: 'ExcludedAccounts', description: 'Accounts skipped at launch, by reason; `total` is their sum.' }));

const ResultsSchema = z
  .strictObject({
    totalAccounts: count(),
    totalContactsFound: count(),
    pctAccountsWithContact: fraction(),
    pctAccountsWithMobile: fraction(),
  })
  .check(z.meta({ id: 'CampaignResults', description: 'Result metrics of the completed enrichment.' }));

/**
 * Full campaign (docs/openapi.json), every status
 * in one object: the TypeScript shape the use cases build. The published
 * shape is {@link CampaignResponseSchema}, one variant per status.
 */
export const CampaignSchema = z.strictObject({
  id: campaignId(),
  status: CampaignStatusSchema,
  createdVia: CreatedViaSchema,
  name: z.string(),
  accounts: z
    .strictObject({
      requested: count().check(z.meta({ description: 'Distinct account IDs submitted.' })),
      eligible: z
        .nullable(count())
        .check(z.meta({ description: 'Distinct submitted IDs selected for enrichment; null until launch evaluates the list.' })),
      excluded: z
        .nullable(ExcludedSchema)
        .check(z.meta({ description: 'Exclusion breakdown of the most recent launch evaluation; null until then.' })),
    })
    .check(z.meta({ id: 'CampaignAccounts', description: 'The campaign’s account counts.' })),
  credits: z
    .strictObject({
      charged: count().check(z.meta({ description: 'Credits charged to this campaign, net of refunds.' })),
      remaining: count().check(z.meta({ description: 'Organization-wide smb credit balance.' })),
    })
    .check(z.meta({ id: 'CampaignCredits', description: 'Credits of the campaign and the organization’s balance.' })),
  excludeEnrichedWithinDays: z.nullable(z.int().check(z.minimum(0), z.maximum(MAX_EXCLUDE_DAYS))),
  lastEnrichment: z.nullable(
    z
      .strictObject({
        status: z.enum(['failed', 'canceled']),
        startedAt: timestamp(),
        endedAt: z.nullable(timestamp()),
        refunded: z.boolean(),
      })
      .check(
        z.meta({ id: 'LastEnrichment', description: 'The most recent enrichment attempt that did not complete; null when there is none.' }),
      ),
  ),
  createdAt: timestamp(),
  completedAt: z.optional(timestamp()).check(z.meta({ description: 'Only while `enriched`.' })),
  resultsExpireAt: z.optional(timestamp()).check(z.meta({ description: 'On `enriched` and `expired` campaigns.' })),
  results: z.optional(ResultsSchema).check(z.meta({ description: 'Only while `enriched`.' })),
});

/** A campaign as the API returns it. */
export type Campaign = z.infer<typeof CampaignSchema>;

/** Fields every status has (the presence rules of the spec apply to the other three). */
const CampaignCommon = z.omit(CampaignSchema, { status: true, completedAt: true, resultsExpireAt: true, results: true });
const status = <S extends (typeof CAMPAIGN_STATUSES)[number]>(value: S) =>
  z.literal(value).check(z.meta({ description: 'Lifecycle state.' }));

/** A `draft` campaign (also the campaign of `campaign.enrichment_failed` and `campaign.enrichment_canceled` events). */
export const DraftCampaignSchema = z
  .extend(CampaignCommon, { status: status('draft') })
  .check(z.meta({ id: 'DraftCampaign', description: 'Not launched, or back after a failed or canceled enrichment (`lastEnrichment`).' }));
/** An `enriched` campaign (also the campaign of the `campaign.enriched` event). */
export const EnrichedCampaignSchema = z
  .extend(CampaignCommon, {
    status: status('enriched'),
    completedAt: timestamp(),
    resultsExpireAt: timestamp().check(z.meta({ description: 'End of the result access period; then the campaign reads `expired`.' })),
    results: ResultsSchema,
  })
  .check(z.meta({ id: 'EnrichedCampaign', description: 'Enrichment completed; results readable and exportable until `resultsExpireAt`.' }));
/** An `expired` campaign (also the campaign of the `campaign.expired` event). */
export const ExpiredCampaignSchema = z
  .extend(CampaignCommon, { status: status('expired'), resultsExpireAt: timestamp() })
  .check(z.meta({ id: 'ExpiredCampaign', description: 'The result access period has ended.' }));

/**
 * The campaign as the API returns it, one variant per status
 * (docs/README.md#a-campaigns-life-in-one-paragraph): `completedAt`, `resultsExpireAt` and `results` only
 * while `enriched`; `resultsExpireAt` also once `expired`. The OpenAPI
 * document and the generated client show this shape.
 */
export const CampaignResponseSchema = z
  .discriminatedUnion('status', [
    DraftCampaignSchema,
    z
      .extend(CampaignCommon, { status: status('enriching') })
      .check(z.meta({ id: 'EnrichingCampaign', description: 'Enrichment running; credits charged.' })),
    EnrichedCampaignSchema,
    ExpiredCampaignSchema,
    z
      .extend(CampaignCommon, { status: status('tam_only') })
      .check(z.meta({ id: 'TamOnlyCampaign', description: 'A total-addressable-market list of another surface; never enrichable.' })),
  ])
  .check(z.meta({ id: 'Campaign', description: 'A campaign; its fields depend on `status`.' }));

/** Campaign list item (docs/openapi.json). */
export const CampaignListItemSchema = z
  .strictObject({
    id: campaignId(),
    status: CampaignStatusSchema,
    createdVia: CreatedViaSchema,
    name: z.string(),
    excludeEnrichedWithinDays: z.nullable(z.int().check(z.minimum(0), z.maximum(MAX_EXCLUDE_DAYS))),
    createdAt: timestamp(),
  })
  .check(z.meta({ id: 'CampaignListItem' }));

/** A list item as the API returns it. */
export type CampaignListItem = z.infer<typeof CampaignListItemSchema>;

/** A draft as create answers it (docs example). */
export const EXAMPLE_DRAFT = {
  id: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
  status: 'draft',
  createdVia: 'api',
  name: 'Q4 expansion targets',
  accounts: { requested: 3, eligible: null, excluded: null },
  credits: { charged: 0, remaining: 10000 },
  excludeEnrichedWithinDays: 30,
  lastEnrichment: null,
  createdAt: '2026-11-22T09:30:00.000Z',
};

/** An enriched campaign as get answers it (docs example): 262 of 300 accounts eligible, 212 with contacts (charged net of refunds). */
export const EXAMPLE_ENRICHED = {
  ...EXAMPLE_DRAFT,
  status: 'enriched',
  accounts: { requested: 300, eligible: 262, excluded: { total: 38, invalid: 21, recentlyEnriched: 12, crmExcluded: 5 } },
  credits: { charged: 212, remaining: 9788 },
  completedAt: '2026-11-22T09:31:12.204Z',
  resultsExpireAt: '2026-12-22T09:31:12.204Z',
  results: { totalAccounts: 262, totalContactsFound: 618, pctAccountsWithContact: 0.8092, pctAccountsWithMobile: 0.3435 },
};

/** The campaign operations, documented. */
export const campaignOperationDocs = [
  documentOperation(createCampaignOperation, {
    creates: '/id',
    summary: 'Create a campaign',
    description:
      'Creates an API campaign in `draft` from a list of account IDs. JSON: `accountIds` is an array; urlencoded: repeat `accountIds`; multipart: repeat `accountIds`, or send a file part `accountIdsFile` (text or CSV, one ID a line, first column, optional header row `account_id` or `id` in any letter case), e.g. `curl -F name=Q4 -F accountIdsFile=@ids.csv`. A list too large for a request body (4 MiB multipart, 5 MiB JSON; 100,000 IDs of 128 characters are 13 MB) goes through `POST /v1/uploads/create` first: then send `accountIdsUploadId` instead. Exactly one of `accountIds`, `accountIdsFile` and `accountIdsUploadId`; an unknown, expired or never-uploaded upload, a file larger than `maxBytes` or with a bad line is `invalid_request` naming `accountIdsUploadId` (and the line).',
    response: CampaignResponseSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { name: 'Q4 expansion targets', accountIds: ['acc_00001', 'acc_00002', 'acc_00003'], excludeEnrichedWithinDays: 30 },
    responseExample: EXAMPLE_DRAFT,
    fileParts: {
      accountIdsFile: {
        replaces: 'accountIds',
        contentTypes: ['text/csv', 'text/plain'],
        description:
          'Instead of `accountIds`: a text or CSV file, one ID a line, first column, optional header row `account_id` or `id` (any letter case). `curl -F name=Q4 -F accountIdsFile=@ids.csv`.',
      },
    },
  }),
  documentOperation(updateCampaignOperation, {
    summary: 'Update a draft campaign',
    description:
      'Changes `name` and/or `excludeEnrichedWithinDays` of an API-created campaign in `draft`. At least one of the two is required.',
    response: CampaignResponseSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found', 'campaign_not_editable'],
    example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz', excludeEnrichedWithinDays: 90 },
    responseExample: { ...EXAMPLE_DRAFT, excludeEnrichedWithinDays: 90 },
  }),
  documentOperation(getCampaignOperation, {
    creditsRemaining: true,
    summary: 'Get a campaign',
    description:
      'Reads a campaign of any surface (`createdVia` tells which). Poll it to follow an enrichment; `results` appear once `enriched`.',
    response: CampaignResponseSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found'],
    example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
    responseExample: EXAMPLE_ENRICHED,
  }),
  documentOperation(listCampaignsOperation, {
    summary: 'List campaigns',
    description:
      'List items, newest first (`createdAt` desc, then `id` desc). `filters.status` and `filters.createdVia` take one value or an array; both given combine with AND. Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[status]=draft` (repeat for several), `limit=10`.',
    response: z
      .strictObject({ campaigns: z.array(CampaignListItemSchema), nextCursor: z.nullable(z.string()) })
      .check(z.meta({ id: 'CampaignPage' })),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { filters: { status: ['draft', 'enriching'], createdVia: 'api' }, limit: 25 },
    responseExample: {
      campaigns: [
        {
          id: 'camp_9Ab3cDe4FgH5jK6mN7pQr',
          status: 'enriching',
          createdVia: 'api',
          name: 'EMEA SaaS accounts',
          excludeEnrichedWithinDays: null,
          createdAt: '2026-11-22T10:02:41.518Z',
        },
        {
          id: 'camp_7Hq2kXv9LmN3pR5sT8wYz',
          status: 'draft',
          createdVia: 'api',
          name: 'Q4 expansion targets',
          excludeEnrichedWithinDays: 30,
          createdAt: '2026-11-22T09:30:00.000Z',
        },
      ],
      nextCursor: null,
    },
  }),
  documentOperation(enrichCampaignOperation, {
    tag: 'enrichment',
    creditsRemaining: true,
    summary: 'Enrich (launch) a campaign',
    description:
      "Launches enrichment of an API-created draft: invalid, recently enriched and CRM-known accounts are skipped and counted; credits are charged per eligible account; the organization ceiling on enriching accounts applies. Repeating the call while `enriching` returns the current state with no new charge. Poll get for progress. Refusals, in order: `no_eligible_accounts`, `insufficient_credits`, `spend_limit_exceeded` (the launch would pass the monthly spend limit), `key_spend_limit_exceeded` (it would pass the API key's own `maxCreditsPerLaunch` or `monthlyCredits`), `concurrency_limit_exceeded`; a refused launch charges nothing and stays `draft`.",
    response: CampaignResponseSchema,
    errors: [
      'invalid_request',
      'revoked_api_key',
      'insufficient_credits',
      'spend_limit_exceeded',
      'key_spend_limit_exceeded',
      'not_found',
      'campaign_not_enrichable',
      'enrichment_pending',
      'no_eligible_accounts',
      'concurrency_limit_exceeded',
    ],
    example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
    responseExample: {
      ...EXAMPLE_DRAFT,
      status: 'enriching',
      accounts: EXAMPLE_ENRICHED.accounts,
      credits: { charged: 262, remaining: 9738 },
    },
  }),
];
