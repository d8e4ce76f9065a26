/**
 * Enrichment results in S3: one part per workflow batch, so export and the
 * results readers never need the warehouse again (docs/data-model.md
 * "Result parts").
 *
 * A part serves three readers. The CSV export needs the batch's rows already
 * encoded as the file writes them (docs/csv.md: cells neutralized and RFC
 * 4180-escaped, contacts best first), with per contact the flags its filters
 * read, so it only filters and concatenates bytes. The results page and
 * stream (docs/results.md) need the raw values (a neutralized cell's `'`
 * cannot be undone without ambiguity), so each account and each contact also
 * carries its answer's JSON text, keys and raw values (lib/results/json.ts):
 * a reader splices the texts into its answer without parsing them (measured
 * on a 1,000-account page: parsing 11,000 stored arrays and encoding the
 * answer again made the page 3.6 × to 5 × the CPU of reading its part), and
 * the export skips them by their length. The suppression check and the
 * erasure (docs/privacy.md) need each contact's identifiers, so each contact
 * carries their SHA-256 digests (lib/warehouse/identifiers.ts
 * `contactDigests`), compared as bytes: nothing is decoded or hashed to
 * decide whether a stored contact may be delivered. Only `enriched_at` is
 * missing from the rows: the campaign's completion time is not known while a
 * batch runs; the export appends it.
 *
 * Binary layout, version 4 (integers unsigned 32-bit little-endian, `u8`
 * one byte):
 *
 *     part    = "CEP4" u32 header-bytes header account*
 *     header  = UTF-8 JSON {"account":{"cells":[column…],"json":[key…]},
 *                           "contact":{"cells":[column…],"json":[key…]}}
 *               (the part's fields: CSV columns of its cells, JSON keys of its texts, in order)
 *     account = u32 rest    (bytes of this account after this field)
 *               u32 cells   (bytes of the account cells) · account cells, each followed by ","
 *               u32 json    (bytes of the account's JSON) · `{"accountId":…,"outcome":…,"account":{…}}` ({@link resultAccountJson})
 *               contact*    (best first, until the account's end)
 *     contact = u8 flags    (1 mobile phone, 2 email: lib/results/csv.ts contactFlags)
 *               u8 digests  (how many) · 32 bytes each: SHA-256 of `type:normalized` per identifier
 *               u32 cells   · contact cells, each followed by ","
 *               u32 json    · the contact's JSON object, as the results show it ({@link resultContactJson})
 *
 * The header names the fields, from the one declaration
 * (lib/warehouse/fields.ts), so adding, removing or moving a field needs no
 * new layout: a reader whose fields differ from a part's header re-lays the
 * part by name when it reads it ({@link ResultPartReader}): a column the
 * part lacks is an empty cell, a key it lacks is null. Parts written with
 * today's fields (all but the oldest) are read as they are.
 *
 * Versions 3 (`"CEP3"`: each account's and contact's values as a JSON
 * array, `[accountId, outcome, …values]` and `[…values]`, in the header's key
 * order), 2 (`"CEP2"`: no header, no digests) and 1 (`"CEP1"`: no header, no
 * digests, no JSON) were written before this release; they are still read,
 * re-laid into version 4 when read (digests computed then for versions 1
 * and 2; a version 1 part's values decoded from its cells), for as long as
 * such parts can exist: one result access period (30 days, see
 * docs/lifetimes.md) after the deployment that writes version 4. Remove
 * {@link LEGACY_HEADER}, {@link MAGIC_V3} and their reading then.
 *
 * A contact row is account cells + contact cells + `enriched_at` CRLF; an
 * account-only row is account cells + one comma per contact column +
 * `enriched_at` CRLF. This module is the one owner of the layout:
 * {@link encodePart} writes it, {@link ResultPartReader} reads it.
 */
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { listKeys } from '../storage/prefixes';
import { CONTACT_DIGESTS_MAX_BYTES, contactDigests, DIGEST_BYTES, writeContactDigests } from '../warehouse/identifiers';
import {
  ACCOUNT_FIELDS,
  CONTACT_FIELDS,
  exportedFields,
  resultFields,
  type ExportedField,
  type FieldDeclaration,
  type ResultField,
} from '../warehouse/fields';
import {
  contactFlags,
  decodeCell,
  encodeCells,
  orderContacts,
  splitEncodedCells,
  type ContactIdentifierFields,
  type EnrichedAccount,
} from './csv';
import {
  accountHeadText,
  contactFromStored,
  contactText,
  CONTACTS_OPENING,
  ITEM_CLOSING,
  itemOpening,
  type JsonBytes,
  resultAccountJson,
  resultContactJson,
  resultItemText,
  SEQ_OPENING,
  RESULT_ACCOUNT_KEYS,
  RESULT_CONTACT_KEYS,
} from './json';
import { objectKeys } from '../objects';
import { GrowingBytes } from './bytes';

