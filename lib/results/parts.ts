/**
 * Enrichment results in S3: one part per workflow batch, so export and the
 * results readers never need the warehouse again (docs/data-model.md
 * "Result parts").
 *
 * A part serves two readers. The CSV export needs the batch's rows already
 * encoded as the file writes them (docs/csv.md: cells neutralized and RFC
 * 4180-escaped, contacts best first), with per contact the flags its filters
 * read, so it only filters and concatenates bytes. The results page and
 * stream (docs/results.md) need the raw values (a neutralized cell's `'`
 * cannot be undone without ambiguity), so each account and each contact also
 * carries its values as a JSON array (lib/results/json.ts owns the keys and
 * their order): a reader parses it, and the export skips it by its length. Only `enriched_at` is missing from the rows: the
 * campaign's completion time is not known while a batch runs; the export
 * appends it.
 *
 * Binary layout, version 2 (integers unsigned 32-bit little-endian, `u8`
 * one byte):
 *
 *     part    = "CEP2" account*
 *     account = u32 rest    (bytes of this account after this field)
 *               u32 cells   (bytes of the account cells)
 *               account cells: `account_id` … `account_country`, each followed by ","
 *               u32 json    (bytes of the account's JSON)
 *               account JSON (UTF-8 array `[accountId, outcome, name, …]`, {@link resultAccountJson})
 *               contact*    (best first, until the account's end)
 *     contact = u8 flags    (1 mobile phone, 2 email: lib/results/csv.ts contactFlags)
 *               u32 cells   (bytes of the contact cells)
 *               contact cells: `contact_id` … `contact_country`, each followed by ","
 *               u32 json    (bytes of the contact's JSON)
 *               contact JSON (UTF-8 array of its values, {@link resultContactJson})
 *
 * Version 1 (`"CEP1"`, the same without the two JSON fields) was written
 * until this release; it is still read (the export needs only the cells) for
 * as long as such parts can exist: one result access period (30 days, see
 * docs/lifetimes.md) after the deployment that writes version 2. A version 1
 * part has no raw values ({@link ResultPartReader.hasJson} false).
 *
 * A contact row is account cells + contact cells + `enriched_at` CRLF; an
 * account-only row is account cells + twelve commas + `enriched_at` CRLF.
 * This module is the one owner of the layout: {@link encodePart} writes it,
 * {@link ResultPartReader} reads it.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { listKeys } from '../storage/prefixes';
import {
  contactFlags,
  decodeContactIdentifiers,
  encodeAccountCells,
  encodeContactCells,
  orderContacts,
  type ContactIdentifierFields,
  type EnrichedAccount,
} from './csv';
import { contactFromStored, resultAccountJson, resultContactJson } from './json';
import { objectKeys } from '../objects';

/** Prefix of an attempt's result parts (lib/objects.ts). */
export const resultsPrefix = objectKeys.resultsPrefix;

/**
 * Object key of one result part: a workflow batch's, or one part (`chunk`) of
 * a batch made readable in parts (lib/results/sequence.ts). Keys sort in
 * eligible-list order either way.
 */
export const resultPartKey = (prefix: string, index: number, chunk?: number) =>
  `${prefix}part-${String(index).padStart(6, '0')}${chunk === undefined ? '' : `-${String(chunk).padStart(4, '0')}`}.bin`;

/** The first bytes of every result part written now: the layout's name and version. */
const MAGIC = Buffer.from('CEP2', 'latin1');
/** The first bytes of a version 1 part (no JSON fields), still read. */
const MAGIC_V1 = Buffer.from('CEP1', 'latin1');

/**
 * Encodes the accounts of one batch as a result part (layout in the module
 * comment), in the order given; each account's contacts best first
 * (docs/csv.md).
 * @returns the part's bytes (about the size of the batch's CSV rows).
 */
