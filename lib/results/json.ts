/**
 * The results' JSON (docs/results.md): an account and a contact exactly as
 * `POST /v1/campaigns/results` and its stream show them, with the stored
 * values as they are (null where absent; no spreadsheet prefix, which is a
 * CSV matter, docs/csv.md). The workflow writes each account's head and
 * each contact into its result part as the answer's JSON text itself
 * (lib/results/parts.ts, layout 4), keys in the order of that declaration,
 * so a reader splices the texts into its answer ({@link resultItemText})
 * without parsing them and never needs the warehouse's names. The keys, their order and the warehouse field each
 * shows are declared once, in lib/warehouse/fields.ts.
 */
import { isAscii } from 'node:buffer';
import { ACCOUNT_FIELDS, CONTACT_FIELDS, resultFields, type JsonRecord, type ResultField } from '../warehouse/fields';
import type { WarehouseContact } from '../warehouse/schema';
import type { EnrichedAccount } from './csv';
import { GrowingBytes } from './bytes';

/** The account fields the results show, in key order (lib/warehouse/fields.ts). */
export const RESULT_ACCOUNT_FIELDS = resultFields(ACCOUNT_FIELDS);
/** The contact fields the results show, in key order (lib/warehouse/fields.ts). */
export const RESULT_CONTACT_FIELDS = resultFields(CONTACT_FIELDS);

/** An account's fields in a result (`account` of an item): the account fields with a JSON key. */
export type ResultAccount = JsonRecord<typeof ACCOUNT_FIELDS>;

/** A contact in a result (`contacts[]` of an item): the contact fields with a JSON key. */
export type ResultContact = JsonRecord<typeof CONTACT_FIELDS>;

/** The keys of a {@link ResultAccount}, in order: a part stores the values in this order, after `accountId` and `outcome`. */
export const RESULT_ACCOUNT_KEYS = RESULT_ACCOUNT_FIELDS.map((field) => field.json) as (keyof ResultAccount)[];
/** The keys of a {@link ResultContact}, in the order the results show them: a part stores the values in this order. */
export const RESULT_CONTACT_KEYS = RESULT_CONTACT_FIELDS.map((field) => field.json) as (keyof ResultContact)[];

/** The {@link ResultAccount} of an enriched account. */
export const resultAccount = (a: EnrichedAccount): ResultAccount =>
  Object.fromEntries(RESULT_ACCOUNT_FIELDS.map((field) => [field.json, a[field.key as keyof EnrichedAccount]])) as ResultAccount;

/** The {@link ResultContact} of a warehouse contact (each field under its JSON key: `title` is the result's `jobTitle`). */
export const resultContact = (c: WarehouseContact): ResultContact =>
  Object.fromEntries(RESULT_CONTACT_FIELDS.map((field) => [field.json, c[field.key as keyof WarehouseContact]])) as ResultContact;

/** Whether the workflow found contacts for an account (`found`: at least one, before any filter). */
export type ResultOutcome = 'found' | 'not_found';

/** The head of an account's result item, in the item's key order: what a part stores for the account. */
export interface ResultAccountHead {
  accountId: string;
  outcome: ResultOutcome;
  account: ResultAccount;
}

/** An object of `keys[i]: values[i]` in key order (a value absent: null). */
const keyed = (keys: readonly string[], values: readonly unknown[]) => {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) record[keys[i]!] = values[i] ?? null;
  return record;
};

/**
 * The JSON keys of `fields` ({@link RESULT_ACCOUNT_FIELDS} or
 * {@link RESULT_CONTACT_FIELDS} unless a part names others, lib/results/parts.ts).
 */
const keysOf = (fields: readonly ResultField[]) => fields.map((field) => field.json);

/**
 * What a part stores for an account: the JSON text of its
 * {@link ResultAccountHead}, `{"accountId":…,"outcome":…,"account":{…}}`,
 * keys from `fields` in order, values raw (null where absent): the answer's
 * text itself, spliced into an item without being parsed
 * ({@link resultItemText}).
 */
export function resultAccountJson(a: EnrichedAccount, fields: readonly ResultField[] = RESULT_ACCOUNT_FIELDS): string {
  return accountHeadText(
    [a.accountId, a.contacts.length > 0 ? 'found' : 'not_found', ...fields.map((field) => a[field.key as keyof EnrichedAccount] ?? null)],
    keysOf(fields),
  );
}

/**
 * What a part stores for a contact: the JSON text of its {@link ResultContact}
 * (keys from `fields` in order, values raw, null where absent), the answer's
 * text itself.
 */
export function resultContactJson(c: WarehouseContact, fields: readonly ResultField[] = RESULT_CONTACT_FIELDS): string {
  return JSON.stringify(
    keyed(
      keysOf(fields),
      fields.map((field) => c[field.key as keyof WarehouseContact] ?? null),
    ),
  );
}

