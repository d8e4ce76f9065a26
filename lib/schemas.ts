/**
 * Shared zod building blocks of the spec's "Conventions".
 */
import * as z from 'zod';
import { CAMPAIGN_ID_PATTERN } from './ids';

/** Largest integer in any count or cap (spec "Limits"). */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** A count: integer 0..9007199254740991. */
export const count = () => z.int().min(0).max(MAX_INTEGER);

/** A fraction: number 0..1. */
export const fraction = () => z.number().min(0).max(1);

/** A timestamp: ISO 8601 UTC with a trailing Z. */
export const timestamp = () => z.iso.datetime().meta({ example: '2026-11-22T09:30:00.000Z' });

/** A campaign ID: `camp_` + 21 base58 characters. */
export const campaignId = () =>
  z.string().regex(CAMPAIGN_ID_PATTERN, { error: 'must be a campaign ID: "camp_" followed by 21 base58 characters' }).meta({ example: 'camp_7Hq2kXv9LmN3pR5sT8wYz' });