export function encodePart(accounts: readonly EnrichedAccount[]): Buffer {
  const pieces: Buffer[] = [MAGIC];
  for (const account of accounts) {
    const cells = Buffer.from(encodeAccountCells(account), 'utf8');
    const json = Buffer.from(resultAccountJson(account), 'utf8');
    const header = Buffer.allocUnsafe(8);
    const jsonHeader = Buffer.allocUnsafe(4);
    jsonHeader.writeUInt32LE(json.length, 0);
    pieces.push(header, cells, jsonHeader, json);
    let rest = 4 + cells.length + 4 + json.length;
    for (const contact of orderContacts(account.contacts)) {
      const contactCells = Buffer.from(encodeContactCells(contact), 'utf8');
      const contactJson = Buffer.from(resultContactJson(contact), 'utf8');
      const contactHeader = Buffer.allocUnsafe(5);
      contactHeader[0] = contactFlags(contact);
      contactHeader.writeUInt32LE(contactCells.length, 1);
      const contactJsonHeader = Buffer.allocUnsafe(4);
      contactJsonHeader.writeUInt32LE(contactJson.length, 0);
      pieces.push(contactHeader, contactCells, contactJsonHeader, contactJson);
      rest += 5 + contactCells.length + 4 + contactJson.length;
    }
    header.writeUInt32LE(rest, 0);
    header.writeUInt32LE(cells.length, 4);
  }
  return Buffer.concat(pieces);
}

/** Thrown when bytes read as a result part are not one (another layout, or cut short). */
export class ResultPartFormatError extends Error {
  override name = 'ResultPartFormatError';
}

/**
 * A cursor over the accounts and contacts of one result part, allocating
 * nothing per account: {@link nextAccount} moves to the next account and sets
 * the range of its cells in {@link bytes}; {@link nextContact} moves to its
 * next contact (best first) and sets the contact's flags and cell range.
 * @example
 * const part = new ResultPartReader(bytes);
 * while (part.nextAccount()) while (part.nextContact()) use(part.contactFlags, part.bytes.subarray(part.contactStart, part.contactEnd));
 */
export class ResultPartReader {
  /** The part's bytes (a view of what was given, not a copy). */
  readonly bytes: Buffer;
  /** Start of the current account's cells in {@link bytes}. */
  accountStart = 0;
  /** End (exclusive) of the current account's cells. */
  accountEnd = 0;
  /** Flags of the current contact (lib/results/csv.ts `CONTACT_HAS_MOBILE`, `CONTACT_HAS_EMAIL`). */
  contactFlags = 0;
  /** Start of the current contact's cells in {@link bytes}. */
  contactStart = 0;
  /** End (exclusive) of the current contact's cells. */
  contactEnd = 0;
  /** Start of the current account's JSON in {@link bytes} (version 2; equal to the end in version 1). */
  accountJsonStart = 0;
  /** End (exclusive) of the current account's JSON. */
  accountJsonEnd = 0;
  /** Start of the current contact's JSON in {@link bytes} (version 2; equal to the end in version 1). */
  contactJsonStart = 0;
  /** End (exclusive) of the current contact's JSON. */
  contactJsonEnd = 0;
  /** Whether the part carries raw values (layout version 2 and later). */
  readonly hasJson: boolean;
  private nextAccountAt = MAGIC.length;
  private accountLimit = 0;
  private cursor = 0;

  /** @throws ResultPartFormatError when the bytes do not start with a known layout's magic (CEP2, CEP1). */
  constructor(part: Uint8Array) {
    this.bytes = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
    const magic = this.bytes.subarray(0, MAGIC.length);
    if (this.bytes.length >= MAGIC.length && MAGIC.equals(magic)) this.hasJson = true;
    else if (this.bytes.length >= MAGIC.length && MAGIC_V1.equals(magic)) this.hasJson = false;
    else throw new ResultPartFormatError('Not a result part of layout CEP2 or CEP1');
  }

  /** Reads the u32 length at `at` and the range after it; throws when it passes `limit`. */
  private jsonAt(at: number, limit: number): number {
    if (at + 4 > limit) throw new ResultPartFormatError('Result part cut short');
    const end = at + 4 + this.bytes.readUInt32LE(at);
    if (end > limit) throw new ResultPartFormatError('Result part cut short');
    return end;
  }

  /** The current account's JSON text (version 2). @throws ResultPartFormatError on a version 1 part. */
  accountJson(): string {
    if (!this.hasJson) throw new ResultPartFormatError('A CEP1 result part holds no raw values');
    return this.bytes.toString('utf8', this.accountJsonStart, this.accountJsonEnd);
  }

