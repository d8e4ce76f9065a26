/**
 * Shared zod building blocks of the spec's "Conventions".
 */
import * as z from 'zod/mini';
import { CAMPAIGN_ID_PATTERN } from './ids';

/**
 * A module-level value (a schema) built by `build`. Called with a `@__PURE__`
 * annotation (`export const X = ` the annotation, then `treeShakable(() => …)`;
 * see lib/campaigns/schema.ts), esbuild leaves the value out of every bundle
 * that never reads it.
 *
 * Why (issue #18, bench "cold init"): a bundler keeps every module-level call
 * it cannot prove free of side effects. A `.check(…)` is a method call, and
 * esbuild honours zod's own `@__NO_SIDE_EFFECTS__` marks only inside zod's
 * files, so every schema of every module a function imported was built at its
 * cold start (CampaignsGet built the create, update and list schemas too). A
 * `@__PURE__` call whose only argument is an arrow function can be dropped
 * whole. Only `build` runs; it must have no effect besides returning the value.
 *
 * @returns what `build` returns (built once, when the module loads, as before).
 */
export function treeShakable<T>(build: () => T): T {
  return build();
}

/** Largest integer in any count or cap (docs/limits.md). */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** A count: integer 0..9007199254740991. */
export const count = () => z.int().check(z.minimum(0), z.maximum(MAX_INTEGER));

/** A fraction: number 0..1. */
export const fraction = () => z.number().check(z.minimum(0), z.maximum(1));

/** A timestamp: ISO 8601 UTC with a trailing Z. */
export const timestamp = () => z.iso.datetime().check(z.meta({ example: '2026-11-22T09:30:00.000Z' }));

/** A campaign ID: `camp_` + 21 base58 characters. */
export const campaignId = () =>
  z
    .string()
    .check(
      z.regex(CAMPAIGN_ID_PATTERN, { error: 'must be a campaign ID: "camp_" followed by 21 base58 characters' }),
      z.meta({ example: 'camp_7Hq2kXv9LmN3pR5sT8wYz' }),
    );

/** The body `{ campaignId }` of the operations on one campaign: get, enrich and quote (docs/openapi.json, docs/launch.md#quote). */
export const CampaignIdRequest = /* @__PURE__ */ treeShakable(() => z.strictObject({ campaignId: campaignId() }));

/** Longest `cursor` a list request takes, in characters (an issued cursor is far shorter; lib/http/cursor.ts). */
export const MAX_CURSOR_LENGTH = 2_048;

/**
 * The paging fields of a list request (docs/pagination.md, docs/launch.md): `cursor`, the opaque `nextCursor` of the previous page (1..2,048
 * characters), and `limit`, the page size, 1..`maxLimit` (the use case
 * applies `defaultLimit` when it is omitted). Spread into the request's
 * object schema.
 *
 * @param sameAs - what else the next page's request must repeat, e.g. `campaignId, filters and limit`.
 */
export const pageRequestFields = (maxLimit: number, defaultLimit: number, sameAs?: string) => ({
  cursor: z
    .optional(z.string().check(z.minLength(1), z.maxLength(MAX_CURSOR_LENGTH)))
    .check(z.meta({ description: `Opaque \`nextCursor\` of the previous page, unchanged${sameAs ? `, with the same ${sameAs}` : ''}.` })),
  limit: z.optional(z.int().check(z.minimum(1), z.maximum(maxLimit))).check(z.meta({ description: `Page size, default ${defaultLimit}.` })),
});

/** The page sizes of a list operation (docs/pagination.md). */
export interface PageSizes {
  /** Largest `limit`. */
  max: number;
  /** Page size when `limit` is omitted. */
  default: number;
}

/** `a`, `a and b`, `a, b and c`. */
const andList = (words: readonly string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

/**
 * The body schema of a list operation (docs/pagination.md): its own fields
 * (e.g. `campaignId`, `filters` built by {@link listFilters}), then
 * `cursor` and `limit` ({@link pageRequestFields}). A cursor is bound to
 * every other field and the limit (lib/http/cursor.ts), and the cursor's
 * description says so, naming them. Strict: an unknown field is refused.
 *
 * @param fields - the operation's own fields, in the document's order.
 * @param sizes - its page sizes.
 */
export const listRequest = <const Shape extends Record<string, z.ZodMiniType>>(fields: Shape, sizes: PageSizes) =>
  z.strictObject({ ...fields, ...pageRequestFields(sizes.max, sizes.default, andList([...Object.keys(fields), 'limit'])) });

/** The optional `filters` object of a list request: strict, each filter as given (optional ones narrow the list). */
export const listFilters = <const Shape extends Record<string, z.ZodMiniType>>(filters: Shape) => z.optional(z.strictObject(filters));
