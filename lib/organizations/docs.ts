/**
 * The published contract of the organization operations beyond what a handler
 * needs (docs/limits.md#reading-your-limits): the response shape
 * (also the TypeScript type of what describe returns), summary and examples.
 * Only the OpenAPI document (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { documentOperation } from '../http/operation';
import { SETTINGS } from '../config';
import {
  createKeyOperation,
  describeLimitsOperation,
  describeOrganizationOperation,
  listKeysOperation,
  orgUsageOperation,
  revokeKeyOperation,
  rotateKeyOperation,
  MAX_KEY_LIFETIME_TEXT,
} from './schema';
import { count } from '../schemas';
import { API_KEY_ID_PATTERN } from '../ids';
import { SCOPES } from '../http/scopes';

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
      enrichingAccounts: z
        .int()
        .check(
          z.minimum(0),
          z.meta({ description: 'Accounts enriching now across the organization, every surface included.', example: 0 }),
        ),
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
      limit: z
        .int()
        .check(
          z.minimum(1),
          z.meta({ description: 'Authenticated requests the organization (all its keys together) may make per window.', example: 200 }),
        ),
      windowSeconds: z.int().check(z.minimum(1), z.meta({ description: 'Length of the fixed window, in seconds.', example: 10 })),
    }),
    exportsPerHour: z.int().check(z.minimum(1), z.meta({ description: 'Exports the organization may make per hour.', example: 60 })),
    uploadsPerHour: z.int().check(z.minimum(1), z.meta({ description: 'Uploads the organization may create per hour.', example: 60 })),
    monthlySpend: z.strictObject({
      limit: z
        .nullable(z.int().check(z.minimum(0)))
        .check(z.meta({ description: 'Credits the organization may spend per UTC calendar month; null: no limit.', example: 50000 })),
      spent: z.int().check(z.meta({ description: 'Credits charged this UTC month, net of refunds.', example: 1212 })),
      resetsAt: z.string().check(
        z.meta({
          description: 'When the month ends and `spent` starts again from 0 (ISO 8601, UTC).',
          example: '2026-12-01T00:00:00.000Z',
        }),
      ),
    }),
    lowBalanceThreshold: z.nullable(z.int().check(z.minimum(0))).check(
      z.meta({
        description: 'smb balance under which a launch emits `organization.credits_low` (once per crossing); null: none.',
        example: 1000,
      }),
    ),
  })
  .check(z.meta({ id: 'OrganizationLimits' }));

/** The shape of `data` of `POST /v1/org/limits`. */
export type OrganizationLimits = z.infer<typeof OrganizationLimits>;

const nullableTime = (description: string) => z.nullable(z.string()).check(z.meta({ description }));

/** An API key as keys/* show it: never its secret. */
export const ApiKeySchema = z
  .strictObject({
    id: z
      .string()
      .check(
        z.regex(API_KEY_ID_PATTERN),
        z.meta({ description: 'The key (`key_…`), the same across rotations.', example: 'key_3kTMd9nPq2ZbXw7vRfGh1' }),
      ),
    name: z.string().check(z.meta({ description: 'What the key is for.', example: 'CRM sync (read only)' })),
    prefix: z
      .string()
      .check(z.meta({ description: 'The first 12 characters of its current secret, to recognize it.', example: 'cek_7Hq2kXv9' })),
    scopes: z.array(z.enum(SCOPES)).check(z.meta({ description: 'What the key may do.' })),
    limits: z.strictObject({
      maxCreditsPerLaunch: z
        .nullable(z.int())
        .check(z.meta({ description: 'Most credits one launch with the key may charge; null: no limit of its own.' })),
      monthlyCredits: z
        .nullable(z.int())
        .check(z.meta({ description: 'Most credits the key may charge per UTC month, net of refunds; null: no limit of its own.' })),
    }),
    createdAt: z.string().check(z.meta({ description: 'ISO 8601.' })),
    expiresAt: nullableTime('When it stops working (401 `expired_api_key`); null: never.'),
    lastUsedAt: nullableTime('Last authenticated request with it, to the minute; null: none yet.'),
    revokedAt: nullableTime('When it was revoked; null: it is not.'),
    test: z.boolean().check(z.meta({ description: 'A test key (`cek_test_…`), acting on the test twin.' })),
  })
  .check(z.meta({ id: 'ApiKey' }));

const keyExample = {
  id: 'key_3kTMd9nPq2ZbXw7vRfGh1',
  name: 'CRM sync (read only)',
  prefix: 'cek_7Hq2kXv9',
  scopes: ['campaigns:read', 'results:read'],
  limits: { maxCreditsPerLaunch: null, monthlyCredits: null },
  createdAt: '2026-11-22T09:30:00.000Z',
  expiresAt: '2027-11-22T09:30:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
  test: false,
};
const secretExample = 'cek_7Hq2kXv9LmN3pR5sT8wYz4fJ8kQ2mN7pR9sT3vW5';

/** `data` of keys/create and keys/rotate: the key and its secret, shown only here. */
export const ApiKeyWithSecretSchema = z
  .strictObject({
    key: ApiKeySchema,
    secret: z.string().check(z.meta({ description: 'The key’s secret (`cek_…`): shown only in this answer; store it in a secret store.' })),
  })
  .check(z.meta({ id: 'ApiKeyWithSecret' }));

/** The counts of a usage row (docs/authentication.md "Usage"). */
const usageCounts = {
  requests: count().check(
    z.meta({
      description:
        'Authenticated requests, refusals included; on a campaign row, the requests whose valid body named the campaign (`campaignId`).',
      example: 1840,
    }),
  ),
  creditsCharged: count().check(z.meta({ description: 'Credits charged by launches in the range.', example: 1200 })),
  creditsRefunded: count().check(z.meta({ description: 'Credits refunded in the range.', example: 35 })),
};