/** Prefix of an attempt's result parts (lib/objects.ts). */
export const resultsPrefix = objectKeys.resultsPrefix;

/**
 * Object key of one result part: a workflow batch's, or one part (`chunk`) of
 * a batch made readable in parts (lib/results/sequence.ts). Keys sort in
 * eligible-list order either way.
 */
export const resultPartKey = (prefix: string, index: number, chunk?: number) =>
  `${prefix}part-${String(index).padStart(6, '0')}${chunk === undefined ? '' : `-${String(chunk).padStart(4, '0')}`}.bin`;

/** Thrown when bytes read as a result part are not one (another layout, or cut short). */
export class ResultPartFormatError extends Error {
  override name = 'ResultPartFormatError';
}

/** The fields a part is written with: account and contact declarations (lib/warehouse/fields.ts). */
export interface PartFields {
  account: readonly FieldDeclaration[];
  contact: readonly FieldDeclaration[];
}

/** Today's fields: what {@link encodePart} writes and every reader reads parts as. */
export const CURRENT_FIELDS: PartFields = { account: ACCOUNT_FIELDS, contact: CONTACT_FIELDS };

/** A part's header: the names of its stored cells (CSV columns) and JSON values (JSON keys), in order. */
export interface PartHeader {
  account: { cells: string[]; json: string[] };
  contact: { cells: string[]; json: string[] };
}

/** The header of parts written with `fields`. */
export const headerOf = (fields: PartFields): PartHeader => ({
  account: { cells: columnsOf(fields.account).map((f) => f.column), json: jsonOf(fields.account).map((f) => f.json) },
  contact: { cells: columnsOf(fields.contact).map((f) => f.column), json: jsonOf(fields.contact).map((f) => f.json) },
});

/** The fields of a list with a CSV column, in order (lib/warehouse/fields.ts `exportedFields`, for a list not known at compile time). */
const columnsOf = (fields: readonly FieldDeclaration[]) => exportedFields(fields) as unknown as ExportedField[];
/** The fields of a list with a JSON key, in order (lib/warehouse/fields.ts `resultFields`). */
const jsonOf = (fields: readonly FieldDeclaration[]) => resultFields(fields) as unknown as ResultField[];

/**
 * The fields of every version 2 and version 1 part, which name none: the
 * fields declared when version 3 replaced them (frozen: such parts never
 * change). Remove with their reading (module comment).
 */
const LEGACY_HEADER: PartHeader = {
  account: {
    cells: ['account_id', 'account_name', 'account_domain', 'account_industry', 'account_employee_count', 'account_country'],
    json: ['name', 'domain', 'industry', 'employeeCount', 'country'],
  },
  contact: {
    cells: [
      'contact_id',
      'first_name',
      'last_name',
      'job_title',
      'seniority',
      'department',
      'email',
      'email_status',
      'mobile_phone',
      'direct_phone',
      'linkedin_url',
      'contact_country',
    ],
    json: [
      'contactId',
      'firstName',
      'lastName',
      'jobTitle',
      'seniority',
      'department',
      'email',
      'emailStatus',
      'mobilePhone',
      'directPhone',
      'linkedinUrl',
      'country',
    ],
  },
};

/** The first bytes of every result part written now: the layout's name and version. */
const MAGIC = Buffer.from('CEP4', 'latin1');
/** The first bytes of a version 3 part (values as JSON arrays), still read. */
const MAGIC_V3 = Buffer.from('CEP3', 'latin1');
/** The first bytes of a version 2 part (no header, no digests), still read. */
const MAGIC_V2 = Buffer.from('CEP2', 'latin1');
/** The first bytes of a version 1 part (no header, no digests, no JSON), still read. */
const MAGIC_V1 = Buffer.from('CEP1', 'latin1');

