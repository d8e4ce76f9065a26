/**
 * Identifiers (decisions §6): a prefix plus characters of the spec's base58
 * alphabet, drawn from a cryptographic source by nanoid.
 */
import { customAlphabet } from 'nanoid';
import { createHash } from 'node:crypto';

/** The alphabet of the spec's campaign ID convention (base58, no 0, O, I, l). */
export const ID_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const id21 = customAlphabet(ID_ALPHABET, 21);
const id40 = customAlphabet(ID_ALPHABET, 40);

/** Campaign ID pattern: `camp_` + 21 base58 characters. */
export const CAMPAIGN_ID_PATTERN = new RegExp(`^camp_[${ID_ALPHABET}]{21}$`);
/** Organization ID pattern: `org_` + 21 base58 characters. */
export const ORGANIZATION_ID_PATTERN = new RegExp(`^org_[${ID_ALPHABET}]{21}$`);
/** API key pattern: `cek_` + 40 base58 characters. */
export const API_KEY_PATTERN = new RegExp(`^cek_[${ID_ALPHABET}]{40}$`);

/** A new campaign ID, e.g. `camp_3kTMd9nPq2ZbXw7vRfGh1`. */
export const newCampaignId = (): string => `camp_${id21()}`;
/** A new organization ID, e.g. `org_…`. */
export const newOrganizationId = (): string => `org_${id21()}`;
/** A new API key, e.g. `cek_…` (40 characters after the prefix). Only its hash is ever stored. */
export const newApiKey = (): string => `cek_${id40()}`;
/** A new enrichment attempt ID (21 base58 characters). */
export const newAttemptId = (): string => `att_${id21()}`;

/** SHA-256 hex digest of an API key: the only form in which keys are stored. */
export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey, 'utf8').digest('hex');
