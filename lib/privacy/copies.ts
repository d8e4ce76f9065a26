/**
 * The copy index: which stored result parts hold a contact with a given
 * identifier hash, so the vendor's erasure (lib/privacy/vendor.ts) reads only
 * the parts that hold the person, whatever the rest of the deployment stores
 * (docs/privacy.md "The vendor's erasure"; docs/data-model.md "Entities", the copy index).
 *
 * Written by the workflow's FindContacts with each result part it writes
 * ({@link copyIndexItemsOf}), from the identifier digests the part already
 * carries (lib/results/parts.ts): nothing is hashed again. A part's digests
 * are split by their first `level` bits into `2^level` buckets, one item per
 * bucket (`COPIES#<level>#<bucket>` / the part's object key), each holding
 * 4 bytes of each digest of its bucket (its entries), sorted and Rice-coded
 * ({@link riceEncode}: about 3 bytes an entry instead of 4). The level grows
 * with the part so an item holds about {@link DIGESTS_PER_ITEM} digests (about
 * 4 KB at most), the next level when that bills fewer write units: a 1,000 × 10 part
 * of 40,000 digests writes 32 items of about 3.7 KB, 0.0128 write units per
 * stored contact (4 bytes an entry: 64 items, 0.0192; items of 1 KB wasted a
 * third of each write unit and cost DynamoDB 4 × the item writes; bench
 * `scale`). Items expire with the part ({@link copyIndexTtl}).
 *
 * A lookup ({@link CopyIndex.partsHolding}) queries, per identifier hash, the
 * bucket of that hash at each level (one Query each): it reads one item of
 * each part written at that level (its entries, about 4 KB at most: about
 * one read unit per stored part, never the part), and
 * answers the parts whose item holds the hash's 4 bytes (items written before
 * the Rice coding hold them as 4 bytes each, `entries`: read too, {@link copyIndexEntries}). An unrelated part is
 * a false match once in about 2^32 / 1,300 lookups, and costs one more read of a
 * part that holds nothing; a part an erasure rewrote, or that expired, keeps
 * its items until they expire: its later reads find nothing (or no object).
 */
import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { batchPut } from '../db/batch';
import * as keys from '../db/keys';
import { ResultPartReader } from '../results/parts';
import { DIGEST_BYTES } from '../warehouse/identifiers';

/**
 * Digests an index item holds at most on average: 1,300 entries of about 23 bits (Rice-coded, {@link riceEncode}) +
 * its key, about 3.8 KB, within one 4 KB read unit of a lookup. Larger items waste less of their last write unit and
 * are fewer writes; a lookup reads one such item per stored part of its partition.
 */
export const DIGESTS_PER_ITEM = 1_300;
/** The highest level: 2^10 buckets, for parts of more than 500,000 digests (items then grow past 4 KB, in proportion). */
export const MAX_COPY_INDEX_LEVEL = 10;
/** Bytes of a digest an entry keeps: bytes 4..7 (the level's bits come from bytes 0..1, so they are not repeated). */
const ENTRY_BYTES = 4;
/** Byte offset of the kept entry in a digest. */
const ENTRY_AT = 4;
/** Bytes of an item's key and other attributes besides its entries, about (what DynamoDB bills with the entries). */
const ITEM_OVERHEAD_BYTES = 140;
/** Bytes of a write unit. */
const WRITE_UNIT_BYTES = 1_024;

/** The level of a part holding `digests` identifier digests: the fewest buckets that hold at most {@link DIGESTS_PER_ITEM} each on average. */
export function copyIndexLevel(digests: number): number {
  let level = 0;
  while (level < MAX_COPY_INDEX_LEVEL && digests > DIGESTS_PER_ITEM << level) level++;
  return level;
}

/** The first 10 bits of a digest (at `bytes[at, at + 32)`): its bucket at every level, {@link MAX_COPY_INDEX_LEVEL} at most. */
const prefixOf = (bytes: Uint8Array, at: number): number => ((bytes[at]! << 8) | bytes[at + 1]!) >>> (16 - MAX_COPY_INDEX_LEVEL);
/** 2^{@link MAX_COPY_INDEX_LEVEL}: how many prefixes there are. */
const PREFIXES = 2 ** MAX_COPY_INDEX_LEVEL;

/** The bucket of a digest at a level: the first `level` bits of its {@link prefixOf}. */
const bucketOf = (prefix: number, level: number): number => prefix >>> (MAX_COPY_INDEX_LEVEL - level);

