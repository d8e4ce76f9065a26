/**
 * Result parts of the layouts written before version 4 (lib/results/parts.ts
 * module comment), made from a version 4 part with today's fields, so tests
 * prove those parts are still read: version 3 (`CEP3`: header, digests, each
 * account's and contact's values as a JSON array), version 2 (`CEP2`: cells
 * and JSON arrays, no header, no digests) and version 1 (`CEP1`: cells only).
 */
import { ResultPartReader } from '../../lib/results/parts';
import { RESULT_ACCOUNT_KEYS, RESULT_CONTACT_KEYS, type ResultAccountHead } from '../../lib/results/json';

const u32 = (n: number) => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n, 0);
  return b;
};

/** A stored text as its length and bytes. */
const sized = (text: string) => {
  const bytes = Buffer.from(text, 'utf8');
  return [u32(bytes.length), bytes];
};

/** The same part in layout version `version` (3, 2 or 1). */
export function asLegacyPart(part: Buffer, version: 1 | 2 | 3): Buffer {
  const reader = new ResultPartReader(part);
  const bytes = reader.bytes;
  const pieces: Buffer[] = [Buffer.from(`CEP${version}`, 'latin1')];
  // Version 3 has version 4's header (the same field names).
  if (version === 3) pieces.push(bytes.subarray(4, 8 + bytes.readUInt32LE(4)));
  while (reader.nextAccount()) {
    const account: Buffer[] = [u32(reader.accountEnd - reader.accountStart), bytes.subarray(reader.accountStart, reader.accountEnd)];
    if (version >= 2) {
      const head = JSON.parse(reader.accountJson()) as ResultAccountHead;
      const account_ = head.account as unknown as Record<string, unknown>;
      account.push(...sized(JSON.stringify([head.accountId, head.outcome, ...RESULT_ACCOUNT_KEYS.map((key) => account_[key])])));
    }
    while (reader.nextContact()) {
      account.push(Buffer.from([reader.contactFlags]));
      if (version === 3)
        account.push(
          Buffer.from([(reader.contactDigestsEnd - reader.contactDigestsStart) / 32]),
          bytes.subarray(reader.contactDigestsStart, reader.contactDigestsEnd),
        );
      account.push(u32(reader.contactEnd - reader.contactStart), bytes.subarray(reader.contactStart, reader.contactEnd));
      if (version >= 2) {
        const contact = JSON.parse(reader.contactJson()) as Record<string, unknown>;
        account.push(...sized(JSON.stringify(RESULT_CONTACT_KEYS.map((key) => contact[key]))));
      }
    }
    const body = Buffer.concat(account);
    pieces.push(u32(body.length), body);
  }
  return Buffer.concat(pieces);
}