/** The header bytes of today's parts: a part whose header equals them is read as it is. */
const CURRENT_HEADER_BYTES = Buffer.from(JSON.stringify(headerOf(CURRENT_FIELDS)), 'utf8');

/** One contact's pieces, as {@link PartWriter.account} lays them out: texts are encoded as UTF-8 where they are written. */
interface ContactPieces {
  flags: number;
  /** Its digests, {@link DIGEST_BYTES} each, back to back. */
  digests: Uint8Array;
  cells: string | Uint8Array;
  json: string | Uint8Array;
}

/**
 * Writes a version 4 part into one growing buffer: each text is encoded in
 * place behind its length, so a part of 1,000 accounts × 10 contacts is not
 * ~100,000 small buffers concatenated at the end (their allocation and
 * garbage were a tenth of the workflow's CPU locally; bench `scale`, the
 * workflow's profile).
 */
class PartWriter extends GrowingBytes {
  /** @param expected - bytes the part will likely need (it grows past them when needed). */
  constructor(header: Uint8Array, expected: number) {
    super(Math.max(expected, MAGIC.length + 4 + header.length));
    this.bytes(MAGIC);
    this.u32(header.length);
    this.bytes(header);
  }

  /** Appends one account (cells, JSON, contacts in order) in the version 4 layout (version 3's record is the same). */
  account(cells: string | Uint8Array, json: string | Uint8Array, contacts: readonly ContactPieces[]): void {
    const restAt = this.beginAccount(cells, json);
    for (const contact of contacts) this.contact(contact.flags, contact.digests, contact.cells, contact.json);
    this.endAccount(restAt);
  }

  /**
   * Starts an account: its `rest` field (written by {@link endAccount}), cells and JSON; its contacts follow ({@link contact}).
   * @returns where its `rest` field is, for {@link endAccount}.
   */
  beginAccount(cells: string | Uint8Array, json: string | Uint8Array): number {
    const restAt = this.length;
    this.u32(0);
    this.sized(cells);
    this.sized(json);
    return restAt;
  }

  /**
   * Appends one contact of the account begun.
   * @param digests - its digests back to back, or the contact itself: then hashed straight into the part
   *   (lib/warehouse/identifiers.ts `writeContactDigests`, no buffer per digest).
   */
  contact(flags: number, digests: Uint8Array | ContactIdentifierFields, cells: string | Uint8Array, json: string | Uint8Array): void {
    this.room(2 + Math.max(CONTACT_DIGESTS_MAX_BYTES, digests instanceof Uint8Array ? digests.length : 0));
    const at = this.length;
    let count: number;
    if (digests instanceof Uint8Array) {
      count = digests.length / DIGEST_BYTES;
      if (count > 255) throw new RangeError('A contact has more than 255 identifier digests');
      this.buffer.set(digests, at + 2);
    } else count = writeContactDigests(digests, this.buffer, at + 2);
    this.buffer[at] = flags;
    this.buffer[at + 1] = count;
    this.length = at + 2 + count * DIGEST_BYTES;
    this.sized(cells);
    this.sized(json);
  }

  /** Ends the account begun at `restAt`: writes its length. */
  endAccount(restAt: number): void {
    this.buffer.writeUInt32LE(this.length - restAt - 4, restAt);
  }

