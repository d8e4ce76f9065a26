/**
 * Schemas of the launch quote and the per-account outcomes (docs/launch.md#per-account-outcomes):
 * `POST /v1/campaigns/quote` and `POST /v1/campaigns/accounts`; and of the
 * customer's cancel (docs/launch.md#canceling): `POST /v1/campaigns/cancel`. The response
 * shapes and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { CampaignIdRequest, campaignId, listFilters, listRequest, treeShakable } from '../schemas';
import { defineOperation } from '../http/operation';
import { ACCOUNT_OUTCOMES } from './account-outcome';

/** Largest page of `/v1/campaigns/accounts` (docs/launch.md#per-account-outcomes). */
export const MAX_ACCOUNTS_PAGE_SIZE = 1_000;
/** Page size of `/v1/campaigns/accounts` when `limit` is omitted. */
export const DEFAULT_ACCOUNTS_PAGE_SIZE = 100;

/** Why an account was or was not enriched. */
export const AccountOutcomeSchema = /* @__PURE__ */ treeShakable(() =>
  z.enum(ACCOUNT_OUTCOMES).check(
    z.meta({
      id: 'AccountOutcome',
      description:
        '`invalid` (not in the warehouse, or closed/inactive), `recently_enriched` (excludeEnrichedWithinDays), `crm_excluded` (in the CRM targets), `pending` (eligible, not processed yet), `found` (eligible, processed, at least one contact), `not_found` (eligible, processed, no contact: its credit was refunded).',
    }),
  ),
);

/** `POST /v1/campaigns/accounts` body (docs/launch.md#per-account-outcomes). */
export const CampaignAccountsRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    {
      campaignId: campaignId(),
      filters: listFilters({
        outcome: z.optional(
          z.union([AccountOutcomeSchema, z.array(AccountOutcomeSchema).check(z.minLength(1), z.maxLength(ACCOUNT_OUTCOMES.length))]),
        ),
      }),
    },
    { max: MAX_ACCOUNTS_PAGE_SIZE, default: DEFAULT_ACCOUNTS_PAGE_SIZE },
  ),
);

/** Validated accounts request. */
export type CampaignAccountsInput = z.output<typeof CampaignAccountsRequest>;

export const quoteCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'quoteCampaign',
  scope: 'campaigns:read',
  path: '/v1/campaigns/quote',
  request: CampaignIdRequest,
});

/** `POST /v1/campaigns/cancel` (docs/launch.md#canceling): stops a running enrichment; honours `Idempotency-Key` (docs/idempotency.md). */
export const cancelCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'cancelCampaign',
  audited: true,
  scope: 'campaigns:launch',
  idempotent: true,
  path: '/v1/campaigns/cancel',
  request: CampaignIdRequest,
});

export const campaignAccountsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listCampaignAccounts',
  scope: 'campaigns:read',
  path: '/v1/campaigns/accounts',
  request: CampaignAccountsRequest,
});
