/**
 * What an organization knows of individual accounts: when it last completed
 * an enrichment of each (recency exclusion) and which are CRM targets (CRM
 * exclusion). docs/data-model.md "Recency and CRM targets" states the layout,
 * the split rule and its proof of exactness, the sizes and the costs.
 *
 * Linear hashing over small items ("buckets"): each account has one entry,
 * in the bucket its hash falls in (`ORG#<org>#HBUCKET#<bucket>` / `HISTORY`,
 * lib/db/table.ts `keys.accountHistoryBucket`). The organization item carries
 * the split state, `historyBuckets` (N, the number of buckets, default 1),
 * which a launch and a quote read anyway, and `historyEntries` (the entry
 * count that drives the splits). Buckets split one at a time, in order, as
 * the average load passes {@link HISTORY_BUCKET_LOAD} entries, so a bucket
 * stays under about 1 KB at any organization size.
 *
 * - A launch or a quote reads the buckets of its own account IDs (strongly
 *   consistent BatchGetItem): at most one item of at most a few KB per
 *   requested account, whatever the organization's size.
 * - A completion rewrites the buckets its accounts fall in (read, merge,
 *   conditional put on the bucket's version, redone on a lost race).
 * - A bucket's item holds its `depth` (how many low hash bits address it):
 *   a reader or a writer whose N is older than a split finds the deeper
 *   depth on the item and follows the accounts that moved, so N on the
 *   organization item is only a hint and every split is exact while in
 *   flight (the proof in docs/data-model.md).
 *
 * Entry: the first 52 bits of the SHA-256 of the account ID (its low 32
 * bits address the bucket) and a value, epoch milliseconds × 2 + 1 when a
 * CRM target (0 ms: no enrichment kept). The item stores the address bits
 * its depth fixes once, each entry's other 52 − depth bits packed, and each
 * value once per group of entries sharing it ({@link encodeBucket}): about
 * 5 bytes an account.
 * Enrichment times older than {@link HISTORY_RETENTION_DAYS} count as absent
 * and are dropped when their bucket is next rewritten.
 */
import { hash } from 'node:crypto';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import pMap from 'p-map';
import type { PendingRecency } from './recency-pending';
import type { AccountListStore } from '../account-lists/account-list';
import { batchPut } from '../db/batch';
import { batchGetRaw } from '../db/raw-read';
import { putIf } from '../db/conditional';
import * as keys from '../db/keys';

/** Facts about one account for one organization. */
export interface AccountFacts {
  /** ISO time the organization's last enrichment of the account completed (when inside the window read). */
  lastEnrichedAt?: string;
  crmTarget: boolean;
}

/** Options of {@link AccountHistoryStore.getFacts}. */
export interface FactsOptions {
  /** Return enrichment times too (default true); without it only CRM targets are returned. */
  recency?: boolean;
  /**
   * Epoch milliseconds: an enrichment time is returned only when strictly
   * after it (the recency window's start, lib/enrichment/evaluate.ts).
   * Default: any time.
   */
  enrichedAfter?: number;
  /**
   * Completions whose entries are not written yet (lib/history/recency-pending.ts,
   * read from the organization item BEFORE this call): their accounts count as
   * enriched at the campaign's `completedAt` (recency starts when a campaign
   * reaches `enriched`, docs/data-model.md). Only those after `enrichedAfter` are read.
   */
  pending?: readonly PendingRecency[];
  /**
   * The organization item's `historyBuckets` as the caller read it (launch and
   * quote read the item anyway; `OrganizationRecord.historyBuckets`). Any
   * value read before this call is exact (an older one costs a second round
   * trip for the accounts of the buckets split since). Absent: the store
   * reads the organization item itself (one GetItem).
   */
  buckets?: number;
}

/** One change to an account's history ({@link AccountHistoryStore.record}). */
export interface HistoryChange {
  accountId: string;
  /** ISO 8601: the account was enriched then (kept only when later than the time stored). */
  enrichedAt?: string;
  /** true: the account becomes a CRM target. */
  crmTarget?: boolean;
}

/** Data access for account enrichment times and CRM targets. */
export interface AccountHistoryStore {
  /**
   * Facts for the given accounts (accounts with none are absent): one
   * strongly consistent read of each bucket the IDs fall in, nothing else.
   */
  getFacts(organizationId: string, accountIds: readonly string[], options?: FactsOptions): Promise<Map<string, AccountFacts>>;
  /** Adds CRM targets; returns how many distinct IDs were written. Idempotent. */
  addCrmTargets(organizationId: string, accountIds: readonly string[]): Promise<number>;
  /**
   * Records that the accounts were enriched at `enrichedAt`: each account's
   * time moves forward only, so a rerun or an older time changes nothing.
   */
  recordEnrichment(organizationId: string, accountIds: readonly string[], enrichedAt: string): Promise<void>;
  /**
   * Records a completed campaign: every account of its eligible list (object
   * `eligibleObjectKey`) enriched at `completedAt`. Idempotent.
   */
  recordCompletion(organizationId: string, campaignId: string, completedAt: string, eligibleObjectKey: string): Promise<void>;
  /**
   * Applies many changes at once (migration, seeding), each bucket rewritten
   * once (plus the splits the growth needs). Idempotent; times move forward only.
   * @returns buckets rewritten.
   */
  record(organizationId: string, changes: Iterable<HistoryChange>): Promise<number>;
  /**
   * The organization's split state as stored on its item: `buckets` (N) and
   * `entries` (the count that drives the splits; a completion that died
   * between its bucket writes and its count update leaves it low).
   */
  state(organizationId: string): Promise<HistoryState>;
  /**
   * Rewrites one bucket stored in an older encoding (formats 1–3) as the
   * current one ({@link HISTORY_FORMAT}), entries unchanged (conditional on its version; a lost race
   * re-reads it). Leaves alone a bucket already current, absent, or a split's
   * copy whose split has not committed (no reader reaches it; the split
   * writes it again, current). For the migrations `007-history-format-3` and `009-history-format-4`.
   * @returns whether it rewrote the bucket.
   */
  reencode(organizationId: string, bucket: number): Promise<boolean>;
}

/** The split state kept on the organization item. */
export interface HistoryState {
  /** N: buckets in use, 0..N-1 (at least 1). */
  buckets: number;
  /** Entries counted so far (accounts with an entry). */
  entries: number;
  /**
   * The largest N any growth has announced before its first split (`historyGrowTo`; at least `buckets`): buckets
   * below it may exist, or be being copied, beyond N. A writer that routed by an older N compares it after its writes
   * (docs/data-model.md "Recency and CRM targets").
   */
  growTo: number;
}

/**
 * Average entries per bucket past which the next bucket splits (linear
 * hashing's load bound). A bucket not yet split in the current round holds
 * up to twice it (~130, ~160 at the Poisson tail of thousands of buckets,
 * plus a completion's new entries); at 52 − depth bits an entry (~4.9 bytes
 * at depth 13) its item stays under 1 KB, so rewriting it costs one write
 * unit. Chosen by laying out histories at every position of a round
 * (docs/data-model.md "Recency and CRM targets", "Sizes").
 */
export const HISTORY_BUCKET_LOAD = 65;

/**
 * The attributes of a bucket item the launch's and the quote's evaluation read (no `version`: they write nothing);
 * the writes read `version` too. bench/figures/history.ts reads the same to time the read bare.
 */
export const EVALUATION_BUCKET_ATTRIBUTES: readonly string[] = ['entries', 'depth'];

/**
 * Bytes of a bucket's item beside its packed keys, as {@link roomBefore} counts them: key and attribute names and values
 * (~100), the entries' header and ~10 value groups (~60).
 */
const ITEM_BYTES_BESIDE_KEYS = 160;
/** Bytes of one write unit. */
const WRITE_UNIT_BYTES = 1024;

