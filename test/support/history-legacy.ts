/**
 * Bucket bytes as the history wrote them before format 4 (lib/history/store.ts `encodeBucket`; docs/data-model.md
 * "Recency and CRM targets"): formats 1–3 stored each account's 8-byte hash. The store still reads them; tests write
 * them to check that an organization whose buckets mix formats reads as one written all in the current format.
 */
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { addressOf, bucketOf, fingerprintOf, openBucket, pushVarint, tailOf, valueInBucket } from '../../lib/history/store';

/** The 8-byte hash formats 1–3 stored for an account (first 8 bytes of SHA-256 of its ID), latin1. */
export const legacyHashOf = (accountId: string): string => hash('sha256', accountId, 'buffer').toString('latin1', 0, 8);

/**
 * Format 3 (or 2, `sorted` false: the same layout with each group's hashes in the given order): format byte, implied
 * byte count p (⌊depth / 8⌋, at most 3, fewer when the hashes do not share them), the p bytes, a varint group count, per
 * group in ascending value order the value's increase and the count (varints), then the hashes without their first p
 * bytes, in group order.
 * @param entries - 8-byte hash ({@link legacyHashOf}) → value (epoch ms × 2 + CRM flag), values non-zero.
 */
export function encodeLegacyBucket(entries: ReadonlyMap<string, number>, depth: number, sorted = true): Buffer {
  const groups = new Map<number, string[]>();
  for (const [hash8, value] of entries) groups.set(value, [...(groups.get(value) ?? []), hash8]);
  const all = [...entries.keys()];
  let implied = all.length === 0 ? 0 : Math.min(3, Math.floor(depth / 8));
  while (implied > 0 && all.some((h) => h.slice(0, implied) !== all[0]!.slice(0, implied))) implied--;
  const header = [sorted ? 3 : 2, implied, ...Buffer.from((all[0] ?? '').slice(0, implied), 'latin1')];
  const values = [...groups.keys()].sort((a, b) => a - b);
  pushVarint(header, values.length);
  let previous = 0;
  for (const value of values) {
    pushVarint(header, value - previous);
    pushVarint(header, groups.get(value)!.length);
    previous = value;
  }
  const hashes = values.flatMap((value) => {
    const group = groups.get(value)!;
    return sorted ? [...group].sort() : group;
  });
  return Buffer.concat([Buffer.from(header), Buffer.from(hashes.map((h) => h.slice(implied)).join(''), 'latin1')]);
}

/**
 * Format 1 (before issue #43): u8 format, u16 group count, per group in ascending value order a 48-bit value and a u16
 * count (big-endian), then the 8-byte hashes in group order.
 * @param entries - 8-byte hash ({@link legacyHashOf}) → value (epoch ms × 2 + CRM flag), values non-zero.
 */
export function encodeFormat1Bucket(entries: ReadonlyMap<string, number>): Buffer {
  const groups = new Map<number, string[]>();
  for (const [hash8, value] of entries) groups.set(value, [...(groups.get(value) ?? []), hash8]);
  const values = [...groups.keys()].sort((a, b) => a - b);
  const header = Buffer.alloc(3 + values.length * 8);
  header.writeUInt8(1, 0);
  header.writeUInt16BE(values.length, 1);
  values.forEach((value, g) => {
    header.writeUIntBE(value, 3 + g * 8, 6);
    header.writeUInt16BE(groups.get(value)!.length, 3 + g * 8 + 6);
  });
  return Buffer.concat([header, Buffer.from(values.flatMap((value) => groups.get(value)!).join(''), 'latin1')]);
}

/** The instant the history fixtures of the unit tests count from (epoch ms). */
export const FIXTURE_NOW = Date.UTC(2026, 10, 1);

/** One day (ms). */
export const DAY_MS = 86_400_000;

/** History values (epoch ms × 2 + CRM flag) drawn up to 3,000 days before {@link FIXTURE_NOW}, 1 to `maxLength` of them. */
export const historyValues = (maxLength: number): fc.Arbitrary<number[]> =>
  fc
    .array(fc.record({ days: fc.integer({ min: 0, max: 3_000 }), ms: fc.integer({ min: 0, max: DAY_MS - 1 }), crm: fc.boolean() }), {
      minLength: 1,
      maxLength,
    })
    .map((times) => times.map(({ days, ms, crm }) => (FIXTURE_NOW - days * DAY_MS - ms) * 2 + (crm ? 1 : 0)));

/**
 * The accounts `ids` laid into the buckets of an organization of `buckets` buckets (lib/history/store.ts `bucketOf`):
 * per bucket its depth, fingerprint → value (the `i`-th ID's value `valueOf(i)`), and the same by 8-byte hash
 * ({@link legacyHashOf}, for formats 1–3).
 */
export function bucketEntries(ids: readonly string[], valueOf: (i: number) => number, buckets: number) {
  const byBucket = new Map<number, { depth: number; entries: Map<string, number>; legacy: Map<string, number> }>();
  ids.forEach((id, i) => {
    const fingerprint = fingerprintOf(id);
    const { bucket, depth } = bucketOf(addressOf(fingerprint), buckets);
    let group = byBucket.get(bucket);
    if (!group) byBucket.set(bucket, (group = { depth, entries: new Map(), legacy: new Map() }));
    group.entries.set(fingerprint, valueOf(i));
    group.legacy.set(legacyHashOf(id), valueOf(i));
  });
  return byBucket;
}

/**
 * Looks up accounts in an encoded bucket (any format) the way the evaluation does (`openBucket`, then `valueInBucket`
 * for each) and visits those it holds, with their value (epoch ms × 2 + CRM flag).
 * @param fingerprints - the accounts' fingerprints (`fingerprintOf`).
 * @throws Error on an unknown format.
 */
export function lookupBucket(
  bytes: Uint8Array,
  fingerprints: readonly string[],
  visit: (fingerprint: string, value: number) => void,
): void {
  if (bytes.length === 0 || fingerprints.length === 0) return;
  const lookup = openBucket(bytes);
  for (const fingerprint of fingerprints) {
    const value = valueInBucket(lookup, addressOf(fingerprint), tailOf(fingerprint));
    if (value !== -1) visit(fingerprint, value);
  }
}