  /** The part's bytes (a view of the writer's buffer). */
  done(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private u32(n: number): void {
    this.room(4);
    this.buffer.writeUInt32LE(n, this.length);
    this.length += 4;
  }

  private bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** u32 byte length, then the bytes (a text as UTF-8: at most 3 bytes per UTF-16 unit). */
  private sized(text: string | Uint8Array): void {
    if (typeof text !== 'string') {
      this.u32(text.length);
      this.bytes(text);
      return;
    }
    this.room(4 + text.length * 3);
    const written = this.buffer.write(text, this.length + 4, 'utf8');
    this.buffer.writeUInt32LE(written, this.length);
    this.length += 4 + written;
  }
}

/** Bytes a part is first given per account (1,000 accounts × 10 contacts measured ~6 KB each): it grows when needed. */
const EXPECTED_ACCOUNT_BYTES = 8_192;

/**
 * Encodes the accounts of one batch as a result part (layout in the module
 * comment), in the order given; each account's contacts best first
 * (docs/csv.md), each with its identifier digests.
 * @param fields - the fields to store and name in the header: today's ({@link CURRENT_FIELDS}); another list only to test reading parts of other fields.
 * @param digestsOf - digests already computed for some of the contacts (the workflow's suppression check,
 *   lib/results/deliverable.ts `deliverableContacts`), by contact object: not hashed again; the others are hashed here.
 * @returns the part's bytes (about the size of the batch's CSV rows plus 32 bytes per contact identifier).
 */
export function encodePart(
  accounts: readonly EnrichedAccount[],
  fields: PartFields = CURRENT_FIELDS,
  digestsOf: ReadonlyMap<ContactIdentifierFields, Uint8Array> = NO_DIGESTS,
): Buffer {
  const header = fields === CURRENT_FIELDS ? CURRENT_HEADER_BYTES : Buffer.from(JSON.stringify(headerOf(fields)), 'utf8');
  const accountCells = columnsOf(fields.account);
  const accountJson = jsonOf(fields.account);
  const contactCells = columnsOf(fields.contact);
  const contactJson = jsonOf(fields.contact);
  const part = new PartWriter(header, accounts.length * EXPECTED_ACCOUNT_BYTES);
  for (const account of accounts) {
    const restAt = part.beginAccount(encodeCells(account, accountCells), resultAccountJson(account, accountJson));
    for (const contact of orderContacts(account.contacts))
      part.contact(
        contactFlags(contact),
        digestsOf.get(contact) ?? contact,
        encodeCells(contact, contactCells),
        resultContactJson(contact, contactJson),
      );
    part.endAccount(restAt);
  }
  return part.done();
}

/** No digest computed beforehand: {@link encodePart} hashes every contact. */
const NO_DIGESTS: ReadonlyMap<ContactIdentifierFields, Uint8Array> = new Map();

/** What a part's first bytes say of it. */
interface PartLayout {
  version: 1 | 2 | 3 | 4;
  /** Its fields' names ({@link LEGACY_HEADER} for versions 1 and 2). */
  header: PartHeader;
  /** Where its first account starts. */
  dataStart: number;
  /** Whether its header equals today's: read as it is. */
  current: boolean;
}

/** @throws ResultPartFormatError when the bytes start with no known layout's magic or the header is damaged. */
function layoutOf(bytes: Buffer): PartLayout {
  const magic = bytes.subarray(0, MAGIC.length);
  const v4 = bytes.length >= MAGIC.length && MAGIC.equals(magic);
  if (v4 || (bytes.length >= MAGIC.length && MAGIC_V3.equals(magic))) {
    if (bytes.length < MAGIC.length + 4) throw new ResultPartFormatError('Result part cut short');
    const headerEnd = MAGIC.length + 4 + bytes.readUInt32LE(MAGIC.length);
    if (headerEnd > bytes.length) throw new ResultPartFormatError('Result part cut short');
    const headerBytes = bytes.subarray(MAGIC.length + 4, headerEnd);
    const current = v4 && CURRENT_HEADER_BYTES.equals(headerBytes);
    let header: PartHeader;
    try {
      header = current ? headerOf(CURRENT_FIELDS) : (JSON.parse(headerBytes.toString('utf8')) as PartHeader);
    } catch {
      throw new ResultPartFormatError('Result part header is not JSON');
    }
    return { version: v4 ? 4 : 3, header, dataStart: headerEnd, current };
  }
  if (bytes.length >= MAGIC.length && MAGIC_V2.equals(magic))
    return { version: 2, header: LEGACY_HEADER, dataStart: MAGIC.length, current: false };
  if (bytes.length >= MAGIC.length && MAGIC_V1.equals(magic))
    return { version: 1, header: LEGACY_HEADER, dataStart: MAGIC.length, current: false };
  throw new ResultPartFormatError('Not a result part of layout CEP4, CEP3, CEP2 or CEP1');
}

/**
 * A cursor over the accounts and contacts of a part of any version, as it is
 * stored; {@link ResultPartReader} is the one readers use.
 */
class PartCursor {
  /** Start of the current account's cells in {@link bytes}. */
  accountStart = 0;
  /** End (exclusive) of the current account's cells. */
  accountEnd = 0;
  /** Start of the current account's JSON in {@link bytes} (equal to its end in a version 1 part). */
  accountJsonStart = 0;
  /** End (exclusive) of the current account's JSON. */
  accountJsonEnd = 0;
  /** Where the current contact's record (its flags byte) starts. */
  contactRecordStart = 0;
  /** Flags of the current contact (lib/results/csv.ts `CONTACT_HAS_MOBILE`, `CONTACT_HAS_EMAIL`). */
  contactFlags = 0;
  /** Start of the current contact's identifier digests (32 bytes each) in {@link bytes}; equal to their end before version 3. */
  contactDigestsStart = 0;
  /** End (exclusive) of the current contact's digests. */
  contactDigestsEnd = 0;
  /** Start of the current contact's cells in {@link bytes}. */
  contactStart = 0;
  /** End (exclusive) of the current contact's cells. */
  contactEnd = 0;
  /** Start of the current contact's JSON in {@link bytes} (equal to its end in a version 1 part). */
  contactJsonStart = 0;
  /** End (exclusive) of the current contact's JSON. */
  contactJsonEnd = 0;
  private nextAccountAt: number;
  private accountLimit = 0;
  private cursor = 0;
  private readonly hasJson: boolean;
  private readonly hasDigests: boolean;

