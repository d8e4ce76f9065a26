/**
 * The test twin's built-in warehouse (docs/test-mode.md): deterministic, with no
 * storage at all. The account ID alone decides the outcome:
 *
 * | account ID               | outcome |
 * |--------------------------|---------|
 * | `test_found_…`           | active, 3 contacts (email and mobile; email only; neither) |
 * | `test_nocontacts_…`      | active, no contact: `not_found`, refunded |
 * | `test_closed_…`          | status `closed`: `invalid` |
 * | `test_inactive_…`        | status `inactive`: `invalid` |
 * | `test_crm_…`             | active, a CRM target: `crm_excluded` (lib/test-mode/history.ts) |
 * | `test_recent_…`          | active, enriched a minute ago: `recently_enriched` when `excludeEnrichedWithinDays` ≥ 1 (lib/test-mode/history.ts) |
 * | `test_fail_…`            | active; reading its contacts fails, so the attempt fails: `failed`, refunded |
 * | `test_slow_…`            | as `test_found_`, paced: at most 100 a second per campaign, each readable within a second ({@link testPacing}) |
 * | anything else            | unknown: `invalid` |
 *
 * `test_crm_` and `test_recent_` accounts that are enriched (no window, for
 * `test_recent_`) have the 3 contacts of `test_found_`.
 *
 * It is a {@link Warehouse} like any other, so the launch evaluation and the
 * workflow's steps run unchanged on it; the composition root hands it to
 * them for a test twin (lib/test-mode/mode.ts). Reads cost CPU only: a batch
 * of 1,000 accounts is built in well under a millisecond per account, with
 * no network call.
 */
import { blankAccount, blankContact, type AccountStatus, type WarehouseAccount, type WarehouseContact } from '../warehouse/schema';
import type { Warehouse, WarehouseAccountFields } from '../warehouse/warehouse';

/** What a test account ID says about its account (its prefix, docs/test-mode.md). */
export type TestAccountKind = 'found' | 'nocontacts' | 'closed' | 'inactive' | 'crm' | 'recent' | 'fail' | 'slow';

/** The prefixes of the test warehouse, each with the kind it gives (docs/test-mode.md). */
export const TEST_ACCOUNT_PREFIXES: Readonly<Record<TestAccountKind, string>> = {
  found: 'test_found_',
  nocontacts: 'test_nocontacts_',
  closed: 'test_closed_',
  inactive: 'test_inactive_',
  crm: 'test_crm_',
  recent: 'test_recent_',
  fail: 'test_fail_',
  slow: 'test_slow_',
};

/** `test_slow_` accounts processed at most this many a second per campaign (docs/test-mode.md "Slow accounts"). */
export const TEST_SLOW_ACCOUNTS_PER_SECOND = 100;

/**
 * How the workflow paces the test twin's batches (lib/enrichment/steps.ts
 * `BatchPacing`): `test_slow_` accounts go at most
 * {@link TEST_SLOW_ACCOUNTS_PER_SECOND} a second per campaign, and each part
 * of a batch is readable as soon as it is processed, so partial results can
 * be watched (docs/test-mode.md "Slow accounts").
 */
export const testPacing = {
  paced: (accountId: string): boolean => accountId.startsWith(TEST_ACCOUNT_PREFIXES.slow),
  perSecond: TEST_SLOW_ACCOUNTS_PER_SECOND,
};

const KINDS = Object.entries(TEST_ACCOUNT_PREFIXES) as [TestAccountKind, string][];

/** The kind of a test account ID; `undefined` for any other ID (unknown to the test warehouse: `invalid`). */
export function testAccountKind(accountId: string): TestAccountKind | undefined {
  if (!accountId.startsWith('test_')) return undefined;
  return KINDS.find(([, prefix]) => accountId.startsWith(prefix))?.[0];
}

/** The warehouse status of a test account kind. */
const statusOf = (kind: TestAccountKind): AccountStatus => (kind === 'closed' ? 'closed' : kind === 'inactive' ? 'inactive' : 'active');

/** Thrown by the test warehouse for a batch holding a `test_fail_` account: the attempt fails (docs/test-mode.md). */
export class TestAccountFailureError extends Error {
  override name = 'TestAccountFailure';
}

/**
 * The 3 contacts of an enriched test account, derived from its ID: one with
 * an email and a mobile phone, one with an email only, one with neither
 * (docs/test-mode.md). Best first by seniority (docs/csv.md).
 */
export function testContacts(accountId: string): WarehouseContact[] {
  const domain = `${accountId.replace(/[^a-zA-Z0-9-]/g, '-').toLowerCase()}.example.com`;
  const contact = (n: number, fields: Partial<WarehouseContact>): WarehouseContact => ({
    ...blankContact(`${accountId}_c${n}`),
    country: 'US',
    ...fields,
  });
  return [
    contact(1, {
      firstName: 'Ada',
      lastName: 'Test',
      title: 'Chief Technology Officer',
      seniority: 'c_suite',
      department: 'engineering',
      email: `ada@${domain}`,
      emailStatus: 'verified',
      mobilePhone: '+15550100001',
    }),
    contact(2, {
      firstName: 'Grace',
      lastName: 'Test',
      title: 'VP Sales',
      seniority: 'vp',
      department: 'sales',
      email: `grace@${domain}`,
      emailStatus: 'verified',
    }),
    contact(3, { firstName: 'Alan', lastName: 'Test', title: 'Engineer', seniority: 'entry', department: 'engineering' }),
  ];
}

/** The test warehouse's account fields for an ID, without its contacts; `undefined` for an ID it does not know. */
export function testAccountFields(accountId: string): WarehouseAccountFields | undefined {
  const kind = testAccountKind(accountId);
  if (!kind) return undefined;
  return {
    ...blankAccount(accountId, statusOf(kind)),
    name: `Test account ${accountId}`,
    domain: `${accountId.replace(/[^a-zA-Z0-9-]/g, '-').toLowerCase()}.example.com`,
    industry: 'Software',
    employeeCount: 100,
    country: 'US',
  };
}

/** The test warehouse's account for an ID, with its contacts; `undefined` for an ID it does not know. */
export function testAccount(accountId: string): WarehouseAccount | undefined {
  const fields = testAccountFields(accountId);
  if (!fields) return undefined;
  const kind = testAccountKind(accountId);
  return { ...fields, contacts: kind === 'nocontacts' || kind === 'closed' || kind === 'inactive' ? [] : testContacts(accountId) };
}

/**
 * The test twin's warehouse (docs/test-mode.md): {@link Warehouse} computed from
 * the IDs alone. `getAccounts` throws {@link TestAccountFailureError} when
 * the batch holds a `test_fail_` account, which fails the workflow's batch
 * and so the attempt (not retried: only transient AWS errors are,
 * infra/workflow.ts), and the compensation refunds it.
 */
export const testWarehouse: Warehouse = {
  async getAccountStatuses(accountIds) {
    const fields = new Map<string, WarehouseAccountFields>();
    for (const id of accountIds) {
      const account = testAccountFields(id);
      if (account) fields.set(id, account);
    }
    return fields;
  },

  async getAccounts(accountIds) {
    const failing = accountIds.find((id) => testAccountKind(id) === 'fail');
    if (failing !== undefined)
      throw new TestAccountFailureError(`Test account ${failing} fails its enrichment attempt (docs/test-mode.md)`);
    return accountIds.flatMap((id) => testAccount(id) ?? []);
  },
};
