/**
 * Schemas of the campaign resources and operations (spec "Resources and
 * their fields", "Endpoints"; decisions §1, §3). The same schemas validate
 * requests and generate the OpenAPI document.
 */
import * as z from 'zod';
import { CAMPAIGN_STATUSES } from '../errors';
import { campaignId, count, fraction, timestamp } from '../schemas';
import { defineOperation } from '../http/operation';
import { accountIdsFromForm } from './account-list';

/** Surfaces that create campaigns. */
export const CREATED_VIA = ['api', 'ui', 'data_cube'] as const;
/** A surface that creates campaigns. */
export type CreatedVia = (typeof CREATED_VIA)[number];

export const CampaignStatusSchema = z.enum(CAMPAIGN_STATUSES).meta({ id: 'CampaignStatus', description: 'Lifecycle state.' });
export const CreatedViaSchema = z.enum(CREATED_VIA).meta({ id: 'CreatedVia', description: 'Surface that created the campaign.' });

/** Largest `excludeEnrichedWithinDays` accepted (decisions §1), in days. */
export const MAX_EXCLUDE_DAYS = 3650;
/** Largest number of account IDs in a campaign (decisions §1). */
export const MAX_ACCOUNT_IDS = 100_000;

const excludeEnrichedWithinDays = () =>
  z.int().min(0).max(MAX_EXCLUDE_DAYS).nullable().meta({ description: 'Accounts enriched within this many days are skipped at launch; null disables.', example: 30 });

const ExcludedSchema = z.strictObject({
  total: count(),
  invalid: count(),
  recentlyEnriched: count(),
  crmExcluded: count(),
});

/** Full campaign (spec "Campaign (returned by get and enrich)"). */
export const CampaignSchema = z
  .strictObject({
    id: campaignId(),
    status: CampaignStatusSchema,
    createdVia: CreatedViaSchema,
    name: z.string(),
    accounts: z.strictObject({
      requested: count().meta({ description: 'Distinct account IDs submitted.' }),
      eligible: count().nullable().meta({ description: 'Distinct submitted IDs selected for enrichment; null until launch evaluates the list.' }),
      excluded: ExcludedSchema.nullable().meta({ description: 'Exclusion breakdown of the most recent launch evaluation; null until then.' }),
    }),
    credits: z.strictObject({
      charged: count().meta({ description: 'Credits charged to this campaign, net of refunds.' }),
      remaining: count().meta({ description: 'Organization-wide smb credit balance.' }),
    }),
    excludeEnrichedWithinDays: z.int().min(0).nullable(),
    lastEnrichment: z
      .strictObject({
        status: z.enum(['failed', 'canceled']),
        startedAt: timestamp(),
        endedAt: timestamp().nullable(),
        refunded: z.boolean(),
      })
      .nullable(),
    createdAt: timestamp(),
    completedAt: timestamp().optional().meta({ description: 'Only while `enriched`.' }),
    resultsExpireAt: timestamp().optional().meta({ description: 'On `enriched` and `expired` campaigns.' }),
    results: z
      .strictObject({
        totalAccounts: count(),
        totalContactsFound: count(),
        pctAccountsWithContact: fraction(),
        pctAccountsWithMobile: fraction(),
      })
      .optional()
      .meta({ description: 'Only while `enriched`.' }),
  })
  .meta({ id: 'Campaign' });

/** A campaign as the API returns it. */
export type Campaign = z.infer<typeof CampaignSchema>;

/** Campaign list item (spec "Campaign list item"). */
export const CampaignListItemSchema = z
  .strictObject({
    id: campaignId(),
    status: CampaignStatusSchema,
    createdVia: CreatedViaSchema,
    name: z.string(),
    excludeEnrichedWithinDays: z.int().min(0).nullable(),
    createdAt: timestamp(),
  })
  .meta({ id: 'CampaignListItem' });

/** A list item as the API returns it. */
export type CampaignListItem = z.infer<typeof CampaignListItemSchema>;

const accountId = z
  .string()
  .min(1)
  .max(128)
  // No control characters (decisions §1): C0, DEL and C1.
  .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, { error: 'must not contain control characters' });

/** `POST /v1/campaigns/create` body (decisions §1). */
export const CreateCampaignRequest = z.strictObject({
  name: z.string().trim().min(1).max(200).meta({ example: 'Q4 expansion targets' }),
  accountIds: z.array(accountId).min(1).max(MAX_ACCOUNT_IDS).meta({ description: 'Account IDs; duplicates are collapsed. urlencoded: repeat the field (at most 1,000 fields a body); multipart: repeat the field or send a file part `accountIdsFile`.', example: ['acc_1', 'acc_2'] }),
  excludeEnrichedWithinDays: excludeEnrichedWithinDays().optional(),
});

