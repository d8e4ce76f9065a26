/**
 * The one declaration of every account and contact field (docs/csv.md,
 * docs/results.md, docs/data-model.md "Result parts"): its name in the
 * warehouse record, its type, its CSV column, its key in the results' JSON,
 * its cell rule, an example and what it means. Everything else derives from
 * these two lists, in their order:
 *
 * - the warehouse schema (lib/warehouse/schema.ts) and its blank records;
 * - the workflow's batch objects (lib/enrichment/attempt-objects.ts);
 * - the CSV column catalog and the cell encoders (lib/results/csv.ts);
 * - the results' JSON, its response schema and example, and the arrays a
 *   result part stores (lib/results/json.ts, lib/exports/docs.ts,
 *   lib/results/parts.ts);
 * - the test-mode and demo warehouses and the tests' fixtures.
 *
 * Adding a field is one entry here (docs/architecture.md "Add a field or
 * column"); a field without `column` is not exported, one without `json` is
 * not in the results. A workflow batch object names the fields it holds on
 * its first line, and a result part in its header (docs/data-model.md
 * "Result parts"), so one written before a change still reads right: a
 * field it lacks reads as empty or null. No change here needs a new layout.
 */

/** Account statuses of the warehouse; `closed` and `inactive` are not eligible (docs/launch.md#evaluation). */
export const ACCOUNT_STATUSES = ['active', 'closed', 'inactive'] as const;
/** A warehouse account status. */
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/**
 * What a field holds:
 * - `id`: a non-empty text of at most 128 characters, always present;
 * - `text`: a text, or null when absent;
 * - `count`: an integer ≥ 0, or null when absent;
 * - `status`: one of {@link ACCOUNT_STATUSES}.
 */
export type FieldType = 'id' | 'text' | 'count' | 'status';

/** One field of an account or a contact. */
export interface FieldDeclaration {
  /** Its name in the warehouse record (the import file's JSON key, the table's attribute). */
  readonly key: string;
  readonly type: FieldType;
  /** Its CSV column (docs/csv.md); absent: not exported. */
  readonly column?: string;
  /** Its key in the results' JSON (docs/results.md); absent: not in the results' `account` or contact. */
  readonly json?: string;
  /**
   * Its cell rule beyond the common one (docs/csv.md): `phone` keeps a plain
   * E.164 number as it is instead of prefixing it.
   */
  readonly cell?: 'phone';
  /** An example value (the OpenAPI examples). */
  readonly example: string | number | null;
  /** What it means, for the OpenAPI document. */
  readonly meaning: string;
}

/** Every account field, in the export's and the results' order. */
export const ACCOUNT_FIELDS = [
  { key: 'accountId', type: 'id', column: 'account_id', example: 'acc_00001', meaning: 'The account’s ID in the warehouse.' },
  { key: 'name', type: 'text', column: 'account_name', json: 'name', example: 'Acme Corp', meaning: 'Company name.' },
  { key: 'domain', type: 'text', column: 'account_domain', json: 'domain', example: 'acme.example', meaning: 'Web domain.' },
  { key: 'status', type: 'status', example: 'active', meaning: 'Warehouse status; only `active` accounts are eligible.' },
  { key: 'industry', type: 'text', column: 'account_industry', json: 'industry', example: 'Software', meaning: 'Industry.' },
  {
    key: 'employeeCount',
    type: 'count',
    column: 'account_employee_count',
    json: 'employeeCount',
    example: 250,
    meaning: 'Employees (a count).',
  },
  {
    key: 'country',
    type: 'text',
    column: 'account_country',
    json: 'country',
    example: 'US',
    meaning: 'Country, ISO 3166-1 alpha-2 as the warehouse holds it.',
  },
] as const satisfies readonly FieldDeclaration[];

/** Every contact field, in the export's and the results' order. */
export const CONTACT_FIELDS = [
  { key: 'contactId', type: 'id', column: 'contact_id', json: 'contactId', example: 'con_00001_1', meaning: 'The contact’s ID.' },
  { key: 'firstName', type: 'text', column: 'first_name', json: 'firstName', example: 'Ada', meaning: 'First name.' },
  { key: 'lastName', type: 'text', column: 'last_name', json: 'lastName', example: 'Lovelace', meaning: 'Last name.' },
  { key: 'title', type: 'text', column: 'job_title', json: 'jobTitle', example: 'CTO', meaning: 'Job title.' },
  {
    key: 'seniority',
    type: 'text',
    column: 'seniority',
    json: 'seniority',
    example: 'c_suite',
    meaning: 'Seniority rank (c_suite, vp, director, manager, senior, entry, unknown): contacts are ordered by it.',
  },
  { key: 'department', type: 'text', column: 'department', json: 'department', example: 'engineering', meaning: 'Department.' },
  { key: 'email', type: 'text', column: 'email', json: 'email', example: 'ada@acme.example', meaning: 'Work email.' },
  {
    key: 'emailStatus',
    type: 'text',
    column: 'email_status',
    json: 'emailStatus',
    example: 'valid',
    meaning: 'Email verification status.',
  },
  {
    key: 'mobilePhone',
    type: 'text',
    column: 'mobile_phone',
    json: 'mobilePhone',
    cell: 'phone',
    example: '+15551230001',
    meaning: 'Mobile phone.',
  },
  { key: 'directPhone', type: 'text', column: 'direct_phone', json: 'directPhone', cell: 'phone', example: null, meaning: 'Direct line.' },
  {
    key: 'linkedinUrl',
    type: 'text',
    column: 'linkedin_url',
    json: 'linkedinUrl',
    example: 'https://www.linkedin.com/in/ada',
    meaning: 'LinkedIn profile URL.',
  },
  { key: 'country', type: 'text', column: 'contact_country', json: 'country', example: 'US', meaning: 'Country, ISO 3166-1 alpha-2.' },
] as const satisfies readonly FieldDeclaration[];

/** The value a field of type `T` holds. */
export type FieldValue<T extends FieldType> = T extends 'id'
  ? string
  : T extends 'count'
    ? number | null
    : T extends 'status'
      ? AccountStatus
      : string | null;

/** A record of fields, by warehouse key. */
export type FieldRecord<F extends readonly FieldDeclaration[]> = { -readonly [D in F[number] as D['key']]: FieldValue<D['type']> };
/** The results' JSON of fields that have a `json` key, by that key. */
export type JsonRecord<F extends readonly FieldDeclaration[]> = {
  -readonly [D in F[number] as D extends { json: string } ? D['json'] : never]: FieldValue<D['type']>;
};
/** The CSV columns of fields (those with a `column`). */
export type ColumnOf<F extends readonly FieldDeclaration[]> = Extract<F[number], { column: string }>['column'];

/** A declaration with a CSV column. */
export type ExportedField = FieldDeclaration & { readonly column: string };
/** A declaration with a JSON key. */
export type ResultField = FieldDeclaration & { readonly json: string };

/** The fields of a list that are exported, in order. */
export const exportedFields = <F extends readonly FieldDeclaration[]>(fields: F): Extract<F[number], ExportedField>[] =>
  fields.filter((field): field is Extract<F[number], ExportedField> => field.column !== undefined);
/** The fields of a list that the results show, in order. */
export const resultFields = <F extends readonly FieldDeclaration[]>(fields: F): Extract<F[number], ResultField>[] =>
  fields.filter((field): field is Extract<F[number], ResultField> => field.json !== undefined);
