/**
 * The published contract of the organization operations beyond what a handler
 * needs (spec "Organization (returned by org describe)"): the response shape
 * (also the TypeScript type of what describe returns), summary and examples.
 * Only the OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { documentOperation } from '../http/operation';
import { describeLimitsOperation, describeOrganizationOperation } from './schema';

/** `data` of `POST /v1/org/describe`. */
export const OrganizationDescription = z
  .strictObject({
    organization: z.strictObject({
      id: z.string().check(z.meta({ description: 'Organization identifier.', example: 'org_4fJ8kQ2mN7pR9sT3vW5xY' })),
      name: z.string().check(z.meta({ description: 'Organization name.', example: 'Acme Demo' })),
    }),
    credits: z.strictObject({
      smb: z.int().check(z.minimum(0), z.meta({ description: 'Credits available for account and contact enrichment.', example: 10000 })),
      researchAgents: z.int().check(z.minimum(0), z.meta({ description: 'Credits available for research-agent runs.', example: 100 })),
    }),
    enrichment: z.strictObject({
      enrichingAccounts: z.int().check(z.minimum(0), z.meta({ description: 'Accounts enriching now across the organization, every surface included.', example: 0 })),
      maxEnrichingAccounts: z.int().check(z.minimum(0), z.meta({ description: 'Ceiling on accounts enriching at once.', example: 5000 })),
    }),
  })
  .check(z.meta({ id: 'OrganizationDescription' }));

/** The shape of `data` of describe. */
export type OrganizationDescription = z.infer<typeof OrganizationDescription>;

/** `data` of `POST /v1/org/limits` (docs/limits.md). */
export const OrganizationLimits = z
  .strictObject({
    requests: z.strictObject({
      limit: z.int().check(z.minimum(1), z.meta({ description: 'Authenticated requests the organization (all its keys together) may make per window.', example: 200 })),
      windowSeconds: z.int().check(z.minimum(1), z.meta({ description: 'Length of the fixed window, in seconds.', example: 10 })),
    }),
    exportsPerHour: z.int().check(z.minimum(1), z.meta({ description: 'Exports the organization may make per hour.', example: 60 })),
    uploadsPerHour: z.int().check(z.minimum(1), z.meta({ description: 'Uploads the organization may create per hour.', example: 60 })),
    monthlySpend: z.strictObject({
      limit: z.nullable(z.int().check(z.minimum(0))).check(z.meta({ description: 'Credits the organization may spend per UTC calendar month; null: no limit.', example: 50000 })),
      spent: z.int().check(z.meta({ description: 'Credits charged this UTC month, net of refunds.', example: 1212 })),
      resetsAt: z.string().check(z.meta({ description: 'When the month ends and `spent` starts again from 0 (ISO 8601, UTC).', example: '2026-12-01T00:00:00.000Z' })),
    }),
    lowBalanceThreshold: z
      .nullable(z.int().check(z.minimum(0)))
      .check(z.meta({ description: 'smb balance under which a launch emits `organization.credits_low` (once per crossing); null: none.', example: 1000 })),
  })
  .check(z.meta({ id: 'OrganizationLimits' }));

/** The shape of `data` of `POST /v1/org/limits`. */
export type OrganizationLimits = z.infer<typeof OrganizationLimits>;

/** The organization operations, documented. */
export const organizationOperationDocs = [
  documentOperation(describeOrganizationOperation, {
    creditsRemaining: true,
    summary: 'Describe the authenticated organization',
    description:
      'Verifies the API key and returns the organization, its credit balances and its enrichment capacity. The number of accounts a new enrichment can include is `maxEnrichingAccounts - enrichingAccounts`; the figures are point-in-time values. With a test key: the same `organization` (ID and name), with the test twin’s test credits and capacity.',
    response: OrganizationDescription,
    errors: ['invalid_request', 'revoked_api_key'],
    responseExample: {
      organization: { id: 'org_4fJ8kQ2mN7pR9sT3vW5xY', name: 'Acme Demo' },
      credits: { smb: 9788, researchAgents: 100 },
      enrichment: { enrichingAccounts: 262, maxEnrichingAccounts: 5000 },
    },
  }),
  documentOperation(describeLimitsOperation, {
    summary: "Read the organization's limits",
    description:
      'Returns the limits in force for the organization (all its keys together): the request rate, exports and uploads per hour, the optional monthly spend limit with what was spent this UTC month (net of refunds), and the optional low-balance threshold. Every authenticated answer also carries the request rate as `RateLimit-Policy` and `RateLimit` headers.',
    response: OrganizationLimits,
    errors: ['invalid_request', 'revoked_api_key'],
    responseExample: {
      requests: { limit: 200, windowSeconds: 10 },
      exportsPerHour: 60,
      uploadsPerHour: 60,
      monthlySpend: { limit: 50000, spent: 1212, resetsAt: '2026-12-01T00:00:00.000Z' },
      lowBalanceThreshold: 1000,
    },
  }),
];