/** `POST /v1/campaigns/update` body (decisions §1). */
export const UpdateCampaignRequest = z.strictObject({
  campaignId: campaignId(),
  name: z.string().trim().min(1).max(200).optional(),
  excludeEnrichedWithinDays: excludeEnrichedWithinDays().optional(),
});

/** Body of get and enrich. */
export const CampaignIdRequest = z.strictObject({ campaignId: campaignId() });

const oneOrMany = <T extends z.ZodType>(schema: T) => z.union([schema, z.array(schema).min(1).max(10)]);

/** Largest page (spec "Limits"). */
export const MAX_PAGE_SIZE = 100;
/** Page size when `limit` is omitted. */
export const DEFAULT_PAGE_SIZE = 25;

/** `POST /v1/campaigns/list` body (spec "List campaigns"; decisions §3). */
export const ListCampaignsRequest = z.strictObject({
  filters: z
    .strictObject({
      status: oneOrMany(CampaignStatusSchema).optional(),
      createdVia: oneOrMany(CreatedViaSchema).optional(),
    })
    .optional(),
  cursor: z.string().min(1).max(2048).optional().meta({ description: 'Opaque `nextCursor` of the previous page, unchanged.' }),
  limit: z.int().min(1).max(MAX_PAGE_SIZE).optional().meta({ description: `Page size, default ${DEFAULT_PAGE_SIZE}.` }),
});

/** Validated list request. */
export type ListCampaignsInput = z.output<typeof ListCampaignsRequest>;

export const createCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createCampaign',
  idempotent: true,
  path: '/v1/campaigns/create',
  summary: 'Create a campaign',
  description:
    'Creates an API campaign in `draft` from a list of account IDs. JSON: `accountIds` is an array; urlencoded: repeat `accountIds`; multipart: repeat `accountIds`, or send a file part `accountIdsFile` (text or CSV, one ID a line, first column, optional header `account_id`), e.g. `curl -F name=Q4 -F accountIdsFile=@ids.csv`.',
  request: CreateCampaignRequest,
  response: CampaignSchema,
  errors: ['invalid_request', 'revoked_api_key'],
  example: { name: 'Q4 expansion targets', accountIds: ['acc_1', 'acc_2', 'acc_3'], excludeEnrichedWithinDays: 30 },
  fromForm: accountIdsFromForm,
});

export const updateCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'updateCampaign',
  idempotent: true,
  path: '/v1/campaigns/update',
  summary: 'Update a draft campaign',
  description: 'Changes `name` and/or `excludeEnrichedWithinDays` of an API-created campaign in `draft`. At least one of the two is required.',
  request: UpdateCampaignRequest,
  response: CampaignSchema,
  errors: ['invalid_request', 'revoked_api_key', 'not_found', 'campaign_not_editable'],
  example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz', excludeEnrichedWithinDays: 90 },
});

export const getCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'getCampaign',
  path: '/v1/campaigns/get',
  summary: 'Get a campaign',
  description: 'Reads a campaign of any surface (`createdVia` tells which). Poll it to follow an enrichment; `results` appear once `enriched`.',
  request: CampaignIdRequest,
  response: CampaignSchema,
  errors: ['invalid_request', 'revoked_api_key', 'not_found'],
  example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
});

export const listCampaignsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listCampaigns',
  path: '/v1/campaigns/list',
  summary: 'List campaigns',
  description:
    'List items, newest first (`createdAt` desc, then `id` desc). `filters.status` and `filters.createdVia` take one value or an array; both given combine with AND. Pass `nextCursor` unchanged as `cursor` with the same filters and limit; stop when it is null. urlencoded/multipart: `filters[status]=draft` (repeat for several), `limit=10`.',
  request: ListCampaignsRequest,
  response: z.strictObject({ campaigns: z.array(CampaignListItemSchema), nextCursor: z.string().nullable() }).meta({ id: 'CampaignPage' }),
  errors: ['invalid_request', 'revoked_api_key'],
  example: { filters: { status: ['draft', 'enriching'], createdVia: 'api' }, limit: 25 },
});

export const enrichCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'enrichCampaign',
  idempotent: true,
  path: '/v1/campaigns/enrich',
  summary: 'Enrich (launch) a campaign',
  description:
    'Launches enrichment of an API-created draft: invalid, recently enriched and CRM-known accounts are skipped and counted; credits are charged per eligible account; the organization ceiling on enriching accounts applies. Repeating the call while `enriching` returns the current state with no new charge. Poll get for progress. Refusals, in order: `no_eligible_accounts`, `insufficient_credits`, `concurrency_limit_exceeded`; a refused launch charges nothing and stays `draft`.',
  request: CampaignIdRequest,
  response: CampaignSchema,
  errors: ['invalid_request', 'revoked_api_key', 'insufficient_credits', 'not_found', 'campaign_not_enrichable', 'enrichment_pending', 'no_eligible_accounts', 'concurrency_limit_exceeded'],
  example: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
});
