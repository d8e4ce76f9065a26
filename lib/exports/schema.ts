/**
 * Schemas of the operations that deliver results: the CSV export (docs/csv.md) and the results as they
 * arrive (docs/results.md). The response shapes and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { campaignId, count, treeShakable } from '../schemas';
import { ATTEMPT_ID_PATTERN } from '../ids';

/** `POST /v1/campaigns/export` body. */
export const ExportCampaignRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    campaignId: campaignId(),
    maxContactsPerAccount: z.optional(count()).check(
      z.meta({
        description: 'Omitted: all contacts; a positive integer caps contacts per account; 0: one account-only row per account.',
      }),
    ),
    hasMobilePhone: z
      .optional(z.boolean())
      .check(z.meta({ description: 'true: only contacts with a mobile phone (OR with hasEmail). Default false.' })),
    hasEmail: z
      .optional(z.boolean())
      .check(z.meta({ description: 'true: only contacts with an email address (OR with hasMobilePhone). Default false.' })),
  }),
);

/** Validated export request. */
export type ExportCampaignInput = z.output<typeof ExportCampaignRequest>;

export const exportCampaignOperation = /* @__PURE__ */ defineOperation({
  operationId: 'exportCampaign',
  audited: true,
  scope: 'results:read',
  path: '/v1/campaigns/export',
  request: ExportCampaignRequest,
});

/** Largest page of `/v1/campaigns/results` (accounts). */
export const MAX_RESULTS_PAGE_SIZE = 1_000;
/** Page size of `/v1/campaigns/results` when `limit` is omitted. */
export const DEFAULT_RESULTS_PAGE_SIZE = 100;
/** Longest long poll of `/v1/campaigns/results` (seconds). */
export const MAX_RESULTS_WAIT_SECONDS = 20;

/** The contact selection of the results (the export's fields, the same meaning). */
const selectionFields = () => ({
  maxContactsPerAccount: z
    .optional(count())
    .check(
      z.meta({ description: 'Omitted: all contacts; a positive integer caps contacts per account; 0: every account with `contacts: []`.' }),
    ),
  hasMobilePhone: z
    .optional(z.boolean())
    .check(z.meta({ description: 'true: only contacts with a mobile phone (OR with hasEmail). Default false.' })),
  hasEmail: z
    .optional(z.boolean())
    .check(z.meta({ description: 'true: only contacts with an email address (OR with hasMobilePhone). Default false.' })),
});

/** Where a reader of the results is: the last seq it has (the answer's `attemptId` names the attempt it belongs to). */
const positionFields = () => ({
  afterSeq: z.optional(count()).check(
    z.meta({
      description:
        "Answer the accounts with a seq above this one: the `lastSeq` of the previous page (default 0, from the start). When an answer's `attemptId` differs from the one your `afterSeq` came from, the attempt you read ended: read the new one from 0 (docs/results.md).",
    }),
  ),
});

/** `POST /v1/campaigns/results` body (docs/results.md). */
export const CampaignResultsRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    campaignId: campaignId(),
    ...positionFields(),
    limit: z
      .optional(z.int().check(z.minimum(1), z.maximum(MAX_RESULTS_PAGE_SIZE)))
      .check(z.meta({ description: `Accounts per page, default ${DEFAULT_RESULTS_PAGE_SIZE}.` })),
    waitSeconds: z.optional(z.int().check(z.minimum(0), z.maximum(MAX_RESULTS_WAIT_SECONDS))).check(
      z.meta({
        description:
          'Long poll: while the campaign is `enriching` and no account after `afterSeq` is readable, wait up to this many seconds for one (default 0: answer now).',
      }),
    ),
    ...selectionFields(),
  }),
);

/** Validated results request. */
export type CampaignResultsInput = z.output<typeof CampaignResultsRequest>;

export const campaignResultsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listCampaignResults',
  path: '/v1/campaigns/results',
  scope: 'results:read',
  request: CampaignResultsRequest,
});

/** `POST /v1/campaigns/results/stream` body (docs/results.md "The stream"): the results' fields without `limit` and `waitSeconds`. */
export const CampaignResultsStreamRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    campaignId: campaignId(),
    ...positionFields(),
    ...selectionFields(),
  }),
);

/** Validated results stream request. */
export type CampaignResultsStreamInput = z.output<typeof CampaignResultsStreamRequest>;

export const streamCampaignResultsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'streamCampaignResults',
  path: '/v1/campaigns/results/stream',
  scope: 'results:read',
  request: CampaignResultsStreamRequest,
  streaming: true,
});
