/**
 * A person's identifiers as the privacy operations take them, and the only
 * form the service keeps of them: `sha256(type + ":" + normalized)` in hex
 * (docs/privacy.md "Identifiers and what is stored"). The raw value lives only in the request
 * being handled; no log line, item, object, event or error message holds it.
 *
 * It sits with the warehouse, the owner of contacts, because every floor that
 * holds a contact hashes it the same way: the result parts store each
 * contact's digests (lib/results/parts.ts), the warehouse keeps an index by
 * them, and privacy matches suppressions and erasures against them.
 */
import { hash } from 'node:crypto';

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

/**
 * A plain E.164 number: `+`, a non-zero digit, then 6 to 14 digits. What a stored phone must be after
 * {@link normalizeIdentifier}, and what a privacy request's phone must be as sent (docs/privacy.md "Identifiers").
 */
export const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * The normalized form of an identifier (docs/privacy.md "Identifiers"):
 * - `email`: trimmed, lower-cased;
 * - `phone`: E.164 (`+` and digits) after removing spaces, dots, dashes and
 *   parentheses (a stored contact's phone; a privacy request's must already be
 *   {@link E164}, lib/privacy/schema.ts); anything else is refused;
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

/**
 * SHA-256 of `type:normalized` as 32 bytes: what a result part stores per identifier (docs/data-model.md "Result parts").
 * @returns a 32-byte Buffer, possibly a slice of Node's shared pool (`Buffer.allocUnsafe`): copy it, never use its `.buffer`.
 */
// One-shot `hash` (no Hash object per digest: half the CPU of createHash().update().digest()), its 32 bytes taken as a
// 'binary' (latin1) string (one char per byte, so the bytes are the same) and written into a pooled Buffer: Node's 'buffer' output
// allocates an ArrayBuffer of its own per digest, which cost about twice the hash itself (0.5 against 1.2 µs a digest,
// best of 15 runs of 100,000 identifiers, Node 24), and the workflow hashes four identifiers per stored contact (bench
// `scale`, the workflow's profile).
export function identifierDigest(type: IdentifierType, normalized: string): Buffer {
  const digest = Buffer.allocUnsafe(DIGEST_BYTES);
  digest.write(hash('sha256', hashedText(type, normalized), 'binary'), 0, DIGEST_BYTES, 'latin1');
  return digest;
}

/** What is hashed of an identifier: `type:normalized`. */
const hashedText = (type: IdentifierType, normalized: string) => `${type}:${normalized}`;

/** SHA-256 hex of `type:normalized`: the only form of an identifier the service keeps. */
export const identifierHash = (type: IdentifierType, normalized: string): string => hash('sha256', hashedText(type, normalized), 'hex');

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

/** Which field of a contact holds an identifier of which type, in the order its hashes are listed. */
const CONTACT_IDENTIFIER_FIELDS: readonly (readonly [keyof ContactIdentifiers, IdentifierType])[] = [
  ['contactId', 'contact_id'],
  ['email', 'email'],
  ['mobilePhone', 'phone'],
  ['directPhone', 'phone'],
  ['linkedinUrl', 'linkedin_url'],
];

/** Bytes of one identifier digest (SHA-256). */
export const DIGEST_BYTES = 32;

/** Bytes a contact's digests take at most: one {@link DIGEST_BYTES} digest per identifying field. */
export const CONTACT_DIGESTS_MAX_BYTES = CONTACT_IDENTIFIER_FIELDS.length * DIGEST_BYTES;

/**
 * Writes the digests (raw SHA-256, {@link DIGEST_BYTES} each) a contact can
 * be suppressed or erased by into `target` at `at`, back to back: one per
 * identifier it has that normalizes (a phone that is not E.164 matches no
 * suppression), in {@link CONTACT_IDENTIFIER_FIELDS} order. The one hashing of
 * a contact: a result part's writer hashes straight into the part
 * (lib/results/parts.ts), the suppression check into one buffer per contact
 * (lib/results/deliverable.ts).
 * @param target - at least {@link CONTACT_DIGESTS_MAX_BYTES} bytes from `at`.
 * @returns how many digests were written.
 */
// Each digest is the one-shot `hash`'s 'binary' (latin1) string written in place: no Buffer per digest.
// A pooled 32-byte Buffer per digest (`Buffer.allocUnsafe` and `write(…, 'latin1')`) cost as much as the hashing
// itself: 24.5 against 12 ms of CPU for the 28,000 identifiers of 1,000 bench accounts (Node 24; session 54).
export function writeContactDigests(contact: ContactIdentifiers, target: Buffer, at: number): number {
  let count = 0;
  for (const [field, type] of CONTACT_IDENTIFIER_FIELDS) {
    const value = contact[field];
    if (typeof value !== 'string' || value === '') continue;
    const normalized = normalizeIdentifier(type, value);
    if (normalized === null) continue;
    target.write(hash('sha256', hashedText(type, normalized), 'binary'), at + count * DIGEST_BYTES, DIGEST_BYTES, 'latin1');
    count++;
  }
  return count;
}

/**
 * The digests of {@link writeContactDigests}, one Buffer each (views of one
 * pooled buffer: copy them, never use their `.buffer`).
 */