  constructor(
    /** The part's bytes (a view of what was given, not a copy). */
    readonly bytes: Buffer,
    protected readonly layout: PartLayout,
  ) {
    this.nextAccountAt = layout.dataStart;
    this.hasJson = layout.version >= 2;
    this.hasDigests = layout.version >= 3;
  }

  /** Reads the u32 length at `at` and the range after it; throws when it passes `limit`. */
  private rangeAt(at: number, limit: number): number {
    if (at + 4 > limit) throw new ResultPartFormatError('Result part cut short');
    const end = at + 4 + this.bytes.readUInt32LE(at);
    if (end > limit) throw new ResultPartFormatError('Result part cut short');
    return end;
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
    if (limit > this.bytes.length) throw new ResultPartFormatError('Result part cut short');
    const cellsEnd = this.rangeAt(at + 4, limit);
    this.accountStart = at + 8;
    this.accountEnd = cellsEnd;
    this.cursor = cellsEnd;
    if (this.hasJson) {
      const jsonEnd = this.rangeAt(cellsEnd, limit);
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
    this.contactRecordStart = at;
    this.contactFlags = this.bytes[at]!;
    let next = at + 1;
    if (this.hasDigests) {
      if (next >= this.accountLimit) throw new ResultPartFormatError('Result part cut short');
      this.contactDigestsStart = next + 1;
      next = this.contactDigestsEnd = next + 1 + this.bytes[next]! * DIGEST_BYTES;
    } else {
      this.contactDigestsStart = this.contactDigestsEnd = next;
    }
    const end = this.rangeAt(next, this.accountLimit);
    this.contactStart = next + 4;
    this.contactEnd = end;
    this.cursor = end;
    if (this.hasJson) {
      const jsonEnd = this.rangeAt(end, this.accountLimit);
      this.contactJsonStart = end + 4;
      this.contactJsonEnd = jsonEnd;
      this.cursor = jsonEnd;
    } else {
      this.contactJsonStart = this.contactJsonEnd = end;
    }
    return true;
  }
}

/** Positions of `names` in `stored` (-1: the part lacks it). */
const positions = (names: readonly string[], stored: readonly string[]) => names.map((name) => stored.indexOf(name));

/** A raw value read back from an encoded cell, typed as its field's. */
const cellValue = (cell: string | undefined, field: FieldDeclaration | undefined) => {
  const value = cell === undefined ? null : decodeCell(cell);
  return value !== null && field?.type === 'count' ? Number(value) : value;
};

/**
 * One side (account or contact) of re-laying a part: today's cells and JSON
 * values from a stored record's, matched by name.
 */
class Relayer {
  private readonly cells: number[];
  private readonly json: number[];
  /** For a part without JSON (version 1): per today's JSON key, the stored cell holding its field. */
  private readonly jsonFromCells: { cell: number; field: FieldDeclaration | undefined }[];

  constructor(
    private readonly target: { cells: string[]; json: string[] },
    stored: { cells: string[]; json: string[] },
    fields: readonly FieldDeclaration[],
  ) {
    this.cells = positions(target.cells, stored.cells);
    this.json = positions(target.json, stored.json);
    this.jsonFromCells = target.json.map((key) => {
      const field = fields.find((f) => f.json === key);
      return { cell: field?.column === undefined ? -1 : stored.cells.indexOf(field.column), field };
    });
  }