/** Entries a bucket of `depth` holds in one write unit: 52 − depth bits each beside {@link ITEM_BYTES_BESIDE_KEYS}. */
const entriesPerUnit = (depth: number): number =>
  Math.floor(((WRITE_UNIT_BYTES - ITEM_BYTES_BESIDE_KEYS) * 8) / (FINGERPRINT_BITS - Math.min(32, depth)));

/**
 * The number of buckets to split to before writing `incoming` accounts, every one counted as new, into a history of
 * `entries` in `buckets` at load `load`: an average of at most twice the load after the write (the load itself when the
 * write is at least as large as the history, a first campaign or a seeding: splitting buckets before they are filled
 * costs tiny writes, not rewrites of full ones); then, while a bucket not yet split this round (total ÷ 2^level entries,
 * plus three standard deviations of its Poisson spread) would not fit one write unit at its depth
 * ({@link entriesPerUnit}), the round completed first (2^(level + 1)). At least `buckets` (N is never lowered).
 * docs/data-model.md "Recency and CRM targets" (the split rule, "Sizes").
 */
function roomBefore(buckets: number, entries: number, incoming: number, load: number): number {
  const total = entries + incoming;
  let target = Math.max(buckets, Math.ceil(total / (incoming >= entries ? load : 2 * load)));
  for (let level = 31 - Math.clz32(target); level < 32; level++) {
    const fullest = total / 2 ** level;
    if (fullest + 3 * Math.sqrt(fullest) <= entriesPerUnit(level)) break;
    target = Math.max(target, 2 ** (level + 1));
  }
  return target;
}

/** Days an enrichment time is kept: the longest recency window (MAX_EXCLUDE_DAYS in lib/campaigns/schema.ts). */
export const HISTORY_RETENTION_DAYS = 3650;

const RETENTION_MS = HISTORY_RETENTION_DAYS * 86_400_000;

/** Bucket writes (and splits) in flight at once. */
const WRITE_CONCURRENCY = 32;

/**
 * Bits of an account's hash the history keeps (its fingerprint): the 32 address bits and the 20 after them. Two accounts
 * whose first 52 bits agree read as one; docs/data-model.md "Recency and CRM targets" states the chance per lookup.
 */
const FINGERPRINT_BITS = 52;
/** Bytes of a fingerprint as a latin1 string: the hash's first 7 bytes, the high 4 bits of the last one cleared. */
const FINGERPRINT_BYTES = Math.ceil(FINGERPRINT_BITS / 8);
/** The bits of a fingerprint's last byte that belong to it (the low 4 of byte 6). */
const LAST_BYTE_MASK = 0xff >>> (8 * FINGERPRINT_BYTES - FINGERPRINT_BITS);
/** Bits of the fingerprint after its 32-bit address (bytes 4, 5 and the low half of 6). */
const TAIL_BITS = FINGERPRINT_BITS - 32;
/** Bytes of an account's hash stored by formats 1–3 (read only: each reads as its first {@link FINGERPRINT_BITS} bits). */
const LEGACY_HASH_BYTES = 8;
/**
 * Encoding version (first byte of `entries`), owned here: 4 (each entry's fingerprint bits past the bucket's address bits,
 * bit-packed, issue #43's second compaction), 3 (8-byte hashes less the bytes the depth implies, each value group sorted:
 * binary search), 2 (format 3's layout unsorted) or 1 (before issue #43). Formats 1–3 are read by a scan and written as 4
 * when next rewritten, or by the migration `009-history-format-4` (lib/migrations/history-format.ts).
 */
export const HISTORY_FORMAT = 4;
const SORTED_FORMAT = 3;
const UNSORTED_FORMAT = 2;
const LEGACY_FORMAT = 1;
/** Bytes of a format-1 value (epoch ms × 2 + CRM flag). */
const LEGACY_VALUE_BYTES = 6;

/**
 * The SHA-256 of an account ID (UTF-8) as a latin1 string of 32 characters, one a byte: the one hash the history takes
 * of an ID, whose first bytes give its address ({@link addressOf}) and fingerprint ({@link fingerprintOf}). A string, not
 * a Buffer: ~50 bytes of heap against ~200 (a 1,000-account evaluation hashes every ID).
 */
const digestOf = (accountId: string): string =>
  // The one-shot digest: ~2.5 × faster than createHash().update().digest().
  hash('sha256', accountId, 'binary'); // 'binary': latin1, one character a byte

/**
 * An account's fingerprint: the first 52 bits of SHA-256 of its ID (UTF-8), as a latin1 string of 7 bytes (the last
 * one's high 4 bits cleared; a Map key). Its low 32 bits ({@link addressOf}) pick the bucket.
 */
export function fingerprintOf(accountId: string): string {
  return fingerprintOfHash(digestOf(accountId));
}

/** The {@link TAIL_BITS} bits of a fingerprint (or digest) after its 32-bit address, as an integer: bytes 4, 5 and the low half of 6, little-endian. */
export const tailOf = (fingerprint: string): number =>
  fingerprint.charCodeAt(4) | (fingerprint.charCodeAt(5) << 8) | ((fingerprint.charCodeAt(6) & LAST_BYTE_MASK) << 16);

/**
 * The fingerprint of a hash as a latin1 string of at least 7 bytes (an ID's digest, or a hash stored whole by formats
 * 1–3, 8 bytes): its first {@link FINGERPRINT_BITS} bits.
 */
function fingerprintOfHash(hash: string): string {
  return hash.slice(0, FINGERPRINT_BYTES - 1) + String.fromCharCode(hash.charCodeAt(FINGERPRINT_BYTES - 1) & LAST_BYTE_MASK);
}

/** The 32-bit hash (unsigned) that addresses a fingerprint's bucket (or a digest's, {@link digestOf}): its first 4 bytes, little-endian. */
export function addressOf(fingerprint: string): number {
  return (
    (fingerprint.charCodeAt(0) |
      (fingerprint.charCodeAt(1) << 8) |
      (fingerprint.charCodeAt(2) << 16) |
      (fingerprint.charCodeAt(3) << 24)) >>>
    0
  );
}

/** The keys of an organization's buckets 0..buckets−1 (every item of its history; {@link AccountHistoryStore.state} gives N). */
export function bucketKeys(organizationId: string, buckets: number): { pk: string; sk: string }[] {
  return Array.from({ length: buckets }, (_, bucket) => keys.accountHistoryBucket(organizationId, bucket));
}

/**
 * An item's size as DynamoDB bills and stores it, in bytes: attribute names
 * and values (strings UTF-8, binary raw, numbers ~1 byte per 2 digits + 1),
 * plus `overhead` (100 for storage; 0 for read and write units).
 */
export function itemBytes(item: Record<string, unknown>, overhead = 0): number {
  let bytes = overhead;
  for (const [name, value] of Object.entries(item)) {
    bytes += Buffer.byteLength(name);
    if (typeof value === 'string') bytes += Buffer.byteLength(value);
    else if (value instanceof Uint8Array) bytes += value.byteLength;
    else if (typeof value === 'number') bytes += Math.ceil(String(Math.abs(value)).replace(/^0\.?0*|\./g, '').length / 2) + 1;
    else bytes += 1;
  }
  return bytes;
}

/** `address` modulo 2^depth. */
const low = (address: number, depth: number): number => address % 2 ** depth;

/**
 * The bucket of an address when there are `buckets` (N) buckets, and the
 * depth (address bits) that bucket is addressed by: level L = floor(log2 N),
 * split pointer p = N − 2^L; bucket = address mod 2^L, or address mod 2^(L+1)
 * when that is below p (already split this round).
 */
export function bucketOf(address: number, buckets: number): { bucket: number; depth: number } {
  const level = 31 - Math.clz32(Math.max(1, buckets));
  const bucket = low(address, level);
  return bucket < buckets - 2 ** level ? { bucket: low(address, level + 1), depth: level + 1 } : { bucket, depth: level };
}