/**
 * The stored text of an account head from its values `[accountId, outcome,
 * …values of accountKeys]` (how parts before layout 4 stored it, and how a
 * part of other fields is re-laid).
 */
export function accountHeadText(values: readonly unknown[], accountKeys: readonly string[] = RESULT_ACCOUNT_KEYS): string {
  return JSON.stringify({ accountId: values[0], outcome: values[1], account: keyed(accountKeys, values.slice(2)) });
}

/** The stored text of a contact from its values in `contactKeys` order (parts before layout 4; re-laying). */
export const contactText = (values: readonly unknown[], contactKeys: readonly string[] = RESULT_CONTACT_KEYS): string =>
  JSON.stringify(keyed(contactKeys, values));

/** A stored contact ({@link resultContactJson}) as its {@link ResultContact}. */
export const contactFromStored = (text: string): ResultContact => JSON.parse(text) as ResultContact;

/** A stored account head ({@link resultAccountJson}) as its {@link ResultAccountHead}. */
export const accountFromStored = (text: string): ResultAccountHead => JSON.parse(text) as ResultAccountHead;

/** One result item, in the answer's key order: `{seq, accountId, outcome, account, contacts}`. */
export interface ResultItem extends ResultAccountHead {
  seq: number;
  contacts: ResultContact[];
}

/**
 * The JSON text of one result item from its stored texts, spliced, never
 * parsed: `{"seq":…,` + the head's members + `,"contacts":[…]}`; with
 * `type`, that member first (the stream's `"account"`).
 * @param headMembers - the members of the account's stored head ({@link resultAccountJson} without its braces).
 * @param contacts - the delivered contacts' stored texts ({@link resultContactJson}), best first.
 */
export function resultItemText(seq: number, headMembers: string, contacts: readonly string[], type?: string): string {
  return `${itemOpening(seq, type)}${headMembers}${CONTACTS_OPENING}${contacts.join(',')}${ITEM_CLOSING}`;
}

/** What a result item's text starts with, before its head's members: `{"seq":…,` (with `type`, that member first). */
export const itemOpening = (seq: number, type?: string): string =>
  `{${type === undefined ? '' : `"type":${JSON.stringify(type)},`}"seq":${seq},`;
/** What a result item without `type` starts with, before its seq ({@link itemOpening}). */
export const SEQ_OPENING = '{"seq":';
/** Between a result item's head members and its first contact. */
export const CONTACTS_OPENING = ',"contacts":[';
/** After a result item's last contact. */
export const ITEM_CLOSING = ']}';

/**
 * UTF-8 JSON text written piece by piece into one growing buffer: the
 * results page writes its items' stored bytes here straight from the result
 * parts (lib/results/parts.ts `ResultPartReader.writeItem`), so the answer
 * is decoded once, as one string ({@link text}), with no string per contact
 * or per item.
 */
export class JsonBytes extends GrowingBytes {
  /** @param capacity - bytes to start with (it doubles as needed). */
  constructor(capacity = 64 * 1024) {
    super(capacity);
  }

  /** Appends `text` encoded as UTF-8 (JSON syntax and numbers: a few bytes). */
  write(text: string): this {
    // One ASCII character (a separator: once per contact of a page) without a call into the encoder.
    if (text.length === 1 && text.charCodeAt(0) < 0x80) {
      this.room(1);
      this.buffer[this.length++] = text.charCodeAt(0);
      return this;
    }
    this.room(Buffer.byteLength(text));
    this.length += this.buffer.write(text, this.length);
    return this;
  }

  /** Appends a non-negative integer's decimal digits (a seq: no string made for it). */
  digits(n: number): this {
    if (!Number.isSafeInteger(n) || n < 0) return this.write(String(n));
    let width = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) width++;
    this.room(width);
    for (let at = this.length + width - 1, rest = n; at >= this.length; at--, rest = Math.floor(rest / 10))
      this.buffer[at] = 0x30 + (rest % 10);
    this.length += width;
    return this;
  }

  /** Appends `source[start, end)`: JSON text stored as UTF-8 (copied in place: no view made per piece). */
  copy(source: Buffer, start: number, end: number): this {
    this.room(end - start);
    this.length += source.copy(this.buffer, this.length, start, end);
    return this;
  }

  /** The text written since the last {@link take}, or since it was made; the writer is then empty again. */
  take(): string {
    // ASCII (most answers) decodes as Latin-1 to the same text, without UTF-8's per-byte decoding.
    const text = this.buffer.toString(isAscii(this.buffer.subarray(0, this.length)) ? 'latin1' : 'utf8', 0, this.length);
    this.length = 0;
    return text;
  }
}

/**
 * One result item from its stored texts, decoded (tests, and a reader that
 * needs the values; the answers splice {@link resultItemText}).
 * @param head - the account's stored head ({@link resultAccountJson}).
 */
export function resultItem(seq: number, head: string, contacts: readonly string[]): ResultItem {
  return JSON.parse(resultItemText(seq, head.slice(1, -1), contacts)) as ResultItem;
}
