/**
 * Schemas of the privacy operations' requests (docs/privacy.md): what the
 * handlers validate. An identifier's value is checked here (it must
 * normalize: a phone is E.164) and never appears in an issue line. The
 * response shapes and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { defineOperation } from '../http/operation';
import { listFilters, listRequest, treeShakable } from '../schemas';
import { ERASURE_ID_PATTERN, SUPPRESSION_ID_PATTERN } from '../ids';
import { E164, IDENTIFIER_TYPES, normalizeIdentifier, type IdentifierType } from '../warehouse/identifiers';
import { ERASURE_REGIMES, ERASURE_STATUSES, SUPPRESSION_REASONS } from './store';

/** Most identifiers of one suppressions/create request. */
export const MAX_SUPPRESSION_IDENTIFIERS = 1_000;
/** Most identifiers of one erasure. */
export const MAX_ERASURE_IDENTIFIERS = 20;
/** Longest suppression note (characters). */
export const MAX_SUPPRESSION_NOTE_LENGTH = 500;
/** Longest requestRef (characters). */
export const MAX_REQUEST_REF_LENGTH = 255;
/** Longest identifier value (characters). */
export const MAX_IDENTIFIER_VALUE_LENGTH = 2_048;
/** Largest page of the privacy lists. */
export const MAX_PRIVACY_PAGE_SIZE = 1_000;
/** Page size when `limit` is omitted. */
export const DEFAULT_PRIVACY_PAGE_SIZE = 100;

/** What each identifier type must be to normalize (the issue line; it never quotes the value). */
const HOW_TO_FIX: Record<IdentifierType, string> = {
  email: 'must be a non-empty email address',
  phone:
    'must be an E.164 phone number: "+" then 7 to 15 digits and nothing else (no spaces, dots, dashes or parentheses), e.g. +15551234567',
  linkedin_url: 'must be a non-empty LinkedIn profile URL',
  contact_id: 'must be a non-empty contact ID',
};

/** A suppression ID. */
export const suppressionIdSchema = () =>
  z
    .string()
    .check(
      z.regex(SUPPRESSION_ID_PATTERN, { error: 'must be a suppression ID: "sup_" followed by 21 base58 characters' }),
      z.meta({ example: 'sup_5kP9qR2sT7vW3xY8zA4bC' }),
    );
/** An erasure ID. */
export const erasureIdSchema = () =>
  z
    .string()
    .check(
      z.regex(ERASURE_ID_PATTERN, { error: 'must be an erasure ID: "era_" followed by 21 base58 characters' }),
      z.meta({ example: 'era_8mN3pQ7rS2tV6wX9yZ4aB' }),
    );

/** An identifier type. */
export const IdentifierTypeSchema = /* @__PURE__ */ treeShakable(() =>
  z
    .enum(IDENTIFIER_TYPES)
    .check(z.meta({ id: 'IdentifierType', description: '`email`, `phone` (E.164: `+` and digits only), `linkedin_url` or `contact_id`.' })),
);

/** An identifier as a request carries it: kept only as its hash. */
export const IdentifierSchema = /* @__PURE__ */ treeShakable(() =>
  z
    .strictObject({
      type: IdentifierTypeSchema,
      value: z.string().check(
        z.minLength(1),
        z.maxLength(MAX_IDENTIFIER_VALUE_LENGTH),
        z.meta({
          description:
            'The raw value. Normalized (email trimmed and lower-cased; phone as sent, which must be E.164: `+` and digits only, e.g. `+15551234567`, any other form is refused; LinkedIn URL lower-cased without scheme, `www.`, query, fragment and trailing slash) and kept only as `sha256(type + ":" + normalized)` in hex; never stored, logged or returned.',
          example: 'ann@example.com',
        }),
      ),
    })
    .check((ctx) => {
      if (
        typeof ctx.value.value === 'string' &&
        ctx.value.value.length > 0 &&
        // A phone as sent must already be E.164 (docs/privacy.md "Identifiers"); the lenient
        // normalization is for the phones of stored contacts, whose digests must still match.
        (ctx.value.type === 'phone' ? !E164.test(ctx.value.value) : normalizeIdentifier(ctx.value.type, ctx.value.value) === null)
      ) {
        ctx.issues.push({ code: 'custom', input: ctx.value.type, path: ['value'], message: HOW_TO_FIX[ctx.value.type] });
      }
    })
    .check(z.meta({ id: 'Identifier' })),
);