/**
 * The next bucket on an address's path from `bucket`, whose item shows `depth`, or undefined when the address
 * belongs there (address mod 2^depth = bucket). One split at a time: `bucket` + 2^p for the lowest address bit p
 * where the address leaves `bucket`, the bucket `bucket`'s own split at level p made (it exists, committed, since
 * `bucket`'s depth is past p), at depth p + 1. Jumping straight to address mod 2^depth instead can land on a bucket
 * whose split has not been made yet (no item, or a split's provisional copy): a write there is lost to every reader
 * (docs/data-model.md "Recency and CRM targets").
 * @throws Error when the address cannot have been routed to `bucket` (its low bits differ from `bucket`'s).
 */
export function nextBucket(address: number, bucket: number, depth: number): { bucket: number; depth: number } | undefined {
  const home = low(address, depth);
  if (home === bucket) return undefined;
  const diff = home - bucket;
  if (diff < 0) throw new Error(`History address ${address} cannot be in bucket ${bucket} (depth ${depth})`);
  let bit = 0;
  while (Math.floor(diff / 2 ** bit) % 2 === 0) bit++;
  if (low(bucket, bit) !== bucket) throw new Error(`History address ${address} cannot be in bucket ${bucket} (depth ${depth})`);
  return { bucket: bucket + 2 ** bit, depth: bit + 1 };
}

/** One bucket as read: its depth, version (undefined: no item), stored bytes and entries (fingerprint → value, decoded on first use). */
interface BucketRead {
  depth: number;
  version: number | undefined;
  bytes: Uint8Array | undefined;
  readonly entries: Map<string, number>;
}

/** Epoch ms of a value (0: none). */
const msOfValue = (value: number): number => Math.floor(value / 2);
/** Whether a value marks a CRM target. */
const crmOfValue = (value: number): boolean => value % 2 === 1;
const valueOf = (ms: number, crm: boolean): number => ms * 2 + (crm ? 1 : 0);
/** Two values of one account joined: the later time, the CRM flag of either (`known` absent: `value`). */
const joinValues = (known: number | undefined, value: number): number =>
  known === undefined ? value : valueOf(Math.max(msOfValue(known), msOfValue(value)), crmOfValue(known) || crmOfValue(value));

/** Joins `changes` into `entries` (in place). @returns whether any entry changed. */
function joinInto(entries: Map<string, number>, changes: ReadonlyMap<string, number>): boolean {
  let changed = false;
  for (const [fingerprint, value] of changes) {
    const known = entries.get(fingerprint);
    const next = joinValues(known, value);
    if (next !== known) {
      entries.set(fingerprint, next);
      changed = true;
    }
  }
  return changed;
}

/**
 * The entries that route to `bucket` at `depth`: a split writes only the new bucket, so the bucket it split keeps the
 * moved entries (stale: no reader looks them up there) until its next rewrite, which drops them.
 */
function ownEntries(entries: ReadonlyMap<string, number>, bucket: number, depth: number): Map<string, number> {
  const own = new Map<string, number>();
  for (const [fingerprint, value] of entries) if (low(addressOf(fingerprint), depth) === bucket) own.set(fingerprint, value);
  return own;
}

/** Appends `value` (a non-negative integer below 2^53) as an unsigned LEB128 varint (also what formats 1–3 used). */
export function pushVarint(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** Reads an unsigned LEB128 varint at `at.offset`, advancing it. */
function readVarint(buffer: Uint8Array, at: { offset: number }): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = buffer[at.offset++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 0x80;
  }
}

/** 2^n for n < 53. */
const pow2 = (n: number): number => 2 ** n;
/** Bits read or written at once by the bit stream (so a value and the bits before it in its byte stay below 2^53). */
const CHUNK_BITS = 26;

/**
 * An entry's key in a bucket whose entries share their low `implied` address bits: the fingerprint's bits past them,
 * as an integer below 2^(52 − implied) (the address's high bits, then the 20 tail bits).
 */
const keyOf = (fingerprint: string, implied: number): number => keyOfParts(addressOf(fingerprint), tailOf(fingerprint), implied);

/** {@link keyOf} of a fingerprint given as its address ({@link addressOf}) and tail ({@link tailOf}). */
const keyOfParts = (address: number, tail: number, implied: number): number => Math.floor(address / pow2(implied)) * pow2(TAIL_BITS) + tail;

/** The fingerprint of `key` ({@link keyOf}) in a bucket whose entries' low `implied` address bits are `low`. */
function fingerprintOfKey(key: number, implied: number, low: number): string {
  const tail = key % pow2(TAIL_BITS);
  const address = Math.floor(key / pow2(TAIL_BITS)) * pow2(implied) + low;
  return String.fromCharCode(
    address & 0xff,
    (address >>> 8) & 0xff,
    (address >>> 16) & 0xff,
    (address >>> 24) & 0xff,
    tail & 0xff,
    (tail >>> 8) & 0xff,
    tail >>> 16,
  );
}

/** Writes `value` (below 2^bits, bits ≤ 52) into `out` at bit `at`, most significant bit first. @returns the next bit. */
function writeBits(out: Buffer, at: number, value: number, bits: number): number {
  // Two chunks of at most 26 bits: each stays exact in a double with the bits shifted in before it.
  if (bits <= CHUNK_BITS) return writeChunk(out, at, value, bits);
  const next = writeChunk(out, at, Math.floor(value / pow2(CHUNK_BITS)), bits - CHUNK_BITS);
  return writeChunk(out, next, value % pow2(CHUNK_BITS), CHUNK_BITS);
}

/** {@link writeBits} of one chunk (below 2^bits, bits ≤ {@link CHUNK_BITS}), byte by byte. @returns the next bit. */
function writeChunk(out: Buffer, at: number, chunk: number, bits: number): number {
  let position = at;
  let left = bits;
  while (left > 0) {
    const free = 8 - (position & 7);
    const take = Math.min(free, left);
    out[position >>> 3]! |= (Math.floor(chunk / pow2(left - take)) % pow2(take)) << (free - take);
    position += take;
    left -= take;
  }
  return position;
}

/**
 * Reads a value of `bits` (≤ 52) at bit `at` ({@link writeBits}): 24 bits at a time from the 4 bytes that hold them, in
 * 32-bit integer arithmetic (bytes past the end read as 0). The lookup's inner step: ~3 × faster than double arithmetic.
 */
function readBits(buffer: Uint8Array, at: number, bits: number): number {
  let value = 0;
  let position = at;
  for (let left = bits; left > 0;) {
    const take = left > 24 ? 24 : left;
    const byte = position >>> 3;
    const word = (buffer[byte]! << 24) | (buffer[byte + 1]! << 16) | (buffer[byte + 2]! << 8) | buffer[byte + 3]!;
    value = value * (1 << take) + ((word << (position & 7)) >>> (32 - take));
    position += take;
    left -= take;
  }
  return value;
}

/**
 * Encodes entries (format 4, {@link HISTORY_FORMAT}): byte 0 the format, byte 1 the number b of low address bits every
 * entry shares (the bucket's depth, at most 32: its address bits), then as varints those b bits' value, the group
 * count and per group, in ascending value order, the value's increase over the previous group's and the group's entry
 * count; then every entry's key, the fingerprint's 52 − b bits past the shared ones ({@link keyOf}), packed at 52 − b
 * bits each, most significant bit first, in group order, each group's in ascending order (a read finds an account by
 * binary search), the last byte padded with zeros. Values past the retention lose their time (CRM targets) or their
 * entry (the rest). docs/data-model.md "Recency and CRM targets" gives the sizes and the chance of a false match.
 * @param entries - fingerprint ({@link fingerprintOf}) → value (epoch ms × 2 + CRM flag).
 * @param depth - the bucket's depth: its entries' low `depth` address bits are the bucket's (fewer are taken when the
 * entries do not all share them, e.g. a split's stale ones).
 */
