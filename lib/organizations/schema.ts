/**
 * Schemas of the organization operations (docs/limits.md#reading-your-limits); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { listRequest, MAX_INTEGER, timestamp, treeShakable } from '../schemas';
import { API_KEY_ID_PATTERN } from '../ids';
import { SCOPES } from '../http/scopes';

/** `POST /v1/org/describe` (docs/limits.md#reading-your-limits): no body, an empty body or `{}`. */
export const describeOrganizationOperation = /* @__PURE__ */ defineOperation({
  operationId: 'describeOrganization',
  scope: 'org:read',
  path: '/v1/org/describe',
  request: /* @__PURE__ */ treeShakable(() => z.strictObject({})),
});

/** `POST /v1/org/limits` (docs/limits.md): no body, an empty body or `{}`. */
export const describeLimitsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'describeLimits',
  scope: 'org:read',
  path: '/v1/org/limits',
  request: /* @__PURE__ */ treeShakable(() => z.strictObject({})),
});

/** Largest page of keys/list. */
export const MAX_KEY_PAGE_SIZE = 100;
/** Page size of keys/list when `limit` is omitted. */
export const DEFAULT_KEY_PAGE_SIZE = 20;
/** Longest a key may live: `expiresAt` at most this many years ahead (docs/authentication.md "Managing keys yourself"). */
export const MAX_KEY_LIFETIME_YEARS = 1;
/** {@link MAX_KEY_LIFETIME_YEARS} as the documents word it. */
export const MAX_KEY_LIFETIME_TEXT = `${MAX_KEY_LIFETIME_YEARS} year`;

/**
 * The latest `expiresAt` of a key created at `now`: the same instant {@link MAX_KEY_LIFETIME_YEARS} year(s) later on
 * the UTC calendar (from 29 February, 1 March).
 */
export function latestKeyExpiry(now: Date): Date {
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + MAX_KEY_LIFETIME_YEARS);
  return latest;
}

/** An API key ID (`key_…`). */
const keyId = () =>
  z
    .string()
    .check(
      z.regex(API_KEY_ID_PATTERN, 'must be an API key ID: key_ and 21 characters'),
      z.meta({ description: 'The key (`key_…`).', example: 'key_3kTMd9nPq2ZbXw7vRfGh1' }),
    );

/** A credit limit of a key (credits, ≥ 1). */
const creditLimit = (description: string) => z.optional(z.int().check(z.minimum(1), z.maximum(MAX_INTEGER))).check(z.meta({ description }));

/** `POST /v1/keys/create` body (docs/authentication.md). */
export const CreateKeyRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    name: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(100),
        z.meta({ description: 'What the key is for (1..100 characters).', example: 'CRM sync (read only)' }),
      ),
    scopes: z
      .array(z.enum(SCOPES))
      .check(
        z.minLength(1),
        z.maxLength(SCOPES.length),
        z.meta({ description: 'What the key may do; only scopes the calling key holds.', example: ['campaigns:read', 'results:read'] }),
      ),
    expiresAt: z.optional(timestamp()).check(
      z.meta({
        description: `When the key stops working (ISO 8601), in the future and at most ${MAX_KEY_LIFETIME_TEXT} ahead (the same date and time next year, UTC); none: it does not expire.`,
      }),
    ),
    limits: z.optional(
      z.strictObject({
        maxCreditsPerLaunch: creditLimit('Most credits one launch with the key may charge.'),
        monthlyCredits: creditLimit('Most credits the key may charge per UTC calendar month, net of refunds.'),
      }),
    ),
  }),
);

/** Validated keys/create request. */
export type CreateKeyInput = z.output<typeof CreateKeyRequest>;

/** `POST /v1/keys/create`: a new key of the organization, its secret shown once. */
export const createKeyOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createKey',
  audited: true,
  scope: 'keys:manage',
  path: '/v1/keys/create',
  request: CreateKeyRequest,
});

/** `POST /v1/keys/list` body: a page of the organization's keys. */
export const ListKeysRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest({}, { max: MAX_KEY_PAGE_SIZE, default: DEFAULT_KEY_PAGE_SIZE }),
);

/** Validated keys/list request. */
export type ListKeysInput = z.output<typeof ListKeysRequest>;

/** `POST /v1/keys/list`. */
export const listKeysOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listKeys',
  scope: 'keys:manage',
  path: '/v1/keys/list',
  request: ListKeysRequest,
});

/** `{id}`: the body of keys/revoke and keys/rotate. */
export const KeyIdRequest = /* @__PURE__ */ treeShakable(() => z.strictObject({ id: keyId() }));

/** Validated keys/revoke or keys/rotate request. */
export type KeyIdInput = z.output<typeof KeyIdRequest>;

/** `POST /v1/keys/revoke`. */
export const revokeKeyOperation = /* @__PURE__ */ defineOperation({
  operationId: 'revokeKey',
  audited: true,
  scope: 'keys:manage',
  path: '/v1/keys/revoke',
  request: KeyIdRequest,
});

/** `POST /v1/keys/rotate`. */
export const rotateKeyOperation = /* @__PURE__ */ defineOperation({
  operationId: 'rotateKey',
  audited: true,
  scope: 'keys:manage',
  path: '/v1/keys/rotate',
  request: KeyIdRequest,
});

/** Most days from a usage query's `from` to its `to` (`to` − `from`; a range of up to 93 days, both included; docs/authentication.md "Usage"). */
export const MAX_USAGE_DAYS_APART = 92;

/** How usage rows are grouped. */
export const USAGE_GROUPS = ['day', 'key', 'campaign'] as const;

/** A UTC date, `YYYY-MM-DD`. */
const utcDate = (description: string, example: string) =>
  z.string().check(
    z.regex(/^\d{4}-\d{2}-\d{2}$/),
    z.refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), {
      message: 'Expected a UTC date, YYYY-MM-DD.',
    }),
    z.meta({ description, example }),
  );

/** Days from `from` to `to` (`to` − `from`: 0 for one day). */
export const daysApart = (from: string, to: string): number =>
  (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;

/** `POST /v1/org/usage` body (docs/authentication.md "Usage"). */
export const UsageRequest = /* @__PURE__ */ treeShakable(() =>
  z
    .strictObject({
      from: utcDate('First UTC day of the range (YYYY-MM-DD).', '2026-11-01'),
      to: utcDate(
        `Last UTC day of the range (YYYY-MM-DD), included: on or after \`from\` and at most ${MAX_USAGE_DAYS_APART} days after it.`,
        '2026-11-30',
      ),
      groupBy: z.enum(USAGE_GROUPS).check(z.meta({ description: 'One row per UTC day, per API key or per campaign.', example: 'day' })),
    })
    .check((ctx) => {
      const { from, to } = ctx.value;
      if (typeof from !== 'string' || typeof to !== 'string' || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to))) return;
      const apart = daysApart(from, to);
      if (apart < 0 || apart > MAX_USAGE_DAYS_APART)
        ctx.issues.push({
          code: 'custom',
          input: to,
          path: ['to'],
          message: `Use a day on or after from and at most ${MAX_USAGE_DAYS_APART} days after it (a range of up to ${MAX_USAGE_DAYS_APART + 1} days, both included).`,
        });
    }),
);

/** Validated org/usage request. */
export type UsageInput = z.output<typeof UsageRequest>;

/** `POST /v1/org/usage`: requests and credits per day, key or campaign. */
export const orgUsageOperation = /* @__PURE__ */ defineOperation({
  operationId: 'orgUsage',
  scope: 'usage:read',
  path: '/v1/org/usage',
  request: UsageRequest,
});