/** `data` of `POST /v1/org/usage`. */
export const UsageSchema = z
  .strictObject({
    from: z.string().check(z.meta({ description: 'First UTC day of the range, as asked.', example: '2026-11-01' })),
    to: z.string().check(z.meta({ description: 'Last UTC day of the range, as asked.', example: '2026-11-30' })),
    rows: z.array(
      z.union([
        z.strictObject({
          day: z.string().check(z.meta({ description: 'The UTC day (YYYY-MM-DD).', example: '2026-11-02' })),
          ...usageCounts,
        }),
        z.strictObject({
          keyId: z.string().check(z.meta({ description: 'The API key (`key_…`).', example: 'key_3kTMd9nPq2ZbXw7vRfGh1' })),
          ...usageCounts,
        }),
        z.strictObject({
          campaignId: z.string().check(z.meta({ description: 'The campaign.', example: 'camp_7Hq2kXv9LmN3pR5sT8wYz' })),
          ...usageCounts,
        }),
      ]),
    ),
  })
  .check(z.meta({ id: 'Usage' }));

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
      // The deployment's defaults (SETTINGS, lib/config.ts), as a fresh organization reads them.
      requests: { limit: SETTINGS.rateLimitRequests.default, windowSeconds: SETTINGS.rateLimitWindowSeconds.default },
      exportsPerHour: SETTINGS.exportsPerHour.default,
      uploadsPerHour: SETTINGS.uploadsPerHour.default,
      monthlySpend: { limit: 50000, spent: 1212, resetsAt: '2026-12-01T00:00:00.000Z' },
      lowBalanceThreshold: 1000,
    },
  }),
  documentOperation(orgUsageOperation, {
    summary: "Read the organization's usage",
    description:
      'Requests and credits over a range of UTC days (`from` and `to` included, at most 92 days apart), one row per day, API key or campaign with activity, sorted. Requests: every authenticated request, refusals included (what a container had not written when it stopped is missing: at most a lease of the request rate or a minute, docs/limits.md); a campaign row counts the requests whose valid body named it. Credits: the ledger’s charges and refunds in the range. Keys from before key IDs count in day rows only.',
    response: UsageSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { from: '2026-11-01', to: '2026-11-30', groupBy: 'key' },
    responseExample: {
      from: '2026-11-01',
      to: '2026-11-30',
      rows: [{ keyId: 'key_3kTMd9nPq2ZbXw7vRfGh1', requests: 1840, creditsCharged: 1200, creditsRefunded: 35 }],
    },
  }),
  documentOperation(createKeyOperation, {
    creates: '/key/id',
    tag: 'keys',
    summary: 'Create an API key',
    description: `A new key of the organization with the scopes given (only scopes the calling key holds: a missing one answers 403 \`insufficient_scope\`), an optional expiry (at most ${MAX_KEY_LIFETIME_TEXT} ahead) and optional credit limits of its own (\`maxCreditsPerLaunch\`, \`monthlyCredits\`). A calling key with credit limits creates a key that may launch only with the same limits or tighter ones (400 naming the limit). The secret is in this answer only. A test key creates test keys.`,
    response: ApiKeyWithSecretSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { name: 'CRM sync (read only)', scopes: ['campaigns:read', 'results:read'], expiresAt: '2027-11-22T09:30:00.000Z' },
    responseExample: { key: keyExample, secret: secretExample },
  }),
  documentOperation(listKeysOperation, {
    tag: 'keys',
    summary: "List the organization's API keys",
    description:
      'A page of the organization’s keys by key ID, revoked ones included, never a secret. Pass `nextCursor` unchanged as `cursor` with the same limit; stop when it is null.',
    response: z.strictObject({ keys: z.array(ApiKeySchema), nextCursor: z.nullable(z.string()) }).check(z.meta({ id: 'ApiKeyPage' })),
    errors: ['invalid_request', 'revoked_api_key'],
    example: { limit: 20 },
    responseExample: { keys: [keyExample], nextCursor: null },
  }),
  documentOperation(revokeKeyOperation, {
    tag: 'keys',
    summary: 'Revoke an API key',
    description:
      'Every secret of the key (a rotated one still in its overlap included) is refused from the next request on (401 `revoked_api_key`). Revoking a revoked key answers it as it is.',
    response: z.strictObject({ key: ApiKeySchema }).check(z.meta({ id: 'RevokedApiKey' })),
    errors: ['invalid_request', 'revoked_api_key', 'not_found'],
    example: { id: 'key_3kTMd9nPq2ZbXw7vRfGh1' },
    responseExample: { key: { ...keyExample, revokedAt: '2026-11-23T10:00:00.000Z' } },
  }),
  documentOperation(rotateKeyOperation, {
    tag: 'keys',
    summary: 'Rotate an API key’s secret',
    description:
      'A new secret for the key, shown only in this answer; the old secret keeps working for 24 hours (never past the key’s own `expiresAt`), then answers 401 `expired_api_key`. A secret rotated out earlier and still in its overlap stops at once. A revoked key cannot be rotated (400). The new secret carries the key’s scopes and limits, so the calling key rotates only a key it could create: one holding a scope it lacks answers 403 `insufficient_scope`, one that may launch with looser credit limits than its own 400; nothing is changed.',
    response: ApiKeyWithSecretSchema,
    errors: ['invalid_request', 'revoked_api_key', 'not_found'],
    example: { id: 'key_3kTMd9nPq2ZbXw7vRfGh1' },
    responseExample: { key: keyExample, secret: secretExample },
  }),
];