export function encodeBucket(entries: ReadonlyMap<string, number>, depth = 0, now = Date.now()): Buffer {
  const groups = new Map<number, string[]>();
  let firstAddress: number | undefined;
  let implied = Math.min(32, depth);
  for (const [fingerprint, stored] of entries) {
    const ms = msOfValue(stored);
    const value = ms !== 0 && ms + RETENTION_MS <= now ? valueOf(0, crmOfValue(stored)) : stored;
    if (value === 0) continue;
    let group = groups.get(value);
    if (!group) groups.set(value, (group = []));
    group.push(fingerprint);
    // Implied bits: those the bucket's address bits fix, and only as many as every entry really shares.
    const address = addressOf(fingerprint);
    firstAddress ??= address;
    const differ = (address ^ firstAddress) >>> 0;
    if (differ !== 0) implied = Math.min(implied, 31 - Math.clz32(differ & -differ));
  }
  if (firstAddress === undefined) implied = 0;
  const width = FINGERPRINT_BITS - implied;
  const header: number[] = [HISTORY_FORMAT, implied];
  pushVarint(header, implied === 0 ? 0 : firstAddress! % pow2(implied));
  const values = [...groups.keys()].sort((a, b) => a - b);
  pushVarint(header, values.length);
  let previous = 0;
  let count = 0;
  const keyGroups: number[][] = [];
  for (const value of values) {
    const group = groups.get(value)!;
    pushVarint(header, value - previous);
    pushVarint(header, group.length);
    count += group.length;
    previous = value;
    keyGroups.push(group.map((fingerprint) => keyOf(fingerprint, implied)).sort((a, b) => a - b));
  }
  const buffer = Buffer.alloc(header.length + Math.ceil((count * width) / 8));
  buffer.set(header, 0);
  let at = header.length * 8;
  for (const keys of keyGroups) for (const key of keys) at = writeBits(buffer, at, key, width);
  return buffer;
}

/** The value groups of formats 2–4 as {@link readGroups} reads them: group g's value and entry count, g below `length`. */
interface Groups {
  length: number;
  values: Float64Array;
  counts: Float64Array;
}

const newGroups = (): Groups => ({ length: 0, values: new Float64Array(16), counts: new Float64Array(16) });

/**
 * The value groups of formats 2–4 at `at.offset` (advancing it), into `into` (its arrays grown when too short): a varint
 * group count, then per group the value's increase over the previous group's and the group's entry count (varints).
 */
function readGroups(buffer: Uint8Array, at: { offset: number }, into: Groups): Groups {
  const groups = readVarint(buffer, at);
  if (groups > into.values.length) {
    into.values = new Float64Array(groups);
    into.counts = new Float64Array(groups);
  }
  into.length = groups;
  let value = 0;
  for (let g = 0; g < groups; g++) {
    value += readVarint(buffer, at);
    into.values[g] = value;
    into.counts[g] = readVarint(buffer, at);
  }
  return into;
}

/** Format 4's header ({@link encodeBucket}): implied bits, their value, the value groups, where the keys start (bit), key width. */
interface Header {
  implied: number;
  low: number;
  groups: Groups;
  keysAt: number;
  width: number;
}

/** Reads format 4's header into `into` (its groups' arrays reused). */
function readHeader(buffer: Uint8Array, into: Header, at = { offset: 2 }): Header {
  at.offset = 2;
  into.implied = buffer[1]!;
  into.low = readVarint(buffer, at);
  readGroups(buffer, at, into.groups);
  into.keysAt = at.offset * 8;
  into.width = FINGERPRINT_BITS - into.implied;
  return into;
}

const newHeader = (): Header => ({ implied: 0, low: 0, groups: newGroups(), keysAt: 0, width: FINGERPRINT_BITS });

/**
 * Walks an encoded bucket of any format: for each entry, its fingerprint ({@link fingerprintOf}'s 52 bits; formats 1–3
 * stored 64) and its value.
 * @throws Error on an unknown format.
 */
function walkBucket(bytes: Uint8Array, visit: (fingerprint: string, value: number) => void): void {
  if (bytes.length === 0) return;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = buffer.readUInt8(0);
  if (format === HISTORY_FORMAT) {
    const { implied, low, groups, keysAt, width } = readHeader(buffer, newHeader());
    let at = keysAt;
    for (let g = 0; g < groups.length; g++)
      for (let i = 0; i < groups.counts[g]!; i++, at += width)
        visit(fingerprintOfKey(readBits(buffer, at, width), implied, low), groups.values[g]!);
    return;
  }
  if (format === LEGACY_FORMAT) {
    const groups = buffer.readUInt16BE(1);
    let offset = 3 + groups * (LEGACY_VALUE_BYTES + 2);
    for (let g = 0; g < groups; g++) {
      const at = 3 + g * (LEGACY_VALUE_BYTES + 2);
      const value = buffer.readUIntBE(at, LEGACY_VALUE_BYTES);
      const count = buffer.readUInt16BE(at + LEGACY_VALUE_BYTES);
      for (let i = 0; i < count; i++, offset += LEGACY_HASH_BYTES)
        visit(fingerprintOfHash(buffer.toString('latin1', offset, offset + LEGACY_HASH_BYTES)), value);
    }
    return;
  }
  if (format !== SORTED_FORMAT && format !== UNSORTED_FORMAT) throw new Error(`Unknown history bucket format ${format}`);
  const impliedBytes = buffer.readUInt8(1);
  const implied = buffer.toString('latin1', 2, 2 + impliedBytes);
  const at = { offset: 2 + impliedBytes };
  const { length, values, counts } = readGroups(buffer, at, newGroups());
  const width = LEGACY_HASH_BYTES - impliedBytes;
  let offset = at.offset;
  for (let g = 0; g < length; g++)
    for (let i = 0; i < counts[g]!; i++, offset += width)
      visit(fingerprintOfHash(implied + buffer.toString('latin1', offset, offset + width)), values[g]!);
}

/**
 * Decodes {@link encodeBucket}'s layout (any format) into `entries` (fingerprint → value; two hashes of an older format
 * that share their first 52 bits are one entry, their values joined). @throws Error on an unknown format.
 */
export function decodeBucket(bytes: Uint8Array, entries = new Map<string, number>()): Map<string, number> {
  walkBucket(bytes, (fingerprint, value) => entries.set(fingerprint, joinValues(entries.get(fingerprint), value)));
  return entries;
}

/**
 * One encoded bucket ready for lookups ({@link openBucket}, {@link valueInBucket}): format 4's header read once, the
 * entries left packed in the bytes; formats 1–3 decoded whole (read only until the bucket's next rewrite).
 */
export interface BucketLookup {
  /** The bytes opened (the lookup reads them in place). */
  readonly bytes: Uint8Array;
  /** Format 4's header (its arrays reused from one opening to the next). */
  readonly header: Header;
  /** Formats 1–3: every entry decoded ({@link decodeBucket}); undefined for format 4. */
  legacy: Map<string, number> | undefined;
}

/**
 * Opens an encoded bucket (any format) for {@link valueInBucket}, into `reuse` when given (a reader's one scratch
 * lookup: its header's arrays are reused, so opening a format-4 bucket allocates nothing), else a new one. The result
 * reads `bytes` in place: valid until `bytes` change or `reuse` is opened again.
 * @throws Error on an unknown format.
 */
export function openBucket(bytes: Uint8Array, reuse?: BucketLookup): BucketLookup {
  const lookup = (reuse ?? { bytes, header: newHeader(), legacy: undefined }) as { -readonly [K in keyof BucketLookup]: BucketLookup[K] };
  lookup.bytes = bytes;
  lookup.legacy = undefined;
  if (bytes.length > 0 && bytes[0] === HISTORY_FORMAT) readHeader(bytes, lookup.header, scratchCursor);
  else {
    lookup.header.groups.length = 0;
    lookup.legacy = decodeBucket(bytes);
  }
  return lookup;
}

/** {@link openBucket}'s cursor for the header's varints (a lookup is synchronous: one object for all). */
const scratchCursor = { offset: 0 };