/** The kept entry of a digest, as an unsigned 32-bit number. */
const entryOf = (bytes: Uint8Array, at: number): number =>
  ((bytes[at + ENTRY_AT]! << 24) | (bytes[at + ENTRY_AT + 1]! << 16) | (bytes[at + ENTRY_AT + 2]! << 8) | bytes[at + ENTRY_AT + 3]!) >>> 0;

/** Header of Rice-coded entries: the parameter k (u8), then how many entries (u32, big-endian). */
const RICE_HEADER_BYTES = 5;

/**
 * Bits of ascending, distinct 32-bit `entries` Rice-coded with parameter `k`: per gap (the first entry, then each
 * one's distance to the one before, less 1), its quotient by 2^k in unary (q ones, a zero), then its k low bits.
 */
function riceBits(entries: Uint32Array, k: number): number {
  let bits = entries.length * (k + 1);
  let previous = -1;
  for (const entry of entries) {
    bits += (entry - previous - 1) >>> k;
    previous = entry;
  }
  return bits;
}

/** The Rice parameter of ascending `entries`: about log2 of their mean gap over 32 bits, the best of three around it. */
function riceParameter(entries: Uint32Array): number {
  const around = Math.max(0, Math.min(31, Math.floor(Math.log2(2 ** 32 / Math.max(1, entries.length)))));
  let best = around;
  let bestBits = riceBits(entries, around);
  for (const k of [around - 1, around + 1]) {
    if (k < 0 || k > 31) continue;
    const bits = riceBits(entries, k);
    if (bits < bestBits) [best, bestBits] = [k, bits];
  }
  return best;
}

/**
 * Ascending, distinct unsigned 32-bit entries as Rice codes of their gaps ({@link riceBits}): k (u8), the count (u32
 * big-endian), then the codes, most significant bit first. Entries spread evenly over 32 bits cost about
 * log2(2^32 / count) + 2 bits each (about 3 bytes for 1,000) instead of 4 bytes.
 */
export function riceEncode(entries: Uint32Array): Buffer {
  const k = riceParameter(entries);
  const bytes = Buffer.alloc(RICE_HEADER_BYTES + Math.ceil(riceBits(entries, k) / 8));
  bytes.writeUInt8(k, 0);
  bytes.writeUInt32BE(entries.length, 1);
  let at = RICE_HEADER_BYTES;
  // Bits not yet written out (fewer than 8), most significant first.
  let pending = 0;
  let pendingBits = 0;
  /** Appends the `count` (≤ 24) low bits of `value`. */
  const put = (value: number, count: number) => {
    pending = (pending << count) | value;
    pendingBits += count;
    while (pendingBits >= 8) {
      pendingBits -= 8;
      bytes[at++] = (pending >>> pendingBits) & 0xff;
    }
    pending &= (1 << pendingBits) - 1;
  };
  const lowMask = k >= 31 ? 0x7fffffff : (1 << k) - 1;
  let previous = -1;
  for (const entry of entries) {
    const gap = entry - previous - 1;
    previous = entry;
    let quotient = gap >>> k;
    for (; quotient >= 16; quotient -= 16) put(0xffff, 16);
    put(((1 << quotient) - 1) << 1, quotient + 1); // the quotient's ones, then the zero that ends it
    const low = gap & lowMask;
    if (k > 16) {
      put(low >>> 16, k - 16);
      put(low & 0xffff, 16);
    } else put(low, k);
  }
  if (pendingBits > 0) bytes[at] = (pending << (8 - pendingBits)) & 0xff;
  return bytes;
}

/**
 * The entries {@link riceEncode} wrote, ascending.
 * @throws RangeError when the bytes end before the count they state.
 */
export function riceDecode(coded: Uint8Array): Uint32Array {
  const k = coded[0]!;
  const count = ((coded[1]! << 24) | (coded[2]! << 16) | (coded[3]! << 8) | coded[4]!) >>> 0;
  const end = coded.length * 8;
  const entries = new Uint32Array(count);
  let at = RICE_HEADER_BYTES * 8;
  let previous = -1;
  for (let i = 0; i < count; i++) {
    let quotient = 0;
    for (;;) {
      if (at >= end) throw new RangeError('Rice-coded entries end before their count');
      const bit = (coded[at >>> 3]! >>> (7 - (at & 7))) & 1;
      at++;
      if (bit === 0) break;
      quotient++;
    }
    if (at + k > end) throw new RangeError('Rice-coded entries end before their count');
    let low = 0;
    for (let b = 0; b < k; b++, at++) low = low * 2 + ((coded[at >>> 3]! >>> (7 - (at & 7))) & 1);
    previous += quotient * 2 ** k + low + 1;
    entries[i] = previous;
  }
  return entries;
}

