/**
 * The results' JSON (docs/results.md): an account and a contact exactly as
 * `POST /v1/campaigns/results` and its stream show them, with the stored
 * values as they are (null where absent; no spreadsheet prefix, which is a
 * CSV matter, docs/csv.md). The workflow writes these texts into each result
 * part (lib/results/parts.ts), so a reader splices or parses them and never
 * needs the warehouse's names.
 */
import type { WarehouseContact } from '../warehouse/schema';
import type { EnrichedAccount } from './csv';

/** An account's fields in a result (`account` of an item). */
export interface ResultAccount {
  name: string | null;
  domain: string | null;
  industry: string | null;
  /** Employees (a count). */
  employeeCount: number | null;
  /** ISO 3166-1 alpha-2, as the warehouse holds it. */
  country: string | null;
}

/** A contact in a result (`contacts[]` of an item). */
export interface ResultContact {
  contactId: string;
  firstName: string | null;
  lastName: string | null;
  jobTitle: string | null;
  seniority: string | null;
  department: string | null;
  email: string | null;
  emailStatus: string | null;
  mobilePhone: string | null;
  directPhone: string | null;
  linkedinUrl: string | null;
  country: string | null;
}

/** The {@link ResultAccount} of an enriched account. */
export const resultAccount = (a: EnrichedAccount): ResultAccount => ({
  name: a.name,
  domain: a.domain,
  industry: a.industry,
  employeeCount: a.employeeCount,
  country: a.country,
});

/** The {@link ResultContact} of a warehouse contact (its `title` is the result's `jobTitle`). */
export const resultContact = (c: WarehouseContact): ResultContact => ({
  contactId: c.contactId,
  firstName: c.firstName,
  lastName: c.lastName,
  jobTitle: c.title,
  seniority: c.seniority,
  department: c.department,
  email: c.email,
  emailStatus: c.emailStatus,
  mobilePhone: c.mobilePhone,
  directPhone: c.directPhone,
  linkedinUrl: c.linkedinUrl,
  country: c.country,
});

/** Whether the workflow found contacts for an account (`found`: at least one, before any filter). */
export type ResultOutcome = 'found' | 'not_found';

/** The head of an account's result item, in the item's key order: what a part stores for the account. */
export interface ResultAccountHead {
  accountId: string;
  outcome: ResultOutcome;
  account: ResultAccount;
}

/** The JSON text of an account's {@link ResultAccountHead} (what a part stores). */
export const resultAccountJson = (a: EnrichedAccount): string =>
  JSON.stringify({ accountId: a.accountId, outcome: a.contacts.length > 0 ? 'found' : 'not_found', account: resultAccount(a) } satisfies ResultAccountHead);

/**
 * The JSON text of one result item from its stored pieces: `{seq, accountId,
 * outcome, account, contacts}` (a `type` first when given: the stream's
 * `"account"`). Splices the stored texts; parses nothing.
 * @param head - the account's stored JSON ({@link resultAccountJson}).
 * @param contacts - the delivered contacts' stored JSON texts, best first.
 */
export function resultItemJson(seq: number, head: string, contacts: readonly string[], type?: string): string {
  return `{${type === undefined ? '' : `"type":${JSON.stringify(type)},`}"seq":${seq},${head.slice(1, -1)},"contacts":[${contacts.join(',')}]}`;
}
/** The JSON text of {@link resultContact} (what a part stores). */
export const resultContactJson = (c: WarehouseContact): string => JSON.stringify(resultContact(c));