/**
 * The value (epoch ms × 2 + CRM flag) an opened bucket holds for an account, given by its fingerprint's address
 * ({@link addressOf}) and tail (the 20 bits after it), or −1 when it holds none. Format 4: per value group, a binary
 * search of the packed keys in the bytes themselves (a group's keys are sorted), ~log2(entries) reads of one key; each
 * key compared by its first 24 bits (one read of 4 bytes), the rest read only when they are equal. Allocates nothing.
 * docs/data-model.md "Recency and CRM targets".
 */
export function valueInBucket(lookup: BucketLookup, address: number, tail: number): number {
  if (lookup.legacy) return lookup.legacy.get(fingerprintOfKey(keyOfParts(address, tail, 0), 0, 0)) ?? -1;
  const { bytes, header } = lookup;
  const { implied, low, groups, width } = header;
  if (groups.length === 0 || address % pow2(implied) !== low) return -1;
  const key = keyOfParts(address, tail, implied);
  const highBits = Math.min(24, width);
  const lowBits = width - highBits;
  const lowScale = pow2(lowBits);
  const keyHigh = Math.floor(key / lowScale);
  const keyLow = key % lowScale;
  let start = header.keysAt;
  for (let g = 0; g < groups.length; start += groups.counts[g]! * width, g++) {
    let lo = 0;
    let hi = groups.counts[g]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = start + mid * width;
      let order = readBits(bytes, at, highBits) - keyHigh;
      if (order === 0 && lowBits > 0) order = readBits(bytes, at + highBits, lowBits) - keyLow;
      if (order === 0) return groups.values[g]!;
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
  }
  return -1;
}

/**
 * A bucket's item: key, type, encoded entries, depth and version. (Items written before session 50's splits may also
 * carry `splitOf`: a split's provisional copy, see {@link AccountHistoryStore.reencode}.)
 */
const bucketItem = (organizationId: string, bucket: number, depth: number, version: number, entries: ReadonlyMap<string, number>) => ({
  ...keys.accountHistoryBucket(organizationId, bucket),
  type: 'accountHistoryBucket',
  entries: encodeBucket(entries, depth),
  depth,
  version,
});

/** Buckets written at once per {@link writeLaidOutHistory} batch (bounds its memory). */
const LAYOUT_WRITE_BUCKETS = 2_000;

/**
 * Writes a whole history at once into an organization that has none: the
 * buckets of `count` entries laid out at the load bound (N = ⌈count / load⌉),
 * each written whole by BatchWriteItem (no read, no merge, no split), then
 * the organization item's split state. For seeding a benchmark's large
 * histories (bench/figures/history.ts): the same entries in the same buckets
 * as {@link AccountHistoryStore.record} would leave at that N, without its
 * reads, merges and splits.
 * @param entryAt - entry i's account ID, enrichment time (epoch ms, or 0) and CRM flag.
 * @returns N and the entries written.
 * @throws when the organization already has history buckets (N > 1 or entries).
 */
export async function writeLaidOutHistory({
  client,
  tableName,
  organizationId,
  count,
  entryAt,
  bucketLoad = HISTORY_BUCKET_LOAD,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
  organizationId: string;
  count: number;
  entryAt: (i: number) => { accountId: string; enrichedAtMs: number; crmTarget: boolean };
  bucketLoad?: number;
}): Promise<HistoryState> {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }),
  );
  if (!Item || Item.historyBuckets !== undefined || Item.historyEntries !== undefined)
    throw new Error(`Organization ${organizationId} is missing or already has a history: lay out histories only into new organizations`);
  const buckets = Math.max(1, Math.ceil(count / bucketLoad));
  // Counting sort of the entries by bucket: hashes and values in flat arrays (10 M entries take ~200 MB, not a Map each).
  const fingerprints = Buffer.alloc(count * FINGERPRINT_BYTES);
  const values = new Float64Array(count);
  const bucketOfEntry = new Uint32Array(count);
  const starts = new Uint32Array(buckets + 1);
  for (let i = 0; i < count; i++) {
    const entry = entryAt(i);
    const fingerprint = fingerprintOf(entry.accountId);
    fingerprints.write(fingerprint, i * FINGERPRINT_BYTES, FINGERPRINT_BYTES, 'latin1');
    values[i] = valueOf(entry.enrichedAtMs, entry.crmTarget);
    const { bucket } = bucketOf(addressOf(fingerprint), buckets);
    bucketOfEntry[i] = bucket;
    starts[bucket + 1]!++;
  }
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  const order = new Uint32Array(count);
  const next = starts.slice(0, buckets);
  for (let i = 0; i < count; i++) order[next[bucketOfEntry[i]!]!++] = i;
  for (let from = 0; from < buckets; from += LAYOUT_WRITE_BUCKETS) {
    const items: Record<string, unknown>[] = [];
    for (let bucket = from; bucket < Math.min(buckets, from + LAYOUT_WRITE_BUCKETS); bucket++) {
      const entries = new Map<string, number>();
      for (let k = starts[bucket]!; k < starts[bucket + 1]!; k++) {
        const i = order[k]!;
        const fingerprint = fingerprints.toString('latin1', i * FINGERPRINT_BYTES, (i + 1) * FINGERPRINT_BYTES);
        const known = entries.get(fingerprint);
        const value = values[i]!;
        entries.set(fingerprint, joinValues(known, value));
      }
      items.push(bucketItem(organizationId, bucket, bucketOf(bucket, buckets).depth, 1, entries));
    }
    await batchPut(client, tableName, items);
  }
  await client.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.organization(organizationId),
      UpdateExpression: 'SET historyBuckets = :n, historyEntries = :entries',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(historyBuckets) AND attribute_not_exists(historyEntries)',
      ExpressionAttributeValues: { ':n': buckets, ':entries': count },
    }),
  );
  return { buckets, entries: count, growTo: buckets };
}

/** Epoch ms of an ISO time. @throws RangeError for an invalid time. */
const msOf = (time: string): number => {
  const ms = Date.parse(time);
  if (Number.isNaN(ms) || ms <= 0) throw new RangeError(`Invalid enrichment time: ${time}`);
  return ms;
};

/** Where the history is stored and how a completed campaign's eligible list is read ({@link createAccountHistoryStore}, {@link createAccountHistoryReader}). */
export interface HistoryStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Reads a completed campaign's eligible list ({@link AccountHistoryStore.recordCompletion}, and pending completions of {@link AccountHistoryStore.getFacts}). */
  accountLists: Pick<AccountListStore, 'get'>;
}

/** The bucket number a bucket item's `pk` ends with (`…#HBUCKET#<bucket>`, lib/db/keys.ts). */
const bucketNumberOf = (pk: string): number => Number(pk.slice(pk.lastIndexOf('#') + 1));

/**
 * Follows accounts to the buckets that hold them: grouped by their starting bucket, read a round at a time, and moved
 * on one split at a time ({@link nextBucket}) wherever a bucket's item shows a depth deeper than the one they were
 * routed by (a split since N was read). An account settles in the bucket as first read (a bucket read again in a later
 * round keeps its first read), so every account of one bucket is looked up in, or written against, one read of it.
 * The one routing of the history's reads: the evaluation's ({@link historyReads} `getFacts`) and the writes'
 * (`locateFrom`). docs/data-model.md "Recency and CRM targets".
 * @param addresses - each account's fingerprint address ({@link addressOf}), account i at index i.
 * @param startOf - account i's starting bucket and its expected depth (used when the bucket has no item).
 * @param readRound - reads a round's buckets (bucket → expected depth), a read for each.
 * @param settle - called once per account: the bucket that holds it and that bucket's first read.
 * @returns every bucket read, as first read, in the order first read.
 */