/** The entries of an index item, whichever way it holds them: Rice-coded (`rice`) or, in items written before, 4 bytes each (`entries`). */
export function copyIndexEntries(item: Record<string, unknown>): Uint32Array {
  if (item.rice instanceof Uint8Array) return riceDecode(item.rice);
  const stored = item.entries as Uint8Array | undefined;
  if (!stored) return new Uint32Array(0);
  const packed = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  return Uint32Array.from({ length: Math.floor(packed.length / ENTRY_BYTES) }, (_, i) => packed.readUInt32BE(i * ENTRY_BYTES));
}

/** A part's digests sorted by entry: each one's entry and its {@link prefixOf}, at the same index. */
interface SortedDigests {
  entries: Uint32Array;
  prefixes: Uint16Array;
}

/**
 * A part's entries by bucket at `level`: per bucket (index), its distinct entries, ascending (the digests come
 * sorted by entry, so each bucket's do too).
 */
function bucketsAt({ entries, prefixes }: SortedDigests, level: number): Uint32Array[] {
  const shift = MAX_COPY_INDEX_LEVEL - level;
  const starts = new Uint32Array((1 << level) + 1);
  for (const prefix of prefixes) starts[(prefix >>> shift) + 1]!++;
  for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1]!;
  const flat = new Uint32Array(entries.length);
  const ends = starts.slice(0, -1);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const bucket = prefixes[i]! >>> shift;
    const end = ends[bucket]!;
    // A digest held twice (the same identifier on two contacts) is one entry.
    if (end > starts[bucket]! && flat[end - 1] === entry) continue;
    flat[end] = entry;
    ends[bucket] = end + 1;
  }
  return Array.from(ends, (end, bucket) => flat.subarray(starts[bucket]!, end));
}

/** Digests sorted by entry (a stable radix sort, 16 bits a pass: linear, where a comparison sort of 40,000 took most of the index's CPU). */
function sortedByEntry(digests: SortedDigests): SortedDigests {
  let { entries, prefixes } = digests;
  let toEntries: Uint32Array = new Uint32Array(entries.length);
  let toPrefixes: Uint16Array = new Uint16Array(entries.length);
  const counts = new Uint32Array(1 << 16);
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (const entry of entries) counts[(entry >>> shift) & 0xffff]!++;
    for (let at = 0, d = 0; d < counts.length; d++) {
      const count = counts[d]!;
      counts[d] = at;
      at += count;
    }
    for (let i = 0; i < entries.length; i++) {
      const to = counts[(entries[i]! >>> shift) & 0xffff]!++;
      toEntries[to] = entries[i]!;
      toPrefixes[to] = prefixes[i]!;
    }
    [entries, toEntries] = [toEntries, entries];
    [prefixes, toPrefixes] = [toPrefixes, prefixes];
  }
  return { entries, prefixes };
}

/** Write units of a level's items: per bucket holding entries, its Rice-coded entries plus {@link ITEM_OVERHEAD_BYTES}, in whole units. */
function writeUnitsOf(buckets: readonly Uint32Array[]): number {
  let units = 0;
  for (const entries of buckets)
    if (entries.length > 0)
      units += Math.ceil(
        (RICE_HEADER_BYTES + Math.ceil(riceBits(entries, riceParameter(entries)) / 8) + ITEM_OVERHEAD_BYTES) / WRITE_UNIT_BYTES,
      );
  return units;
}

/**
 * The index items of one result part: one per bucket of its level that holds
 * a digest, each with the entries of its bucket's digests (4 bytes of each,
 * distinct, Rice-coded: `rice`, {@link riceEncode}). The level is
 * {@link copyIndexLevel}'s, or the next when that costs fewer write units
 * (an item's last unit is billed whole). None for a part without a contact identifier.
 * @param partKey - the part's object key (lib/results/parts.ts `resultPartKey`): what a lookup answers.
 * @param part - the part's bytes as written (any version ResultPartReader reads).
 * @param ttl - when the items may go (epoch seconds, the table's TTL): {@link copyIndexTtl}.
 */