/** `POST /v1/privacy/suppressions/create` body. */
export const CreateSuppressionsRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    identifiers: z.array(IdentifierSchema).check(z.minLength(1), z.maxLength(MAX_SUPPRESSION_IDENTIFIERS)),
    reason: z.enum(SUPPRESSION_REASONS).check(z.meta({ description: '`opt_out`, `customer_request` or `other`.' })),
    note: z.optional(z.string().check(z.maxLength(MAX_SUPPRESSION_NOTE_LENGTH))).check(
      z.meta({
        description:
          'Free text for your own reference; not stored with the identifiers and never returned. Do not put the identifier in it.',
      }),
    ),
  }),
);
/** Validated suppressions/create request. */
export type CreateSuppressionsInput = z.output<typeof CreateSuppressionsRequest>;

/** `POST /v1/privacy/suppressions/list` body. */
export const ListSuppressionsRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    { filters: listFilters({ type: z.optional(IdentifierTypeSchema), reason: z.optional(z.enum(SUPPRESSION_REASONS)) }) },
    { max: MAX_PRIVACY_PAGE_SIZE, default: DEFAULT_PRIVACY_PAGE_SIZE },
  ),
);
/** Validated suppressions/list request. */
export type ListSuppressionsInput = z.output<typeof ListSuppressionsRequest>;

/** `POST /v1/privacy/suppressions/delete` body. */
export const DeleteSuppressionRequest = /* @__PURE__ */ treeShakable(() => z.strictObject({ id: suppressionIdSchema() }));

/** `POST /v1/privacy/erasures/create` body. */
export const CreateErasureRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    identifiers: z.array(IdentifierSchema).check(z.minLength(1), z.maxLength(MAX_ERASURE_IDENTIFIERS)),
    regime: z.enum(ERASURE_REGIMES).check(z.meta({ description: '`gdpr`, `ccpa` or `other`: the law the request is made under.' })),
    requestRef: z.string().check(
      z.minLength(1),
      z.maxLength(MAX_REQUEST_REF_LENGTH),
      z.meta({
        description:
          "Your reference of the request (e.g. a ticket number; not the person's identifier). The same requestRef answers the same erasure.",
        example: 'DSR-2026-0042',
      }),
    ),
  }),
);
/** Validated erasures/create request. */
export type CreateErasureInput = z.output<typeof CreateErasureRequest>;

/** `POST /v1/privacy/erasures/get` body. */
export const GetErasureRequest = /* @__PURE__ */ treeShakable(() => z.strictObject({ id: erasureIdSchema() }));

/** `POST /v1/privacy/erasures/list` body. */
export const ListErasuresRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    { filters: listFilters({ status: z.optional(z.enum(ERASURE_STATUSES)) }) },
    { max: MAX_PRIVACY_PAGE_SIZE, default: DEFAULT_PRIVACY_PAGE_SIZE },
  ),
);
/** Validated erasures/list request. */
export type ListErasuresInput = z.output<typeof ListErasuresRequest>;

export const createSuppressionsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createSuppressions',
  audited: true,
  scope: 'privacy:manage',
  idempotent: true,
  jsonOnly: true,
  path: '/v1/privacy/suppressions/create',
  request: CreateSuppressionsRequest,
});
export const listSuppressionsOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listSuppressions',
  scope: 'privacy:manage',
  path: '/v1/privacy/suppressions/list',
  request: ListSuppressionsRequest,
});
export const deleteSuppressionOperation = /* @__PURE__ */ defineOperation({
  operationId: 'deleteSuppression',
  audited: true,
  scope: 'privacy:manage',
  idempotent: true,
  path: '/v1/privacy/suppressions/delete',
  request: DeleteSuppressionRequest,
});
export const createErasureOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createErasure',
  audited: true,
  scope: 'privacy:manage',
  idempotent: true,
  jsonOnly: true,
  path: '/v1/privacy/erasures/create',
  request: CreateErasureRequest,
});
export const getErasureOperation = /* @__PURE__ */ defineOperation({
  operationId: 'getErasure',
  scope: 'privacy:manage',
  path: '/v1/privacy/erasures/get',
  request: GetErasureRequest,
});
export const listErasuresOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listErasures',
  scope: 'privacy:manage',
  path: '/v1/privacy/erasures/list',
  request: ListErasuresRequest,
});
