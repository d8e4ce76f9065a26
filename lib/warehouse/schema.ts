/**
 * Warehouse records (README.md#operator-cli): one account per JSON line, with its
 * contacts. Every contact field but `contactId` may be null or absent.
 */
import * as z from 'zod/mini';
import { treeShakable } from '../schemas';

/** Account statuses of the warehouse; `closed` and `inactive` are not eligible. */
export const ACCOUNT_STATUSES = ['active', 'closed', 'inactive'] as const;
/** A warehouse account status. */
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** Seniority ranks, best first (docs/csv.md ordering). */
export const SENIORITY_ORDER = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'] as const;

const optionalText = () =>
  z.pipe(
    z.nullish(z.string()),
    z.transform((v) => v ?? null),
  );

/** A contact of a warehouse account. */
export const WarehouseContactSchema = /* @__PURE__ */ treeShakable(() =>
  z.object({
    contactId: z.string().check(z.minLength(1), z.maxLength(128)),
    firstName: optionalText(),
    lastName: optionalText(),
    title: optionalText(),
    seniority: optionalText(),
    department: optionalText(),
    email: optionalText(),
    emailStatus: optionalText(),
    mobilePhone: optionalText(),
    directPhone: optionalText(),
    linkedinUrl: optionalText(),
    country: optionalText(),
  }),
);
/** A contact as stored and exported (absent fields become null). */
export type WarehouseContact = z.output<typeof WarehouseContactSchema>;

/** One line of a warehouse import file. */
export const WarehouseAccountSchema = /* @__PURE__ */ treeShakable(() =>
  z.object({
    accountId: z.string().check(z.minLength(1), z.maxLength(128)),
    name: optionalText(),
    domain: optionalText(),
    status: z.enum(ACCOUNT_STATUSES),
    industry: optionalText(),
    employeeCount: z.pipe(
      z.nullish(z.int().check(z.minimum(0))),
      z.transform((v) => v ?? null),
    ),
    country: optionalText(),
    contacts: z._default(z.array(WarehouseContactSchema), []),
  }),
);
/** A warehouse account with its contacts. */
export type WarehouseAccount = z.output<typeof WarehouseAccountSchema>;