export function copyIndexItemsOf(partKey: string, part: Uint8Array, ttl: number): Record<string, unknown>[] {
  const reader = new ResultPartReader(part);
  let digests = 0;
  while (reader.nextAccount())
    while (reader.nextContact()) digests += (reader.contactDigestsEnd - reader.contactDigestsStart) / DIGEST_BYTES;
  if (digests === 0) return [];
  const entries = new Uint32Array(digests);
  const prefixes = new Uint16Array(digests);
  let n = 0;
  const again = new ResultPartReader(part);
  const bytes = again.bytes;
  while (again.nextAccount())
    while (again.nextContact())
      for (let at = again.contactDigestsStart; at + DIGEST_BYTES <= again.contactDigestsEnd; at += DIGEST_BYTES) {
        entries[n] = entryOf(bytes, at);
        prefixes[n++] = prefixOf(bytes, at);
      }
  // Sorted once, by entry: every level's buckets then come out ascending.
  const digestsByEntry = sortedByEntry({ entries, prefixes });
  const first = copyIndexLevel(digests);
  let level = first;
  let buckets = bucketsAt(digestsByEntry, first);
  if (first < MAX_COPY_INDEX_LEVEL) {
    const finer = bucketsAt(digestsByEntry, first + 1);
    if (writeUnitsOf(finer) < writeUnitsOf(buckets)) {
      level = first + 1;
      buckets = finer;
    }
  }
  const items: Record<string, unknown>[] = [];
  for (const [bucket, entries] of buckets.entries())
    if (entries.length > 0) items.push({ ...keys.copyIndex(level, bucket, partKey), type: 'copyIndex', rice: riceEncode(entries), ttl });
  return items;
}

/** Seconds index items outlive their part's access period: a campaign enriches for far less (the result sequence's slack too). */
export const COPY_INDEX_SLACK_SECONDS = 7 * 86_400;

/**
 * When a part's index items may go: after the result access period from the
 * part's writing, plus {@link COPY_INDEX_SLACK_SECONDS}; the part itself goes
 * at the end of its campaign's access period (docs/lifetimes.md).
 * @param accessPeriodSeconds - the organization's result access period (seconds).
 * @returns epoch seconds.
 */
export const copyIndexTtl = (now: Date, accessPeriodSeconds: number): number =>
  Math.floor(now.getTime() / 1000) + accessPeriodSeconds + COPY_INDEX_SLACK_SECONDS;

/** The copy index in the table. */
export interface CopyIndex {
  /**
   * Records which identifier digests a written result part holds ({@link copyIndexItemsOf}): idempotent (the same
   * part gives the same items). Written by FindContacts after the part (lib/enrichment/steps.ts).
   */
  record(partKey: string, part: Uint8Array, ttl: number): Promise<void>;
  /**
   * The object keys of the result parts whose index holds any of `hashes` (full identifier hashes, hex): one
   * strongly consistent Query per distinct (level, bucket) of the hashes, {@link MAX_COPY_INDEX_LEVEL} + 1 per hash
   * at most, whatever else the deployment stores. May name a part that no longer holds the person (rewritten by an
   * erasure) or no longer exists (expired): the caller reads it and finds nothing.
   */
  partsHolding(hashes: ReadonlySet<string>): Promise<string[]>;
}

/** Index Queries in flight at once. */
const LOOKUP_CONCURRENCY = 8;

/** Builds the DynamoDB implementation of {@link CopyIndex}. */
export function createCopyIndex({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): CopyIndex {
  return {
    async record(partKey, part, ttl) {
      await batchPut(client, tableName, copyIndexItemsOf(partKey, part, ttl));
    },

    async partsHolding(hashes) {
      // Per partition to read, the entries sought in it.
      const sought = new Map<string, { level: number; bucket: number; entries: Set<number> }>();
      for (const hash of hashes) {
        const digest = Buffer.from(hash, 'hex');
        if (digest.length !== DIGEST_BYTES) continue;
        for (let level = 0; level <= MAX_COPY_INDEX_LEVEL; level++) {
          const bucket = bucketOf(prefixOf(digest, 0), level);
          const partition = keys.copyIndexPartition(level, bucket);
          if (!sought.has(partition)) sought.set(partition, { level, bucket, entries: new Set() });
          sought.get(partition)!.entries.add(entryOf(digest, 0));
        }
      }
      const found = new Set<string>();
      await pMap(
        [...sought],
        async ([partition, { entries }]) => {
          const pages = paginateQuery(
            { client },
            {
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': partition },
              ConsistentRead: true,
            },
          );
          for await (const page of pages)
            for (const item of page.Items ?? []) if (copyIndexEntries(item).some((entry) => entries.has(entry))) found.add(String(item.sk));
        },
        { concurrency: LOOKUP_CONCURRENCY },
      );
      return [...found].sort();
    },
  };
}