async function routeAccounts<R extends { depth: number }>(
  addresses: Uint32Array,
  startOf: (i: number) => { bucket: number; depth: number },
  readRound: (round: ReadonlyMap<number, number>) => Promise<ReadonlyMap<number, R>>,
  settle: (bucket: number, read: R, i: number) => void,
): Promise<Map<number, R>> {
  const count = addresses.length;
  // A round's buckets: bucket → the index of an account routed there, the others linked through `next` (−1 ends);
  // each account's expected depth (its bucket's when the bucket has no item).
  const next = new Int32Array(count);
  const depths = new Uint8Array(count);
  const want = (into: Map<number, number>, bucket: number, depth: number, i: number) => {
    depths[i] = depth;
    next[i] = into.get(bucket) ?? -1;
    into.set(bucket, i);
  };
  let round = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const { bucket, depth } = startOf(i);
    want(round, bucket, depth, i);
  }
  const first = new Map<number, R>();
  while (round.size > 0) {
    const wanted = new Map<number, number>();
    for (const [bucket, head] of round) wanted.set(bucket, depths[head]!);
    const reads = await readRound(wanted);
    const following = new Map<number, number>();
    for (const [bucket, head] of round) {
      const read = reads.get(bucket)!;
      if (!first.has(bucket)) first.set(bucket, read);
      const firstRead = first.get(bucket)!;
      for (let i = head, rest = next[i]!; i !== -1; i = rest, rest = i === -1 ? -1 : next[i]!) {
        const hop = nextBucket(addresses[i]!, bucket, read.depth);
        if (!hop) settle(bucket, firstRead, i);
        else {
          const known = first.get(hop.bucket);
          if (known && !nextBucket(addresses[i]!, hop.bucket, known.depth)) settle(hop.bucket, known, i);
          else want(following, hop.bucket, hop.depth, i);
        }
      }
    }
    round = following;
  }
  return first;
}

/** A {@link BucketRead} of an item as read: its entries decoded when first asked for (the evaluation never asks). */
class BucketItemRead implements BucketRead {
  #entries: Map<string, number> | undefined;
  constructor(
    public depth: number,
    public version: number | undefined,
    public bytes: Uint8Array | undefined,
  ) {}
  get entries(): Map<string, number> {
    return (this.#entries ??= this.bytes ? decodeBucket(this.bytes) : new Map<string, number>());
  }
}

/** The reads both {@link createAccountHistoryReader} and {@link createAccountHistoryStore} are built on. */
function historyReads({ client, tableName, accountLists }: HistoryStoreOptions) {
  const bucketFrom = (item: Record<string, unknown> | undefined, expectedDepth: number): BucketRead =>
    new BucketItemRead(
      // A split does not rewrite the bucket it splits, so the item's depth can be older than the N that routed here.
      typeof item?.depth === 'number' ? Math.max(item.depth, expectedDepth) : expectedDepth,
      typeof item?.version === 'number' ? item.version : undefined,
      item?.entries instanceof Uint8Array ? item.entries : undefined,
    );

  /**
   * Reads buckets (strongly consistent): bucket → expected depth (used when it has no item). `withVersion` false (the
   * evaluation's reads, which write nothing) leaves `version` out of the answer: ~20 bytes an item fewer to send and parse.
   */
  const readBuckets = async (
    organizationId: string,
    wanted: ReadonlyMap<number, number>,
    withVersion = true,
  ): Promise<Map<number, BucketRead>> => {
    // Parsed by lib/db/raw-read.ts (one JSON.parse, `entries` as a Buffer): the SDK's own parsing of ~1,000 items
    // costs a 1,000-account launch as much CPU as the rest of it.
    const items = await batchGetRaw(
      client,
      tableName,
      Array.from(wanted.keys(), (bucket) => keys.accountHistoryBucket(organizationId, bucket)),
      withVersion ? [...EVALUATION_BUCKET_ATTRIBUTES, 'version'] : EVALUATION_BUCKET_ATTRIBUTES,
      // Strongly consistent: a completion that left the organization item's pending list is seen (lib/history/recency-pending.ts).
      { consistentRead: true },
    );
    const reads = new Map<number, BucketRead>();
    for (const item of items) {
      const bucket = bucketNumberOf(String(item.pk));
      reads.set(bucket, bucketFrom(item, wanted.get(bucket)!));
    }
    for (const [bucket, depth] of wanted) if (!reads.has(bucket)) reads.set(bucket, bucketFrom(undefined, depth));
    return reads;
  };

  const state = async (organizationId: string): Promise<HistoryState> => {
    const { Item } = await client.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.organization(organizationId),
        ConsistentRead: true,
        ProjectionExpression: 'historyBuckets, historyEntries, historyGrowTo',
      }),
    );
    const buckets = typeof Item?.historyBuckets === 'number' ? Item.historyBuckets : 1;
    return {
      buckets,
      entries: typeof Item?.historyEntries === 'number' ? Item.historyEntries : 0,
      growTo: Math.max(buckets, typeof Item?.historyGrowTo === 'number' ? Item.historyGrowTo : 0),
    };
  };

  /**
   * {@link routeAccounts} for a write: fingerprints to the buckets that hold them, each bucket with its read (versions
   * included) and the fingerprints it holds; every bucket read is in the answer, with none when all moved on.
   * @param starts fingerprint → the bucket to start from and its expected depth.
   */
  const locateFrom = async (organizationId: string, starts: Iterable<[string, { bucket: number; depth: number }]>) => {
    const list = [...starts];
    const held = new Map<number, string[]>();
    const reads = await routeAccounts(
      Uint32Array.from(list, ([fingerprint]) => addressOf(fingerprint)),
      (i) => list[i]![1],
      (round) => readBuckets(organizationId, round),
      (bucket, _read, i) => {
        const fingerprints = held.get(bucket);
        if (fingerprints) fingerprints.push(list[i]![0]);
        else held.set(bucket, [list[i]![0]]);
      },
    );
    return new Map(Array.from(reads, ([bucket, read]) => [bucket, { read, fingerprints: held.get(bucket) ?? [] }]));
  };

  /** {@link locateFrom} every fingerprint's bucket under N = `buckets`. */
  const locate = (organizationId: string, fingerprints: Iterable<string>, buckets: number) =>
    locateFrom(
      organizationId,
      [...fingerprints].map((fingerprint): [string, { bucket: number; depth: number }] => [
        fingerprint,
        bucketOf(addressOf(fingerprint), buckets),
      ]),
    );

  const reader: Pick<AccountHistoryStore, 'getFacts' | 'state'> = {
    // The evaluation's read, kept lean (a 1,000-account launch and quote run it; bench/README.md "The history CPU
    // figures"): each ID hashed once into flat arrays (address, tail), the accounts grouped by bucket in a list of
    // indices, each bucket's item looked up in place ({@link openBucket}, one scratch lookup), accounts of one value
    // sharing one facts object. The routing is the writes' own ({@link routeAccounts}).
    async getFacts(organizationId, accountIds, options = {}) {
      const count = accountIds.length;
      const addresses = new Uint32Array(count);
      const tails = new Uint32Array(count);
      for (let i = 0; i < count; i++) {
        const digest = digestOf(accountIds[i]!);
        addresses[i] = addressOf(digest);
        tails[i] = tailOf(digest);
      }
      const buckets = options.buckets ?? (await state(organizationId)).buckets;
      const recency = options.recency ?? true;
      const after = options.enrichedAfter ?? -Infinity;
      const now = Date.now();
      const facts = new Map<string, AccountFacts>();
      // Facts by value (null: none to report), one object shared by the accounts of a value (read only).
      const factsOfValue = new Map<number, AccountFacts | null>();
      let lookup: BucketLookup | undefined;
      /** Looks account i up in `bytes` (a bucket's item as first read) and sets its facts when it has any. */
      const lookUp = (bytes: Uint8Array | undefined, i: number) => {
        if (!bytes) return;
        if (lookup?.bytes !== bytes) lookup = openBucket(bytes, lookup);
        const value = valueInBucket(lookup, addresses[i]!, tails[i]!);
        if (value === -1) return;
        let known = factsOfValue.get(value);
        if (known === undefined) {
          const ms = msOfValue(value);
          const recent = recency && ms !== 0 && ms > after && ms + RETENTION_MS > now;
          const crm = crmOfValue(value);
          known = recent || crm ? { crmTarget: crm, ...(recent ? { lastEnrichedAt: new Date(ms).toISOString() } : {}) } : null;
          factsOfValue.set(value, known);
        }
        if (known) facts.set(accountIds[i]!, known);
      };
      await routeAccounts(
        addresses,
        (i) => bucketOf(addresses[i]!, buckets),
        (round) => readBuckets(organizationId, round, false),
        (_bucket, read, i) => lookUp(read.bytes, i),
      );
      if (recency && options.pending && options.pending.length > 0) {
        // Completions whose entries are not written yet: their eligible lists, read whole (normally none).
        const ids = new Set(accountIds);
        for (const entry of options.pending) {
          if (Date.parse(entry.completedAt) <= after) continue;
          for (const accountId of await accountLists.get(entry.eligibleObjectKey)) {
            if (!ids.has(accountId)) continue;
            const known = facts.get(accountId);
            if (!known?.lastEnrichedAt || known.lastEnrichedAt < entry.completedAt)
              facts.set(accountId, { crmTarget: known?.crmTarget ?? false, lastEnrichedAt: entry.completedAt });
          }
        }
      }
      return facts;
    },

    state,
  };

  return { bucketFrom, readBuckets, locate, locateFrom, reader };
}

