/**
 * Schemas of the campaign resources and operations (docs/openapi.json, docs/README.md;
 * docs/campaigns.md, docs/pagination.md): what the handlers validate.
 * The response shapes and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { CAMPAIGN_STATUSES } from '../errors';
import { CampaignIdRequest, campaignId, listFilters, listRequest, treeShakable } from '../schemas';
import { defineOperation } from '../http/operation';
import { accountIdsFromForm } from '../account-lists/account-list';
import { AccountIdSchema, MAX_ACCOUNT_IDS } from '../account-lists/schema';
import { uploadId } from '../uploads/schema';

/** Surfaces that create campaigns. */
export const CREATED_VIA = ['api', 'ui', 'data_cube'] as const;
/** A surface that creates campaigns. */
export type CreatedVia = (typeof CREATED_VIA)[number];

export const CampaignStatusSchema = /* @__PURE__ */ treeShakable(() =>
  z.enum(CAMPAIGN_STATUSES).check(z.meta({ id: 'CampaignStatus', description: 'Lifecycle state.' })),
);
export const CreatedViaSchema = /* @__PURE__ */ treeShakable(() =>
  z.enum(CREATED_VIA).check(z.meta({ id: 'CreatedVia', description: 'Surface that created the campaign.' })),
);

/** Largest `excludeEnrichedWithinDays` accepted (docs/campaigns.md), in days. */
export const MAX_EXCLUDE_DAYS = 3650;

const excludeEnrichedWithinDays = () =>
  z
    .nullable(z.int().check(z.minimum(0), z.maximum(MAX_EXCLUDE_DAYS)))
    .check(z.meta({ description: 'Accounts enriched within this many days are skipped at launch; null disables.', example: 30 }));

/** A campaign name: 1..200 characters after trimming, so never blank (the pattern shows it in the document). */
const campaignName = () =>
  z
    .string()
    .check(
      z.trim(),
      z.minLength(1),
      z.maxLength(200),
      z.regex(/\S/, { error: 'must not be blank' }),
      z.meta({ description: 'Stored trimmed; 1..200 characters after trimming.' }),
    );

/** Sources of a new campaign's account IDs: exactly one per request (docs/campaigns.md); multipart also takes `accountIdsFile` for `accountIds`. */
const ACCOUNT_ID_SOURCES = ['accountIds', 'accountIdsUploadId'] as const;

/** `POST /v1/campaigns/create` body (docs/campaigns.md): `accountIds` or `accountIdsUploadId`, exactly one. */
export const CreateCampaignRequest = /* @__PURE__ */ treeShakable(() =>
  z
    .strictObject({
      name: campaignName().check(z.meta({ example: 'Q4 expansion targets' })),
      accountIds: z.optional(z.array(AccountIdSchema).check(z.minLength(1), z.maxLength(MAX_ACCOUNT_IDS))).check(
        z.meta({
          description:
            'Account IDs; duplicates are collapsed. urlencoded: repeat the field (at most 1,000 fields a body); multipart: repeat the field or send a file part `accountIdsFile`. Exactly one of `accountIds`, `accountIdsFile` and `accountIdsUploadId`.',
          example: ['acc_1', 'acc_2'],
        }),
      ),
      accountIdsUploadId: z.optional(uploadId()).check(
        z.meta({
          description:
            'Instead of `accountIds`: an upload of `POST /v1/uploads/create` whose file was PUT to its URL (the `accountIdsFile` format; at most 100,000 IDs of 1..128 characters; a bad line is named in the error). For lists too large for a request body.',
        }),
      ),
      excludeEnrichedWithinDays: z.optional(excludeEnrichedWithinDays()),
    })
    .check(
      (ctx) => {
        const given = ACCOUNT_ID_SOURCES.filter((source) => ctx.value[source] !== undefined);
        if (given.length === 1) return;
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          path: given.length === 0 ? ['accountIds'] : ['accountIdsUploadId'],
          message:
            given.length === 0
              ? 'required: send accountIds (or a file part accountIdsFile) or accountIdsUploadId'
              : 'not allowed together with accountIds (or accountIdsFile): send exactly one',
        });
      },
      z.meta({ oneOf: ACCOUNT_ID_SOURCES.map((source) => ({ required: [source] })) }),
    ),
);

/** `POST /v1/campaigns/update` body (docs/campaigns.md): at least one of `name`, `excludeEnrichedWithinDays`. */
export const UpdateCampaignRequest = /* @__PURE__ */ treeShakable(() =>
  z
    .strictObject({
      campaignId: campaignId(),
      name: z.optional(campaignName()),
      excludeEnrichedWithinDays: z.optional(excludeEnrichedWithinDays()),
    })
    // The use case refuses neither field with its own issue line; the document states the rule.
    .check(z.meta({ anyOf: [{ required: ['name'] }, { required: ['excludeEnrichedWithinDays'] }] })),
);

const oneOrMany = <T extends z.ZodMiniType>(schema: T) => z.union([schema, z.array(schema).check(z.minLength(1), z.maxLength(10))]);

/** Largest page (docs/limits.md). */
export const MAX_PAGE_SIZE = 100;
/** Page size when `limit` is omitted. */
export const DEFAULT_PAGE_SIZE = 25;

/** `POST /v1/campaigns/list` body (docs/pagination.md). */
export const ListCampaignsRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    { filters: listFilters({ status: z.optional(oneOrMany(CampaignStatusSchema)), createdVia: z.optional(oneOrMany(CreatedViaSchema)) }) },
    { max: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  ),
);

/** Validated list request. */
export type ListCampaignsInput = z.output<typeof ListCampaignsRequest>;

export const createCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createCampaign',
  audited: true,
  scope: 'campaigns:write',
  idempotent: true,
  path: '/v1/campaigns/create',
  request: CreateCampaignRequest,
  fromForm: accountIdsFromForm,
});

export const updateCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'updateCampaign',
  audited: true,
  scope: 'campaigns:write',
  idempotent: true,
  path: '/v1/campaigns/update',
  request: UpdateCampaignRequest,
});

export const getCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'getCampaign',
  scope: 'campaigns:read',
  path: '/v1/campaigns/get',
  request: CampaignIdRequest,
});

export const listCampaignsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listCampaigns',
  scope: 'campaigns:read',
  path: '/v1/campaigns/list',
  request: ListCampaignsRequest,
});

export const enrichCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'enrichCampaign',
  audited: true,
  scope: 'campaigns:launch',
  idempotent: true,
  path: '/v1/campaigns/enrich',
  request: CampaignIdRequest,
});
