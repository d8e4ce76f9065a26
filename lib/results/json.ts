/**
 * The results' JSON (docs/results.md): an account and a contact exactly as
 * `POST /v1/campaigns/results` and its stream show them, with the stored
 * values as they are (null where absent; no spreadsheet prefix, which is a
 * CSV matter, docs/csv.md). The workflow writes each account's and contact's
 * values into its result part as a JSON array (lib/results/parts.ts) in the
 * key order of that declaration, so a reader parses them and never needs the
 * warehouse's names. The keys, their order and the warehouse field each
 * shows are declared once, in lib/warehouse/fields.ts.
 */
import { ACCOUNT_FIELDS, CONTACT_FIELDS, resultFields, type JsonRecord, type ResultField } from '../warehouse/fields';
import type { WarehouseContact } from '../warehouse/schema';
import type { EnrichedAccount } from './csv';

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

/**
 * What a part stores for an account: the JSON array `[accountId, outcome,
 * ...values of RESULT_ACCOUNT_FIELDS or of the part's own `fields`]` (values only: keys would
 * triple a part, measured on 1,000 accounts × 10 contacts: 5.4 MB against
 * 1.7 MB of CSV cells).
 */
export function resultAccountJson(a: EnrichedAccount, fields: readonly ResultField[] = RESULT_ACCOUNT_FIELDS): string {
  return JSON.stringify([
    a.accountId,
    a.contacts.length > 0 ? 'found' : 'not_found',
    ...fields.map((field) => a[field.key as keyof EnrichedAccount] ?? null),
  ]);
}

/**
 * What a part stores for a contact: the JSON array of its values in
 * {@link RESULT_CONTACT_KEYS} order (or in the order of `fields`: a part
 * names the fields it holds, lib/results/parts.ts).
 */
export function resultContactJson(c: WarehouseContact, fields: readonly ResultField[] = RESULT_CONTACT_FIELDS): string {
  return JSON.stringify(fields.map((field) => c[field.key as keyof WarehouseContact] ?? null));
}

/** A stored contact array ({@link resultContactJson}) as its {@link ResultContact}. */
export function contactFromStored(text: string): ResultContact {
  const values = JSON.parse(text) as unknown[];
  const contact: Record<string, unknown> = {};
  for (let i = 0; i < RESULT_CONTACT_KEYS.length; i++) contact[RESULT_CONTACT_KEYS[i]!] = values[i] ?? null;
  return contact as unknown as ResultContact;
}

/** A stored account array ({@link resultAccountJson}) as its {@link ResultAccountHead}. */
export function accountFromStored(text: string): ResultAccountHead {
  const values = JSON.parse(text) as unknown[];
  const account: Record<string, unknown> = {};
  for (let i = 0; i < RESULT_ACCOUNT_KEYS.length; i++) account[RESULT_ACCOUNT_KEYS[i]!] = values[i + 2] ?? null;
  return { accountId: String(values[0]), outcome: values[1] as ResultOutcome, account: account as unknown as ResultAccount };
}

/** One result item, in the answer's key order: `{seq, accountId, outcome, account, contacts}`. */
export interface ResultItem extends ResultAccountHead {
  seq: number;
  contacts: ResultContact[];
}

/**
 * One result item from its stored pieces (a `type` first when given: the
 * stream's `"account"`), keys in the answer's order.
 * @param head - the account's stored JSON ({@link resultAccountJson}).
 * @param contacts - the delivered contacts' stored JSON ({@link resultContactJson}), best first.
 */
export function resultItem(seq: number, head: string, contacts: readonly string[]): ResultItem {
  const { accountId, outcome, account } = accountFromStored(head);
  return { seq, accountId, outcome, account, contacts: contacts.map(contactFromStored) };
}