  /** The current contact's JSON text (version 2). @throws ResultPartFormatError on a version 1 part. */
  contactJson(): string {
    if (!this.hasJson) throw new ResultPartFormatError('A CEP1 result part holds no raw values');
    return this.bytes.toString('utf8', this.contactJsonStart, this.contactJsonEnd);
  }

  /**
   * Moves to the next account (skipping any contacts not read).
   * @returns false after the last one.
   * @throws ResultPartFormatError when the part is cut short.
   */
  nextAccount(): boolean {
    const at = this.nextAccountAt;
    if (at >= this.bytes.length) return false;
    if (at + 8 > this.bytes.length) throw new ResultPartFormatError('Result part cut short');
    const limit = at + 4 + this.bytes.readUInt32LE(at);
    const cellsEnd = at + 8 + this.bytes.readUInt32LE(at + 4);
    if (limit > this.bytes.length || cellsEnd > limit) throw new ResultPartFormatError('Result part cut short');
    this.accountStart = at + 8;
    this.accountEnd = cellsEnd;
    this.cursor = cellsEnd;
    if (this.hasJson) {
      const jsonEnd = this.jsonAt(cellsEnd, limit);
      this.accountJsonStart = cellsEnd + 4;
      this.accountJsonEnd = jsonEnd;
      this.cursor = jsonEnd;
    } else {
      this.accountJsonStart = this.accountJsonEnd = cellsEnd;
    }
    this.accountLimit = limit;
    this.nextAccountAt = limit;
    return true;
  }

  /**
   * Moves to the current account's next contact, best first.
   * @returns false after its last one.
   * @throws ResultPartFormatError when the account is cut short.
   */
  nextContact(): boolean {
    const at = this.cursor;
    if (at >= this.accountLimit) return false;
    if (at + 5 > this.accountLimit) throw new ResultPartFormatError('Result part cut short');
    const end = at + 5 + this.bytes.readUInt32LE(at + 1);
    if (end > this.accountLimit) throw new ResultPartFormatError('Result part cut short');
    this.contactFlags = this.bytes[at]!;
    this.contactStart = at + 5;
    this.contactEnd = end;
    this.cursor = end;
    if (this.hasJson) {
      const jsonEnd = this.jsonAt(end, this.accountLimit);
      this.contactJsonStart = end + 4;
      this.contactJsonEnd = jsonEnd;
      this.cursor = jsonEnd;
    } else {
      this.contactJsonStart = this.contactJsonEnd = end;
    }
    return true;
  }
}

/**
 * The identifying fields of the reader's current contact: from its raw JSON
 * ({@link contactFromStored}) in a version 2 part, from its encoded cells
 * (lib/results/csv.ts `decodeContactIdentifiers`) in a version 1 part, which
 * has no JSON. What privacy's suppression check and erasure read
 * (docs/privacy.md).
 * @throws ResultPartFormatError / SyntaxError when the contact's bytes are damaged.
 */
export function storedContactIdentifiers(reader: ResultPartReader): ContactIdentifierFields {
  if (!reader.hasJson) return decodeContactIdentifiers(reader.bytes, reader.contactStart, reader.contactEnd);
  const { contactId, email, mobilePhone, directPhone, linkedinUrl } = contactFromStored(reader.contactJson());
  return { contactId, email, mobilePhone, directPhone, linkedinUrl };
}

/**
 * A part without some of its contacts (an erasure rewrites stored results):
 * the same accounts in the same order, each keeping the contacts `keep`
 * accepts (it reads the reader's current contact), in the part's own layout
 * version; a dropped contact leaves with both its cells and its JSON.
 * @returns the new bytes and how many contacts were dropped (0: `bytes` is the original, nothing to write).
 * @throws ResultPartFormatError when `part` is not a result part.
 */
