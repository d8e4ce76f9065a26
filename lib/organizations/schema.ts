/**
 * Schemas of the organization operations (spec "Describe organization"); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { MAX_INTEGER, pageRequestFields, timestamp, treeShakable } from '../schemas';
import { API_KEY_ID_PATTERN } from '../ids';
import { SCOPES } from '../http/scopes';

/** `POST /v1/org/describe` (spec "Describe organization"): no body, an empty body or `{}`. */
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
/** Longest a key may live: `expiresAt` at most this far ahead (days). */
export const MAX_KEY_LIFETIME_DAYS = 366;

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
        description: `When the key stops working (ISO 8601), in the future and at most ${MAX_KEY_LIFETIME_DAYS} days ahead; none: it does not expire.`,
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
  z.strictObject({ ...pageRequestFields(MAX_KEY_PAGE_SIZE, DEFAULT_KEY_PAGE_SIZE, 'limit') }),
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
