/**
 * A person's identifiers as the privacy operations take them, and the only
 * form the service keeps of them: `sha256(type + ":" + normalized)` in hex
 * (docs/privacy.md "Identifiers and what is stored"). The raw value lives only in the request
 * being handled; no log line, item, object, event or error message holds it.
 */
import { createHash } from 'node:crypto';

/** The identifier types, in the order documents list them. */
export const IDENTIFIER_TYPES = ['email', 'phone', 'linkedin_url', 'contact_id'] as const;
/** An identifier type. */
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

/** An identifier as a request carries it (raw: never stored, logged or echoed). */
export interface RawIdentifier {
  type: IdentifierType;
  value: string;
}

/** An identifier as stored and answered: its type and hash. */
export interface HashedIdentifier {
  type: IdentifierType;
  /** 64 lower-case hex characters: SHA-256 of `type:normalized`. */
  hash: string;
}

/** A plain E.164 number: `+`, a non-zero digit, then 6 to 14 digits. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * The normalized form of an identifier (docs/privacy.md "Identifiers"):
 * - `email`: trimmed, lower-cased;
 * - `phone`: E.164 (`+` and digits) after removing spaces, dots, dashes and
 *   parentheses; anything else is refused;
 * - `linkedin_url`: lower-cased; scheme, `www.`, query, fragment and trailing
 *   slashes dropped (`https://www.LinkedIn.com/in/Ann/?x=1` → `linkedin.com/in/ann`);
 * - `contact_id`: trimmed, as it is (IDs are case-sensitive).
 * @returns the normalized value, or null when it cannot be one of its type
 *   (an empty value, a phone that is not E.164). The caller words the refusal:
 *   never with the value.
 */
export function normalizeIdentifier(type: IdentifierType, value: string): string | null {
  switch (type) {
    case 'email': {
      const email = value.trim().toLowerCase();
      return email.length > 0 ? email : null;
    }
    case 'phone': {
      const phone = value.trim().replace(/[\s().-]/g, '');
      return E164.test(phone) ? phone : null;
    }
    case 'linkedin_url': {
      const url = value
        .trim()
        .toLowerCase()
        .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
        .replace(/^www\./, '')
        .replace(/[?#].*$/, '')
        .replace(/\/+$/, '');
      return url.length > 0 ? url : null;
    }
    case 'contact_id': {
      const id = value.trim();
      return id.length > 0 ? id : null;
    }
  }
}

/** SHA-256 hex of `type:normalized`: the only form of an identifier the service keeps. */
export const identifierHash = (type: IdentifierType, normalized: string): string =>
  createHash('sha256').update(`${type}:${normalized}`, 'utf8').digest('hex');

/**
 * Hashes a request's identifier.
 * @returns its type and hash, or null when the value cannot be normalized (see {@link normalizeIdentifier}).
 */
export function hashIdentifier(identifier: RawIdentifier): HashedIdentifier | null {
  const normalized = normalizeIdentifier(identifier.type, identifier.value);
  return normalized === null ? null : { type: identifier.type, hash: identifierHash(identifier.type, normalized) };
}

/** What the service knows of a delivered contact's identifiers (a warehouse contact, or the cells of a stored result row). */
export interface ContactIdentifiers {
  contactId: string | null;
  email: string | null;
  mobilePhone: string | null;
  directPhone: string | null;
  linkedinUrl: string | null;
}

/**
 * The hashes a contact can be suppressed by: one per identifier it has that
 * normalizes (a phone that is not E.164 matches no suppression).
 */
export function contactHashes(contact: ContactIdentifiers): string[] {
  const hashes: string[] = [];
  const add = (type: IdentifierType, value: string | null) => {
    if (value === null || value === '') return;
    const normalized = normalizeIdentifier(type, value);
    if (normalized !== null) hashes.push(identifierHash(type, normalized));
  };
  add('contact_id', contact.contactId);
  add('email', contact.email);
  add('phone', contact.mobilePhone);
  add('phone', contact.directPhone);
  add('linkedin_url', contact.linkedinUrl);
  return hashes;
}
