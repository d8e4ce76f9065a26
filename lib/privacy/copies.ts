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
 * 4 bytes of each digest of its bucket. The level grows with the part so an
 * item holds about {@link DIGESTS_PER_ITEM} digests (about 4 KB): a 1,000 × 10
 * part writes 64 items, about 0.019 write units per stored contact (items of
 * 1 KB wasted a third of each write unit and cost DynamoDB 4 × the item
 * writes; bench `scale`). Items expire with the part ({@link copyIndexTtl}).
 *
 * A lookup ({@link CopyIndex.partsHolding}) queries, per identifier hash, the
 * bucket of that hash at each level (one Query each): it reads one item of
 * each part written at that level (its 4-byte entries, about 4 KB: at most
 * about one read unit per stored part, never the part), and
 * answers the parts whose item holds the hash's 4 bytes. An unrelated part is
 * a false match once in about 2^32 / 200 lookups, and costs one more read of a
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
 * Digests an index item holds at most on average: 1,000 × 4 bytes + its key, about 4 KB. Larger items waste less of
 * their last write unit and are fewer writes; a lookup reads one such item per stored part of its partition.
 */
export const DIGESTS_PER_ITEM = 1_000;
/** The highest level: 2^10 buckets, for parts of more than 500,000 digests (items then grow past 4 KB, in proportion). */
export const MAX_COPY_INDEX_LEVEL = 10;
/** Bytes of a digest an item keeps: bytes 4..7 (the level's bits come from bytes 0..1, so they are not repeated). */
const ENTRY_BYTES = 4;
/** Byte offset of the kept entry in a digest. */
const ENTRY_AT = 4;

/** The level of a part holding `digests` identifier digests: the fewest buckets that hold at most {@link DIGESTS_PER_ITEM} each on average. */
export function copyIndexLevel(digests: number): number {
  let level = 0;
  while (level < MAX_COPY_INDEX_LEVEL && digests > DIGESTS_PER_ITEM << level) level++;
  return level;
}

/** The bucket of a digest (at `bytes[at, at + 32)`) at a level: its first `level` bits. */
const bucketOf = (bytes: Uint8Array, at: number, level: number): number =>
  level === 0 ? 0 : ((bytes[at]! << 8) | bytes[at + 1]!) >>> (16 - level);

/** The kept entry of a digest, as an unsigned 32-bit number. */
const entryOf = (bytes: Uint8Array, at: number): number =>
  ((bytes[at + ENTRY_AT]! << 24) | (bytes[at + ENTRY_AT + 1]! << 16) | (bytes[at + ENTRY_AT + 2]! << 8) | bytes[at + ENTRY_AT + 3]!) >>> 0;

/**
 * The index items of one result part: one per bucket of its level that holds
 * a digest, each with the 4-byte entries of its bucket's digests (sorted,
 * distinct). None for a part without a contact identifier.
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
  const level = copyIndexLevel(digests);
  // bucket × 2^32 + entry (exact in a double: level ≤ 10 bits over 32), sorted once: by bucket, then entry.
  const keyed = new Float64Array(digests);
  let n = 0;
  const again = new ResultPartReader(part);
  const bytes = again.bytes;
  while (again.nextAccount())
    while (again.nextContact())
      for (let at = again.contactDigestsStart; at + DIGEST_BYTES <= again.contactDigestsEnd; at += DIGEST_BYTES)
        keyed[n++] = bucketOf(bytes, at, level) * 2 ** 32 + entryOf(bytes, at);
  keyed.sort();
  const items: Record<string, unknown>[] = [];
  for (let start = 0; start < n;) {
    const bucket = Math.floor(keyed[start]! / 2 ** 32);
    let end = start;
    while (end < n && Math.floor(keyed[end]! / 2 ** 32) === bucket) end++;
    const packed = Buffer.alloc((end - start) * ENTRY_BYTES);
    let length = 0;
    for (let i = start; i < end; i++)
      if (i === start || keyed[i] !== keyed[i - 1]) length = packed.writeUInt32BE(keyed[i]! - bucket * 2 ** 32, length);
    items.push({ ...keys.copyIndex(level, bucket, partKey), type: 'copyIndex', entries: packed.subarray(0, length), ttl });
    start = end;
  }
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
          const bucket = bucketOf(digest, 0, level);
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
            for (const item of page.Items ?? []) {
              const stored = item.entries as Uint8Array;
              const packed = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
              for (let at = 0; at + ENTRY_BYTES <= packed.length; at += ENTRY_BYTES)
                if (entries.has(packed.readUInt32BE(at))) {
                  found.add(String(item.sk));
                  break;
                }
            }
        },
        { concurrency: LOOKUP_CONCURRENCY },
      );
      return [...found].sort();
    },
  };
}
