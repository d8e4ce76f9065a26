/**
 * Warehouse records (README.md#operator-cli): one account per JSON line, with its
 * contacts. Every contact field but `contactId` may be null or absent. The
 * fields are declared once, in lib/warehouse/fields.ts; these schemas are
 * built from that declaration.
 */
import * as z from 'zod/mini';
import { treeShakable } from '../schemas';
import {
  ACCOUNT_FIELDS,
  ACCOUNT_STATUSES,
  CONTACT_FIELDS,
  type AccountStatus,
  type FieldDeclaration,
  type FieldRecord,
  type FieldType,
} from './fields';

export { ACCOUNT_STATUSES, type AccountStatus };

/** Seniority ranks, best first (docs/csv.md ordering). */
export const SENIORITY_ORDER = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'] as const;

const nullIfAbsent = <T>(schema: z.ZodMiniType<T>) =>
  z.pipe(
    z.nullish(schema),
    z.transform((v) => v ?? null),
  );

/** The schema of one field type (lib/warehouse/fields.ts `FieldType`): absent optional values become null. */
const FIELD_SCHEMAS: Record<FieldType, () => z.ZodMiniType> = {
  id: () => z.string().check(z.minLength(1), z.maxLength(128)),
  text: () => nullIfAbsent(z.string()),
  count: () => nullIfAbsent(z.int().check(z.minimum(0))),
  status: () => z.enum(ACCOUNT_STATUSES),
};

/** The zod shape of a field list: each field's key with its type's schema. */
const shapeOf = (fields: readonly FieldDeclaration[]): Record<string, z.ZodMiniType> =>
  Object.fromEntries(fields.map((field) => [field.key, FIELD_SCHEMAS[field.type]()]));

/** A contact as stored and exported (absent fields become null). */
export type WarehouseContact = FieldRecord<typeof CONTACT_FIELDS>;

/** A contact of a warehouse account. */
export const WarehouseContactSchema = /* @__PURE__ */ treeShakable(
  () => z.object(shapeOf(CONTACT_FIELDS)) as unknown as z.ZodMiniType<WarehouseContact>,
);

/** An account's own fields (lib/warehouse/fields.ts), without its contacts. */
export type WarehouseAccountFields = FieldRecord<typeof ACCOUNT_FIELDS>;
/** A warehouse account with its contacts. */
export type WarehouseAccount = WarehouseAccountFields & { contacts: WarehouseContact[] };

/** One line of a warehouse import file. */
export const WarehouseAccountSchema = /* @__PURE__ */ treeShakable(
  () =>
    z.object({
      ...shapeOf(ACCOUNT_FIELDS),
      contacts: z._default(z.array(WarehouseContactSchema), []),
    }) as unknown as z.ZodMiniType<WarehouseAccount>,
);

/** A contact with every field but its ID null: what a fixture or a generator fills in. */
export const blankContact = (contactId: string): WarehouseContact =>
  Object.fromEntries(CONTACT_FIELDS.map((field) => [field.key, field.key === 'contactId' ? contactId : null])) as WarehouseContact;

/**
 * An account the warehouse does not hold, as a workflow batch stores it: every field but its ID null, no status and no
 * contacts (lib/enrichment/steps.ts), built from the field declaration so a new field needs no line here.
 */
export const missingAccount = (accountId: string): Omit<WarehouseAccount, 'status'> => {
  const { status: _status, ...fields } = blankAccount(accountId);
  return { ...fields, contacts: [] };
};

/** An account with every field but its ID and status null, without contacts: what a fixture or a generator fills in. */
export const blankAccount = (accountId: string, status: AccountStatus = 'active'): WarehouseAccountFields =>
  Object.fromEntries(
    ACCOUNT_FIELDS.map((field) => [field.key, field.key === 'accountId' ? accountId : field.key === 'status' ? status : null]),
  ) as WarehouseAccountFields;
