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

/** The JSON text of {@link resultAccount} (what a part stores). */
export const resultAccountJson = (a: EnrichedAccount): string => JSON.stringify(resultAccount(a));
/** The JSON text of {@link resultContact} (what a part stores). */
export const resultContactJson = (c: WarehouseContact): string => JSON.stringify(resultContact(c));
