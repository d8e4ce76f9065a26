/**
 * Shared zod building blocks of the spec's "Conventions".
 */
import * as z from 'zod/mini';
import { CAMPAIGN_ID_PATTERN } from './ids';

/** Largest integer in any count or cap (spec "Limits"). */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** A count: integer 0..9007199254740991. */
export const count = () => z.int().check(z.minimum(0), z.maximum(MAX_INTEGER));

/** A fraction: number 0..1. */
export const fraction = () => z.number().check(z.minimum(0), z.maximum(1));

/** A timestamp: ISO 8601 UTC with a trailing Z. */
export const timestamp = () => z.iso.datetime().check(z.meta({ example: '2026-11-22T09:30:00.000Z' }));

/** A campaign ID: `camp_` + 21 base58 characters. */
export const campaignId = () =>
  z.string().check(z.regex(CAMPAIGN_ID_PATTERN, { error: 'must be a campaign ID: "camp_" followed by 21 base58 characters' }), z.meta({ example: 'camp_7Hq2kXv9LmN3pR5sT8wYz' }));