  /** Today's cells from the stored encoded cells: a column the part lacks is empty. */
  relayCells(stored: readonly string[]): Buffer {
    let cells = '';
    for (const at of this.cells) cells += `${at === -1 ? '' : (stored[at] ?? '')},`;
    return Buffer.from(cells, 'utf8');
  }

  /** Today's JSON values from the stored ones (`offset` leading values kept as they are); a key the part lacks is null. */
  relayValues(stored: readonly unknown[], offset: number): unknown[] {
    return [...stored.slice(0, offset), ...this.json.map((at) => (at === -1 ? null : (stored[at + offset] ?? null)))];
  }

  /** Today's JSON values decoded from stored encoded cells (a part without JSON). */
  valuesFromCells(stored: readonly string[]): unknown[] {
    return this.jsonFromCells.map(({ cell, field }) => (cell === -1 ? null : cellValue(stored[cell], field)));
  }
}

/** A stored contact's values in its part's key order: a version 4 object's, or a version 2 or 3 array. */
const storedContactValues = (text: string, layout: PartLayout): unknown[] => {
  const stored = JSON.parse(text) as unknown;
  if (layout.version < 4) return stored as unknown[];
  const record = stored as Record<string, unknown>;
  return layout.header.contact.json.map((key) => record[key]);
};

/** A stored account head's values `[accountId, outcome, …values]` in its part's key order (version 4 object, or version 2 or 3 array). */
const storedAccountValues = (text: string, layout: PartLayout): unknown[] => {
  const stored = JSON.parse(text) as unknown;
  if (layout.version < 4) return stored as unknown[];
  const { accountId, outcome, account } = stored as { accountId: unknown; outcome: unknown; account: Record<string, unknown> };
  return [accountId, outcome, ...layout.header.account.json.map((key) => account[key])];
};

/**
 * A part of another version or other fields laid out as today's version 4
 * part with today's fields, by name: missing cells empty, missing values
 * null; digests computed where the part has none (versions 1 and 2).
 */
function relay(source: PartCursor, layout: PartLayout): Buffer {
  const target = headerOf(CURRENT_FIELDS);
  const accounts = new Relayer(target.account, layout.header.account, ACCOUNT_FIELDS);
  const contacts = new Relayer(target.contact, layout.header.contact, CONTACT_FIELDS);
  const accountIdCell = layout.header.account.cells.indexOf(exportedFields(ACCOUNT_FIELDS).find((f) => f.key === 'accountId')!.column);
  const bytes = source.bytes;
  const part = new PartWriter(CURRENT_HEADER_BYTES, bytes.length);
  const text = (start: number, end: number) => bytes.toString('utf8', start, end);
  while (source.nextAccount()) {
    const accountCells = splitEncodedCells(bytes, source.accountStart, source.accountEnd);
    const storedAccount =
      layout.version >= 2 ? storedAccountValues(text(source.accountJsonStart, source.accountJsonEnd), layout) : undefined;
    const relaid: ContactPieces[] = [];
    while (source.nextContact()) {
      const cells = splitEncodedCells(bytes, source.contactStart, source.contactEnd);
      const values =
        layout.version >= 2
          ? contacts.relayValues(storedContactValues(text(source.contactJsonStart, source.contactJsonEnd), layout), 0)
          : contacts.valuesFromCells(cells);
      const json = contactText(values, RESULT_CONTACT_KEYS);
      const digests =
        layout.version >= 3
          ? bytes.subarray(source.contactDigestsStart, source.contactDigestsEnd)
          : Buffer.concat(contactDigests(identifiersOf(json)));
      relaid.push({ flags: source.contactFlags, digests, cells: contacts.relayCells(cells), json });
    }
    const accountValues = storedAccount
      ? accounts.relayValues(storedAccount, 2)
      : [
          cellValue(accountCells[accountIdCell], undefined),
          relaid.length > 0 ? 'found' : 'not_found',
          ...accounts.valuesFromCells(accountCells),
        ];
    part.account(accounts.relayCells(accountCells), accountHeadText(accountValues, RESULT_ACCOUNT_KEYS), relaid);
  }
  return part.done();
}

/**
 * A cursor over the accounts and contacts of one result part, read as a
 * part of today's version and fields (a part of another version or other
 * fields is re-laid by name once, when the reader is made; module comment),
 * allocating nothing per account: {@link nextAccount} moves to the next
 * account and sets the range of its cells and JSON in {@link bytes};
 * {@link nextContact} moves to its next contact (best first) and sets the
 * contact's flags, digest, cell and JSON ranges.
 * @example
 * const part = new ResultPartReader(bytes);
 * while (part.nextAccount()) while (part.nextContact()) use(part.contactFlags, part.bytes.subarray(part.contactStart, part.contactEnd));
 */
export class ResultPartReader extends PartCursor {
  /** @throws ResultPartFormatError when the bytes are not a result part (CEP4, CEP3, CEP2, CEP1) or are damaged. */
  constructor(part: Uint8Array) {
    const bytes = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
    const layout = layoutOf(bytes);
    if (layout.current) {
      super(bytes, layout);
      return;
    }
    let relaid: Buffer;
    try {
      relaid = relay(new PartCursor(bytes, layout), layout);
    } catch (error) {
      if (error instanceof ResultPartFormatError) throw error;
      throw new ResultPartFormatError(`Result part damaged: ${(error as Error).message}`);
    }
    super(relaid, layoutOf(relaid));
  }

