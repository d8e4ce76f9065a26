/**
 * Result parts of the layouts written before version 3 (lib/results/parts.ts
 * module comment), made from a version 3 part with today's fields, so tests
 * prove those parts are still read: version 2 (`CEP2`: cells and JSON, no
 * header, no digests) and version 1 (`CEP1`: cells only).
 */
import { ResultPartReader } from '../../lib/results/parts';

const u32 = (n: number) => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n, 0);
  return b;
};

/** The same part in layout version `version` (2 or 1). */
export function asLegacyPart(part: Buffer, version: 1 | 2): Buffer {
  const reader = new ResultPartReader(part);
  const bytes = reader.bytes;
  const pieces: Buffer[] = [Buffer.from(`CEP${version}`, 'latin1')];
  while (reader.nextAccount()) {
    const account: Buffer[] = [u32(reader.accountEnd - reader.accountStart), bytes.subarray(reader.accountStart, reader.accountEnd)];
    if (version === 2)
      account.push(u32(reader.accountJsonEnd - reader.accountJsonStart), bytes.subarray(reader.accountJsonStart, reader.accountJsonEnd));
    while (reader.nextContact()) {
      account.push(
        Buffer.from([reader.contactFlags]),
        u32(reader.contactEnd - reader.contactStart),
        bytes.subarray(reader.contactStart, reader.contactEnd),
      );
      if (version === 2)
        account.push(u32(reader.contactJsonEnd - reader.contactJsonStart), bytes.subarray(reader.contactJsonStart, reader.contactJsonEnd));
    }
    const body = Buffer.concat(account);
    pieces.push(u32(body.length), body);
  }
  return Buffer.concat(pieces);
}
