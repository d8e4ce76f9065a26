/**
 * Export schemas (spec "Export campaign results as CSV"; docs/csv.md); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { campaignId, count, treeShakable } from '../schemas';

/** `POST /v1/campaigns/export` body. */
export const ExportCampaignRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    campaignId: campaignId(),
    maxContactsPerAccount: z.optional(count()).check(z.meta({ description: 'Omitted: all contacts; a positive integer caps contacts per account; 0: one account-only row per account.' })),
    hasMobilePhone: z.optional(z.boolean()).check(z.meta({ description: 'true: only contacts with a mobile phone (OR with hasEmail). Default false.' })),
    hasEmail: z.optional(z.boolean()).check(z.meta({ description: 'true: only contacts with an email address (OR with hasMobilePhone). Default false.' })),
  }),
);

/** Validated export request. */
export type ExportCampaignInput = z.output<typeof ExportCampaignRequest>;

export const exportCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'exportCampaign',
  scope: 'results:read',
  path: '/v1/campaigns/export',
  request: ExportCampaignRequest,
});