  /** The current account's stored head: `{"accountId":…,"outcome":…,"account":{…}}`, keys in today's order (lib/results/json.ts). */
  accountJson(): string {
    return this.bytes.toString('utf8', this.accountJsonStart, this.accountJsonEnd);
  }

  /** The current contact's JSON text: the object the results show, keys in today's order (lib/results/json.ts). */
  contactJson(): string {
    return this.bytes.toString('utf8', this.contactJsonStart, this.contactJsonEnd);
  }

  /**
   * The current account's result item as JSON text (lib/results/json.ts
   * `resultItemText`), its head and `contacts` (stored texts, e.g. of
   * {@link contactJson}) spliced, nothing parsed.
   * @param type - a `type` member first (the stream's `"account"`).
   */
  itemText(seq: number, contacts: readonly string[], type?: string): string {
    return resultItemText(seq, this.bytes.toString('utf8', this.accountJsonStart + 1, this.accountJsonEnd - 1), contacts, type);
  }

  /**
   * Writes the current account's result item into `out`: the same text as
   * {@link itemText}, its stored bytes copied, with the contacts `next`
   * moves this reader to (each call positions it on the next contact to
   * deliver, false when none is left: lib/results/deliverable.ts
   * `Delivery.nextContact`), nothing decoded.
   */
  writeItem(out: JsonBytes, seq: number, next: (reader: this) => boolean, type?: string): void {
    // Without `type` (the page), the opening is written without a string made for it (1,000 a page).
    (type === undefined ? out.write(SEQ_OPENING).digits(seq).write(',') : out.write(itemOpening(seq, type)))
      .copy(this.bytes, this.accountJsonStart + 1, this.accountJsonEnd - 1)
      .write(CONTACTS_OPENING);
    for (let first = true; next(this); first = false) {
      if (!first) out.write(',');
      out.copy(this.bytes, this.contactJsonStart, this.contactJsonEnd);
    }
    out.write(ITEM_CLOSING);
  }
}

/** The identifying fields of a contact's stored JSON in today's key order. */
function identifiersOf(json: string): ContactIdentifierFields {
  const { contactId, email, mobilePhone, directPhone, linkedinUrl } = contactFromStored(json);
  return { contactId, email, mobilePhone, directPhone, linkedinUrl };
}

/**
 * The identifying fields of the reader's current contact, from its raw JSON.
 * Not for deciding whether it may be delivered (its stored digests say that,
 * lib/results/deliverable.ts): for naming a contact an erasure found
 * (docs/privacy.md).
 * @throws SyntaxError when the contact's JSON is damaged.
 */
export const storedContactIdentifiers = (reader: ResultPartReader): ContactIdentifierFields => identifiersOf(reader.contactJson());

/**
 * A part without some of its contacts (an erasure rewrites stored results):
 * the same accounts in the same order, each keeping the contacts `keep`
 * accepts (it reads the reader's current contact, typically its digests
 * only), in today's layout; a dropped contact leaves with its digests, cells
 * and JSON.
 * @returns the new bytes and how many contacts were dropped (0: `bytes` is the part as read, nothing to write).
 * @throws ResultPartFormatError when `part` is not a result part.
 */
export function withoutContacts(part: Uint8Array, keep: (reader: ResultPartReader) => boolean): { bytes: Buffer; removed: number } {
  const reader = new ResultPartReader(part);
  const source = reader.bytes;
  // A first pass over the digests only: most parts hold no match and are not copied at all.
  const dropped = new Set<number>();
  while (reader.nextAccount()) while (reader.nextContact()) if (!keep(reader)) dropped.add(reader.contactRecordStart);
  if (dropped.size === 0) return { bytes: source, removed: 0 };
  const again = new ResultPartReader(source);
  const pieces: Buffer[] = [source.subarray(0, layoutOf(source).dataStart)];
  while (again.nextAccount()) {
    const rest = Buffer.allocUnsafe(4);
    // From the account cells' length through its JSON: the account JSON names no contact.
    const head = source.subarray(again.accountStart - 4, again.accountJsonEnd);
    pieces.push(rest, head);
    let length = head.length;
    while (again.nextContact()) {
      if (dropped.has(again.contactRecordStart)) continue;
      const contact = source.subarray(again.contactRecordStart, again.contactJsonEnd);
      pieces.push(contact);
      length += contact.length;
    }
    rest.writeUInt32LE(length, 0);
  }
  return { bytes: Buffer.concat(pieces), removed: dropped.size };
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
  /**
   * Writes (or rewrites, idempotently: the same accounts give the same bytes) one part, encoded by {@link encodePart}; `chunk`: see {@link resultPartKey};
   * `digestsOf`: digests computed already (see {@link encodePart}); `encoded`: called with the part's bytes once they
   * are encoded, before they are sent (FindContacts writes the copy index from them meanwhile, lib/enrichment/steps.ts).
   * @returns the bytes written (the copy index is made from their digests, lib/privacy/copies.ts).
   */
  putPart(
    prefix: string,
    index: number,
    accounts: readonly EnrichedAccount[],
    chunk?: number,
    digestsOf?: ReadonlyMap<ContactIdentifierFields, Uint8Array>,
    encoded?: (bytes: Buffer) => void,
  ): Promise<Buffer>;
  /** Keys of every part under a prefix, in index order. */
  listParts(prefix: string): Promise<string[]>;
  /**
   * Reads one whole part (a batch's rows: a few MB at most), in the current
   * layout (a part of the former JSON-lines layout is re-encoded); read it
   * with {@link ResultPartReader}.
   * @param into - gives a buffer of at least `bytes` to read the part into (a
   *   reader's reused buffer: no new allocation of a few MB per part); the
   *   answer is then a view of it, valid until the caller reuses it.
   */
  readPart(key: string, into?: (bytes: number) => Buffer): Promise<Uint8Array>;
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
  const readPart = async (key: string, into?: (bytes: number) => Buffer) => {
    const { Body, ContentLength } = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
    if (!Body) throw new Error(`Result part ${key} has no body`);
    if (into && ContentLength !== undefined && !key.endsWith(LEGACY_PART_SUFFIX) && Body instanceof Readable) {
      const target = into(ContentLength);
      let at = 0;
      // Chunk by chunk as they arrive ('data', as the SDK's own collector reads): an async iterator's read() would
      // concatenate the chunks buffered meanwhile into a new Buffer first.
      await new Promise<void>((resolve, reject) => {
        Body.on('data', (chunk: Buffer) => {
          if (at + chunk.length > ContentLength) {
            Body.destroy(new Error(`Result part ${key} is longer than its Content-Length`));
            return;
          }
          target.set(chunk, at);
          at += chunk.length;
        });
        Body.once('end', resolve);
        Body.once('error', reject);
      });
      if (at !== ContentLength) throw new Error(`Result part ${key} ended after ${at} of ${ContentLength} bytes`);
      return target.subarray(0, at);
    }
    const bytes = await Body.transformToByteArray();
    return key.endsWith(LEGACY_PART_SUFFIX) ? encodeLegacyPart(bytes) : bytes;
  };
  return {
    async putPart(prefix, index, accounts, chunk, digestsOf, encoded) {
      const body = encodePart(accounts, CURRENT_FIELDS, digestsOf);
      encoded?.(body);
      await client.send(
        new PutObjectCommand({
          Bucket: bucketName,
          Key: resultPartKey(prefix, index, chunk),
          Body: body,
          ContentType: 'application/octet-stream',
        }),
      );
      return body;
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