/**
 * The history's reads alone ({@link AccountHistoryStore.getFacts} and `state`, the same as
 * {@link createAccountHistoryStore}'s), for a function that never records: its bundle then carries none of the
 * bucket writes, splits and encoding (a launch's and a quote's evaluation; bench `bundles`).
 */
export function createAccountHistoryReader(options: HistoryStoreOptions): Pick<AccountHistoryStore, 'getFacts' | 'state'> {
  return historyReads(options).reader;
}

/** Builds the DynamoDB implementation of {@link AccountHistoryStore}. */
export function createAccountHistoryStore({
  client,
  tableName,
  accountLists,
  bucketLoad = HISTORY_BUCKET_LOAD,
}: HistoryStoreOptions & {
  /** Average entries per bucket before the next split (default {@link HISTORY_BUCKET_LOAD}; tests lower it to split often). */
  bucketLoad?: number;
}): AccountHistoryStore {
  const { bucketFrom, readBuckets, locate, locateFrom, reader } = historyReads({ client, tableName, accountLists });
  const { state } = reader;

  /** Updates the organization item's split state (never lowers N); an organization without an item keeps none. */
  const updateState = async (organizationId: string, change: { buckets?: number; entriesDelta?: number }) => {
    const set = change.buckets !== undefined;
    const add = change.entriesDelta !== undefined && change.entriesDelta !== 0;
    if (!set && !add) return;
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.organization(organizationId),
          UpdateExpression: [set ? 'SET historyBuckets = :n' : '', add ? 'ADD historyEntries :d' : ''].filter(Boolean).join(' '),
          ConditionExpression: set
            ? 'attribute_exists(pk) AND (attribute_not_exists(historyBuckets) OR historyBuckets < :n)'
            : 'attribute_exists(pk)',
          ExpressionAttributeValues: { ...(set ? { ':n': change.buckets } : {}), ...(add ? { ':d': change.entriesDelta } : {}) },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // N is already at least this (another writer grew it) or there is no organization item: apply the count alone.
      if (set && add) await updateState(organizationId, { entriesDelta: change.entriesDelta! });
    }
  };

  /**
   * Announces a growth to `target` buckets before its first split (`historyGrowTo`, never lowered), with the entry
   * count's change riding on the same write: a writer that routed by an older N reads it after its writes and carries
   * what it wrote on to the buckets being made (`record`'s check).
   */
  const announce = async (organizationId: string, target: number, entriesDelta = 0) => {
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.organization(organizationId),
          UpdateExpression: `SET historyGrowTo = :g${entriesDelta === 0 ? '' : ' ADD historyEntries :d'}`,
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(historyGrowTo) OR historyGrowTo < :g)',
          ExpressionAttributeValues: { ':g': target, ...(entriesDelta === 0 ? {} : { ':d': entriesDelta }) },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Announced already (as far or further), or no organization item: the count alone.
      await updateState(organizationId, { entriesDelta });
    }
  };

  const versionCondition = (read: BucketRead) =>
    read.version === undefined
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : {
          ConditionExpression: '#version = :version',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':version': read.version },
        };

  /**
   * Splits bucket s = n − 2^L (L = floor(log2 n)) into s and n by writing n alone: s's entries that route to n
   * joined into n's item (created if absent, always written when absent), then s read again and, if it changed since
   * the copy's read, copied again. s is not rewritten: it keeps the moved entries, stale, until its next rewrite. The
   * split commits when N is raised past n ({@link grow}, after its announcement). Safe to run twice at once and to
   * resume after a crash at any point (every write is a join); done at once when s or n shows it was made already.
   */
  const split = async (organizationId: string, n: number): Promise<void> => {
    const level = 31 - Math.clz32(n);
    const s = n - 2 ** level;
    const readPair = () =>
      readBuckets(
        organizationId,
        new Map([
          [s, level],
          [n, level + 1],
        ]),
      );
    const reads = await readPair();
    let source = reads.get(s)!;
    let target = reads.get(n)!;
    // s rewritten at a deeper depth, or n at a depth past its own, by a writer routed by an N past n: made and committed.
    if (source.depth > level || target.depth > level + 1) return;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 50) throw new Error(`History bucket ${s} of ${organizationId}: split kept losing races`);
      const entries = ownEntries(target.entries, n, level + 1);
      const joined = joinInto(entries, ownEntries(source.entries, n, level + 1));
      if (joined || target.version === undefined) {
        const put = await putIf(client, {
          TableName: tableName,
          Item: bucketItem(organizationId, n, level + 1, (target.version ?? 0) + 1, entries),
          ...versionCondition(target),
        });
        if (!put.ok) {
          target = bucketFrom(put.old, level + 1);
          continue;
        }
      }
      // A write to s after the read above by a writer that looked for n before n existed is copied by the next round;
      // a writer that looks after this read finds n and carries its accounts there itself.
      const again = await readPair();
      const sourceAgain = again.get(s)!;
      if (sourceAgain.version === source.version || sourceAgain.depth > level) return;
      source = sourceAgain;
      target = again.get(n)!;
    }
  };

  /**
   * Splits buckets until there are `target`, round by round (the splits of one round are independent), after
   * announcing the growth (unless `announced`), then records N.
   */
  const grow = async (organizationId: string, from: number, target: number, announced = false): Promise<number> => {
    if (target <= from) return from;
    if (!announced) await announce(organizationId, target);
    for (let n = Math.max(1, from); n < target;) {
      const roundEnd = Math.min(target, 2 ** (32 - Math.clz32(n)));
      const round = Array.from({ length: roundEnd - n }, (_, i) => n + i);
      await pMap(round, (bucket) => split(organizationId, bucket), { concurrency: WRITE_CONCURRENCY });
      n = roundEnd;
    }
    await updateState(organizationId, { buckets: target });
    return target;
  };

  /** What {@link applyAt} did: entries added, buckets written, and which fingerprints went where (at what depth). */
  interface Applied {
    added: number;
    written: number;
    writes: { bucket: number; depth: number; fingerprints: string[] }[];
  }

  /**
   * Merges changes (fingerprint → value to join) into one bucket: conditional put on the version read, of the
   * bucket's own entries at its depth (moved ones a split left behind are dropped); on a lost race the item the
   * condition saw is the new read, and fingerprints a split moved go to their bucket.
   */
  const applyAt = async (organizationId: string, bucket: number, changes: Map<string, number>, firstRead: BucketRead): Promise<Applied> => {
    let read = firstRead;
    const applied: Applied = { added: 0, written: 0, writes: [] };
    for (let attempt = 0; ; attempt++) {
      if (attempt > 50) throw new Error(`History bucket ${bucket} of ${organizationId}: write kept losing races`);
      // Fingerprints a split moved on, each from this bucket one split at a time (never to a bucket not made yet).
      const moved = new Map<string, number>();
      const starts: [string, { bucket: number; depth: number }][] = [];
      for (const [fingerprint, value] of changes) {
        const hop = nextBucket(addressOf(fingerprint), bucket, read.depth);
        if (!hop) continue;
        changes.delete(fingerprint);
        moved.set(fingerprint, value);
        starts.push([fingerprint, hop]);
      }
      if (moved.size > 0) {
        const located = await locateFrom(organizationId, starts);
        for (const result of await pMap(
          located,
          ([target, { read: targetRead, fingerprints }]) =>
            applyAt(organizationId, target, new Map(fingerprints.map((f) => [f, moved.get(f)!])), targetRead),
          { concurrency: WRITE_CONCURRENCY },
        )) {
          applied.added += result.added;
          applied.written += result.written;
          applied.writes.push(...result.writes);
        }
      }
      const entries = ownEntries(read.entries, bucket, read.depth);
      const before = entries.size;
      if (!joinInto(entries, changes)) return applied;
      const item = bucketItem(organizationId, bucket, read.depth, (read.version ?? 0) + 1, entries);
      const outcome = await putIf(client, { TableName: tableName, Item: item, ...versionCondition(read) });
      if (outcome.ok) {
        applied.added += decodeBucket(item.entries).size - before;
        applied.written++;
        applied.writes.push({ bucket, depth: read.depth, fingerprints: [...changes.keys()] });
        return applied;
      }
      read = bucketFrom(outcome.old, read.depth);
    }
  };

  /**
   * After a writer's bucket writes: a growth announced past the N it routed by may be copying a bucket it wrote, and
   * the copy may have been read before the write. Each written fingerprint that routes on under the announced N goes
   * one split further, into that bucket if it exists (its split's copy was made; joined there, then checked again),
   * else nowhere (the split's copy is not written yet, and the split reads its source again after writing it).
   * Nothing to do, and one GetItem, when no growth was announced past the writer's N.
   * @returns the state read last and the buckets written by carrying accounts on.
   */
  const carryOn = async (organizationId: string, writes: Applied['writes'], merged: ReadonlyMap<string, number>) => {
    let written = 0;
    for (let pending = writes; ;) {
      const current = await state(organizationId);
      const hops = new Map<number, { depth: number; changes: Map<string, number> }>();
      for (const { bucket, depth, fingerprints } of pending)
        for (const fingerprint of fingerprints) {
          const address = addressOf(fingerprint);
          const hop = nextBucket(address, bucket, Math.max(depth, bucketOf(address, current.growTo).depth));
          if (!hop) continue;
          let group = hops.get(hop.bucket);
          if (!group) hops.set(hop.bucket, (group = { depth: hop.depth, changes: new Map() }));
          group.changes.set(fingerprint, merged.get(fingerprint)!);
        }
      if (hops.size === 0) return { state: current, written };
      const reads = await readBuckets(organizationId, new Map([...hops].map(([bucket, { depth }]) => [bucket, depth])));
      pending = [];
      for (const result of await pMap(
        [...hops].filter(([bucket]) => reads.get(bucket)!.version !== undefined),
        ([bucket, { changes }]) => applyAt(organizationId, bucket, changes, reads.get(bucket)!),
        { concurrency: WRITE_CONCURRENCY },
      )) {
        // Counted where first written (a carried account may be counted twice when a newer writer put it in the
        // split's new bucket first: the count, a hint for the splits, is then high by it).
        written += result.written;
        pending.push(...result.writes);
      }
    }
  };

  const record = async (organizationId: string, changes: Iterable<HistoryChange>): Promise<number> => {
    const merged = new Map<string, number>();
    for (const change of changes) {
      const fingerprint = fingerprintOf(change.accountId);
      const value = valueOf(change.enrichedAt === undefined ? 0 : msOf(change.enrichedAt), change.crmTarget === true);
      merged.set(fingerprint, joinValues(merged.get(fingerprint), value));
    }
    if (merged.size === 0) return 0;
    const before = await state(organizationId);
    // Room first ({@link roomBefore}), so no bucket passes 1 KB even when every account is new (the load bound itself
    // applies after the write, on the entries really added).
    const buckets = await grow(organizationId, before.buckets, roomBefore(before.buckets, before.entries, merged.size, bucketLoad));
    const located = await locate(organizationId, merged.keys(), buckets);
    let added = 0;
    let written = 0;
    const writes: Applied['writes'] = [];
    for (const result of await pMap(
      located,
      ([bucket, { read, fingerprints }]) =>
        applyAt(organizationId, bucket, new Map(fingerprints.map((fingerprint) => [fingerprint, merged.get(fingerprint)!])), read),
      { concurrency: WRITE_CONCURRENCY },
    )) {
      added += result.added;
      written += result.written;
      writes.push(...result.writes);
    }
    const carried = await carryOn(organizationId, writes, merged);
    written += carried.written;
    // Then the load bound: split until the average is back under it, the growth announced on the count's own write.
    const from = Math.max(buckets, carried.state.buckets);
    const target = Math.ceil((before.entries + added) / bucketLoad);
    if (target > from) {
      await announce(organizationId, target, added);
      await grow(organizationId, from, target, true);
    } else await updateState(organizationId, { entriesDelta: added });
    return written;
  };

  const reencode = async (organizationId: string, bucket: number): Promise<boolean> => {
    const key = keys.accountHistoryBucket(organizationId, bucket);
    for (let attempt = 0; attempt < 50; attempt++) {
      const [item] = await batchGetRaw(client, tableName, [key], ['entries', 'depth', 'version', 'splitOf'], { consistentRead: true });
      const bytes = item?.entries;
      if (!(bytes instanceof Uint8Array) || bytes.length === 0 || bytes[0] === HISTORY_FORMAT || typeof item?.depth !== 'number')
        return false;
      const depth = item.depth;
      if (item.splitOf !== undefined && depth > 0) {
        // A split's copy: reachable (and so rewritten) only once the source bucket shows the copy's depth.
        const source = bucket - 2 ** (depth - 1);
        const [sourceItem] = await batchGetRaw(client, tableName, [keys.accountHistoryBucket(organizationId, source)], ['depth'], {
          consistentRead: true,
        });
        if (typeof sourceItem?.depth !== 'number' || sourceItem.depth < depth) return false;
      }
      const read = bucketFrom(item, depth);
      const written = await putIf(client, {
        TableName: tableName,
        Item: bucketItem(organizationId, bucket, depth, (read.version ?? 0) + 1, decodeBucket(bytes)),
        ...versionCondition(read),
      });
      if (written.ok) return true;
    }
    throw new Error(`History bucket ${bucket} of ${organizationId}: re-encoding kept losing races`);
  };

  const recordEnrichment = async (organizationId: string, accountIds: readonly string[], enrichedAt: string) => {
    const at = new Date(msOf(enrichedAt)).toISOString();
    await record(
      organizationId,
      (function* () {
        for (const accountId of new Set(accountIds)) yield { accountId, enrichedAt: at };
      })(),
    );
  };

  return {
    getFacts: reader.getFacts,

    async addCrmTargets(organizationId, accountIds) {
      const distinct = [...new Set(accountIds)];
      await record(
        organizationId,
        distinct.map((accountId) => ({ accountId, crmTarget: true })),
      );
      return distinct.length;
    },

    recordEnrichment,

    async recordCompletion(organizationId, _campaignId, completedAt, eligibleObjectKey) {
      await recordEnrichment(organizationId, await accountLists.get(eligibleObjectKey), completedAt);
    },

    record,
    state,
    reencode,
  };
}
