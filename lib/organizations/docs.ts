/**
 * The published contract of the organization operations beyond what a handler
 * needs (spec "Organization (returned by org describe)"): the response shape
 * (also the TypeScript type of what describe returns), summary and examples.
 * Only the OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { documentOperation } from '../http/operation';
import { describeOrganizationOperation } from './schema';

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

/** The organization operations, documented. */
export const organizationOperationDocs = [
  documentOperation(describeOrganizationOperation, {
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
];