export function contactDigests(contact: ContactIdentifiers): Buffer[] {
  const bytes = Buffer.allocUnsafe(CONTACT_DIGESTS_MAX_BYTES);
  const count = writeContactDigests(contact, bytes, 0);
  const digests: Buffer[] = [];
  for (let at = 0; at < count * DIGEST_BYTES; at += DIGEST_BYTES) digests.push(bytes.subarray(at, at + DIGEST_BYTES));
  return digests;
}

/** {@link contactDigests} in hex: the hashes a contact can be suppressed by. */
export const contactHashes = (contact: ContactIdentifiers): string[] => contactDigests(contact).map((digest) => digest.toString('hex'));

/** Bits of a digest's head a {@link DigestSet} filters by: 2^22 bits (512 KB), so 10,000 entries fill 0.24 % of it. */
const FILTER_BITS = 22;

/**
 * A set of identifier hashes (full, or their first bytes: all of one length)
 * matched against digests stored as bytes, without hashing or allocating per
 * lookup: a bitmap of their first 22 bits answers almost every miss with
 * three byte reads, and only a bitmap hit looks the digest up in a table
 * keyed by its first 4 bytes read as a number, confirmed by comparing the
 * rest byte by byte (no hex string per digest). What result parts' stored
 * digests are checked against (suppression: lib/privacy/deliverable.ts;
 * erasure: lib/privacy/erasure.ts).
 */
export class DigestSet {
  private readonly filter = new Uint8Array(1 << (FILTER_BITS - 3));
  /** The entries' bytes, back to back, {@link length} each, in the order added. */
  private readonly stored: Buffer;
  /** Open addressing by an entry's first 4 bytes: entry index + 1 (0: an empty slot); a power of two, at most half full. */
  private readonly slots: Int32Array;
  private readonly count: number;
  /** Bytes compared per digest: the length of the given hashes. */
  private readonly length: number;

  /**
   * @param hashes - hex, all of the same even length (8 to 64 characters); empty: matches nothing.
   * @throws Error when the lengths differ or are outside 8..64 hex characters.
   */
  constructor(hashes: Iterable<string>) {
    const all = [...hashes];
    let length = 0;
    for (const hash of all) {
      const bytes = hash.length / 2;
      if (length === 0) length = bytes;
      if (bytes !== length || bytes < 4 || bytes > DIGEST_BYTES || !Number.isInteger(bytes) || !/^[0-9a-fA-F]*$/.test(hash))
        throw new Error('DigestSet: hashes must be hex of one length between 8 and 64 characters');
    }
    this.length = length;
    this.stored = Buffer.alloc(all.length * length);
    let size = 2;
    while (size < all.length * 2) size *= 2;
    this.slots = new Int32Array(size);
    let count = 0;
    for (const hash of all) {
      const at = count * length;
      this.stored.write(hash, at, length, 'hex');
      // A hash given twice is kept once.
      if (this.find(this.stored, at) >= 0) continue;
      let slot = this.stored.readInt32BE(at) & (size - 1);
      while (this.slots[slot] !== 0) slot = (slot + 1) & (size - 1);
      this.slots[slot] = ++count;
      const head = ((this.stored[at]! << 16) | (this.stored[at + 1]! << 8) | this.stored[at + 2]!) >>> (24 - FILTER_BITS);
      this.filter[head >>> 3]! |= 1 << (head & 7);
    }
    this.count = count;
  }

  /** How many hashes the set holds. */
  get size(): number {
    return this.count;
  }

  /** Whether the digest at `bytes[at, at + 32)` matches an entry. */
  hasDigest(bytes: Buffer, at: number): boolean {
    const head = ((bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!) >>> (24 - FILTER_BITS);
    return (this.filter[head >>> 3]! & (1 << (head & 7))) !== 0 && this.find(bytes, at) >= 0;
  }

  /** Whether any digest of `bytes[start, end)` (digests of {@link DIGEST_BYTES} back to back) matches an entry. */
  hasAny(bytes: Buffer, start: number, end: number): boolean {
    if (this.count === 0) return false;
    // The bitmap test inlined (called for every delivered contact of an export: a million a file).
    const filter = this.filter;
    for (let at = start; at + DIGEST_BYTES <= end; at += DIGEST_BYTES) {
      const head = ((bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!) >>> (24 - FILTER_BITS);
      if ((filter[head >>> 3]! & (1 << (head & 7))) !== 0 && this.find(bytes, at) >= 0) return true;
    }
    return false;
  }

  /** The index of the entry equal to `bytes[at, at + length)`, or -1 (its first 4 bytes pick the slot; the rest compared). */
  private find(bytes: Buffer, at: number): number {
    const key = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]! | 0;
    const mask = this.slots.length - 1;
    const stored = this.stored;
    const length = this.length;
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) return -1;
      const from = entry * length;
      if (((stored[from]! << 24) | (stored[from + 1]! << 16) | (stored[from + 2]! << 8) | stored[from + 3]! | 0) !== key) continue;
      let same = true;
      for (let i = 4; i < length; i++)
        if (stored[from + i] !== bytes[at + i]) {
          same = false;
          break;
        }
      if (same) return entry;
    }
  }
}