export function withoutContacts(part: Uint8Array, keep: (reader: ResultPartReader) => boolean): { bytes: Buffer; removed: number } {
  const reader = new ResultPartReader(part);
  const source = reader.bytes;
  const pieces: Buffer[] = [source.subarray(0, MAGIC.length)];
  let removed = 0;
  while (reader.nextAccount()) {
    const header = Buffer.allocUnsafe(8);
    // The account's cells and, in version 2, its JSON length and JSON (the account JSON names no contact).
    const head = source.subarray(reader.accountStart, reader.hasJson ? reader.accountJsonEnd : reader.accountEnd);
    pieces.push(header, head);
    let rest = 4 + head.length;
    while (reader.nextContact()) {
      if (!keep(reader)) {
        removed++;
        continue;
      }
      // Flags, cells length, cells and, in version 2, the JSON length and JSON.
      const contact = source.subarray(reader.contactStart - 5, reader.hasJson ? reader.contactJsonEnd : reader.contactEnd);
      pieces.push(contact);
      rest += contact.length;
    }
    header.writeUInt32LE(rest, 0);
    header.writeUInt32LE(reader.accountEnd - reader.accountStart, 4);
  }
  return removed === 0 ? { bytes: source, removed } : { bytes: Buffer.concat(pieces), removed };
}

/**
 * Suffix of the parts written before this layout: JSON lines, one enriched
 * account a line. Results live one access period (docs/lifetimes.md: 30 days), so
 * such parts can exist for that long after a deployment; remove this reading
 * once none can be left.
 */
const LEGACY_PART_SUFFIX = '.jsonl';

/** A JSON-lines part (the former layout) re-encoded in the current one: the same rows, from the same rules. */
function encodeLegacyPart(bytes: Uint8Array): Buffer {
  // Split at LF only: JSON.stringify escapes CR and LF inside strings, but not U+2028/U+2029.
  const lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n');
  return encodePart(lines.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as EnrichedAccount));
}

/** Storage of result parts. */
export interface ResultStore {
  /** Writes (or rewrites, idempotently: the same accounts give the same bytes) one part, encoded by {@link encodePart}; `chunk`: see {@link resultPartKey}. */
  putPart(prefix: string, index: number, accounts: readonly EnrichedAccount[], chunk?: number): Promise<void>;
  /** Keys of every part under a prefix, in index order. */
  listParts(prefix: string): Promise<string[]>;
  /**
   * Reads one whole part (a batch's rows: a few MB at most), in the current
   * layout (a part of the former JSON-lines layout is re-encoded); read it
   * with {@link ResultPartReader}.
   */
  readPart(key: string): Promise<Uint8Array>;
  /**
   * The part(s) of one workflow batch, in order: its own part, or, for a
   * batch made readable in parts, each of them ({@link resultPartKey}).
   */
  readBatchParts(prefix: string, index: number): Promise<Uint8Array[]>;
  /** Replaces one part (by key) with bytes of the current layout ({@link withoutContacts}). */
  replacePart(key: string, bytes: Uint8Array): Promise<void>;
}

/** Builds the S3 implementation of {@link ResultStore}. */
export function createResultStore({ client, bucketName }: { client: S3Client; bucketName: string }): ResultStore {
  const listParts = async (prefix: string) => (await listKeys(client, bucketName, prefix)).sort();
  const readPart = async (key: string) => {
    const { Body } = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
    if (!Body) throw new Error(`Result part ${key} has no body`);
    const bytes = await Body.transformToByteArray();
    return key.endsWith(LEGACY_PART_SUFFIX) ? encodeLegacyPart(bytes) : bytes;
  };
  return {
    async putPart(prefix, index, accounts, chunk) {
      await client.send(
        new PutObjectCommand({
          Bucket: bucketName,
          Key: resultPartKey(prefix, index, chunk),
          Body: encodePart(accounts),
          ContentType: 'application/octet-stream',
        }),
      );
    },
    listParts,
    readPart,
    async readBatchParts(prefix, index) {
      try {
        return [await readPart(resultPartKey(prefix, index))];
      } catch (error) {
        if ((error as { name?: string }).name !== 'NoSuchKey') throw error;
        // A batch made readable in parts: `part-<index>-<chunk>.bin`, listed in order.
        const keys = await listParts(resultPartKey(prefix, index).replace(/\.bin$/, '-'));
        if (keys.length === 0) throw error;
        return Promise.all(keys.map((key) => readPart(key)));
      }
    },
    async replacePart(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucketName, Key: key, Body: bytes, ContentType: 'application/octet-stream' }));
    },
  };
}
