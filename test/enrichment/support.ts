/**
 * Helpers of the enrichment tests (docs/README.md#a-campaigns-life-in-one-paragraph;
 * docs/launch.md, docs/csv.md, README.md#operator-cli): warehouse fixtures with per-test
 * unique account IDs, warehouse adapters that hold or fail a call until the
 * test lets them go, polling, and small readers of the organization, the
 * campaign and the ledger.
 */
import { afterEach, expect } from 'vitest';
import { customAlphabet } from 'nanoid';
import fc from 'fast-check';
import { blankAccount, blankContact, type WarehouseAccount, type WarehouseContact } from '../../lib/warehouse/schema';
import type { Warehouse, WarehouseImportOptions } from '../../lib/warehouse/warehouse';
import { apiKeys, embeddedWarehouse, enrichment, ledger, organizations, useWarehouse } from '../../lib/root';
import { sumOf, type LedgerEntry } from '../../lib/credits/ledger';
import { call, newOrganization, type ApiResponse } from '../support/api';
import * as keys from '../../lib/db/keys';
import { SPAWNED_RUN_MS } from '../support/spawned';

export const CREATE = '/v1/campaigns/create';
export const GET = '/v1/campaigns/get';
export const LIST = '/v1/campaigns/list';
export const ENRICH = '/v1/campaigns/enrich';
export const DESCRIBE = '/v1/org/describe';

/** Day in milliseconds. */
export const DAY_MS = 86_400_000;

/**
 * The partition-key prefix shared by every history bucket of an organization
 * (`keys.accountHistoryBucket` in lib/db/table.ts owns the key; docs/data-model.md
 * "Recency and CRM targets"): a test that holds or counts history calls matches on it.
 */
export const historyBucketPrefix = (organizationId: string): string => {
  const { pk } = keys.accountHistoryBucket(organizationId, 0);
  return pk.slice(0, pk.lastIndexOf('#') + 1);
};

/** A unique prefix for the account IDs of one test (account IDs are global to the table). */
export const uniquePrefix = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 12);

/** A contact; `mobile` gives it a mobile phone. */
export function contact(contactId: string, options: { mobile?: boolean; email?: boolean } = {}): WarehouseContact {
  return {
    ...blankContact(contactId),
    firstName: 'Ada',
    lastName: 'Lovelace',
    title: 'CTO',
    seniority: 'c_suite',
    department: 'engineering',
    email: options.email === false ? null : `${contactId}@example.com`,
    emailStatus: options.email === false ? null : 'verified',
    mobilePhone: options.mobile ? '+15551234567' : null,
    country: 'US',
  };
}

/** A warehouse account with the given status and contacts. */
export function account(
  accountId: string,
  status: WarehouseAccount['status'] = 'active',
  contacts: WarehouseContact[] = [],
): WarehouseAccount {
  return {
    ...blankAccount(accountId, status),
    name: `Account ${accountId}`,
    domain: `${accountId}.example.com`,
    industry: 'Software',
    employeeCount: 120,
    country: 'US',
    contacts,
  };
}

/** `count` active accounts `<prefix>_<i>`, each with one contact. */
export function activeAccounts(prefix: string, count: number): WarehouseAccount[] {
  return Array.from({ length: count }, (_, i) => account(`${prefix}_${i}`, 'active', [contact(`${prefix}_${i}_c`)]));
}

/**
 * Upserts accounts in the embedded warehouse.
 * @param options - `withoutIdentifierIndex` (lib/warehouse/warehouse.ts `WarehouseImportOptions`): for a test that never
 *   runs the vendor's erasure, the only reader of the identifier index, on these accounts. The index is about half the
 *   items of these one-contact accounts, and DynamoDB Local spends its CPU per item written.
 */
export async function importAccounts(accounts: readonly WarehouseAccount[], options?: WarehouseImportOptions): Promise<void> {
  await embeddedWarehouse().importAccounts(accounts, options);
}

/** {@link importAccounts}' option for tests that never run the vendor's erasure: no identifier-index entries. */
export const NO_ERASURE = { withoutIdentifierIndex: true } as const satisfies WarehouseImportOptions;

/** A promise the test resolves by hand. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

/** A closed gate. */
export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A warehouse adapter around the embedded one, with calls the test holds, fails or counts. */
export interface TestWarehouse extends Warehouse {
  /** Calls made so far, by method. */
  calls: { getAccountStatuses: number; getAccounts: number };
  /** Resolves when the named method has been called at least `n` times. */
  called(method: 'getAccountStatuses' | 'getAccounts', n?: number): Promise<void>;
  /** Lets every held call (and every later one) through. */
  release(): void;
}

/**
 * Wraps the embedded warehouse (README.md#operator-cli). `holdStatuses` / `holdAccounts`
 * keep those calls waiting until {@link TestWarehouse.release}; `failAccounts`
 * makes `getAccounts` throw (a failing contact step).
 */
export function testWarehouse(options: { holdStatuses?: boolean; holdAccounts?: boolean; failAccounts?: boolean } = {}): TestWarehouse {
  const inner = embeddedWarehouse();
  const held = gate();
  const calls = { getAccountStatuses: 0, getAccounts: 0 };
  const waiters: { method: keyof typeof calls; n: number; resolve: () => void }[] = [];
  const count = (method: keyof typeof calls) => {
    calls[method]++;
    for (const waiter of waiters.splice(0)) {
      if (calls[waiter.method] >= waiter.n) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  return {
    calls,
    called(method, n = 1) {
      if (calls[method] >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ method, n, resolve }));
    },
    release: held.open,
    async getAccountStatuses(accountIds) {
      count('getAccountStatuses');
      if (options.holdStatuses) await held.promise;
      return inner.getAccountStatuses(accountIds);
    },
    async getAccounts(accountIds) {
      count('getAccounts');
      if (options.holdAccounts) await held.promise;
      if (options.failAccounts) throw new Error('Injected warehouse failure: the contact source is unavailable');
      return inner.getAccounts(accountIds);
    },
  };
}

/**
 * Calls `read` until `done` holds for its value, every `intervalMs`, and
 * fails with the last value once `timeoutMs` has passed.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = SPAWNED_RUN_MS, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`pollUntil: condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Creates an API campaign over HTTP and returns its ID. */
export async function createApiCampaign(
  baseUrl: string,
  apiKey: string,
  accountIds: string[],
  excludeEnrichedWithinDays?: number | null,
): Promise<string> {
  const res = await call(baseUrl, CREATE, {
    apiKey,
    body: {
      name: `Campaign ${accountIds.length}`,
      accountIds,
      ...(excludeEnrichedWithinDays !== undefined ? { excludeEnrichedWithinDays } : {}),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.data.id as string;
}

/** `POST /v1/campaigns/get`. */
export const getCampaign = (baseUrl: string, apiKey: string, campaignId: string): Promise<ApiResponse> =>
  call(baseUrl, GET, { apiKey, body: { campaignId } });

/** `POST /v1/campaigns/enrich`. */
export const enrich = (baseUrl: string, apiKey: string, campaignId: string): Promise<ApiResponse> =>
  call(baseUrl, ENRICH, { apiKey, body: { campaignId } });

/** `POST /v1/org/describe`, data only. */
export async function describeOrg(
  baseUrl: string,
  apiKey: string,
): Promise<{ credits: { smb: number }; enrichment: { enrichingAccounts: number; maxEnrichingAccounts: number } }> {
  const res = await call(baseUrl, DESCRIBE, { apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.data;
}

/** Polls get until the campaign reads `status` (the campaign as last read). */
export async function waitForStatus(
  baseUrl: string,
  apiKey: string,
  campaignId: string,
  status: string,
  timeoutMs = SPAWNED_RUN_MS,
): Promise<any> {
  const res = await pollUntil(
    () => getCampaign(baseUrl, apiKey, campaignId),
    (r) => r.status === 200 && r.data.status === status,
    { timeoutMs },
  );
  return res.data;
}

/**
 * A test-mode campaign of `count` `test_found_` accounts (docs/test-mode.md) enriched through HTTP: a new live
 * organization's test twin, a key of the twin, the campaign created and enriched, waited until `enriched`.
 */
export async function enrichedTestCampaign(
  baseUrl: string,
  count: number,
): Promise<{ organizationId: string; apiKey: string; campaignId: string; ids: string[] }> {
  const live = await newOrganization({ name: `Live ${uniquePrefix()}`, smbCredits: 10 });
  const twin = await organizations().testTwin(live.organizationId);
  const apiKey = await apiKeys().create(twin.id);
  const prefix = uniquePrefix();
  const ids = Array.from({ length: count }, (_, i) => `test_found_${prefix}_${String(i).padStart(3, '0')}`);
  const campaignId = await createApiCampaign(baseUrl, apiKey, ids);
  expect((await enrich(baseUrl, apiKey, campaignId)).status).toBe(200);
  await waitForStatus(baseUrl, apiKey, campaignId, 'enriched');
  return { organizationId: twin.id, apiKey, campaignId, ids };
}

/** The org's smb balance, straight from the store (credits). */
export async function balance(organizationId: string): Promise<number> {
  return (await organizations().get(organizationId))!.smbCredits;
}

/** The ledger of a campaign, oldest first, and what it charged net: −Σ amounts (credits). */
export async function ledgerOf(organizationId: string, campaignId: string): Promise<{ entries: LedgerEntry[]; charged: number }> {
  const entries = await ledger().entriesOf(organizationId, campaignId);
  return { entries, charged: 0 - sumOf(entries) };
}

/** Asserts a failure envelope with exactly this status, code and (when given) details. */
export function expectError(res: ApiResponse, status: number, code: string, details?: Record<string, unknown>): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.data).toBeNull();
  expect(res.error?.code).toBe(code);
  expect(res.error?.message).toMatch(/\S/);
  if (details) expect(res.error?.details).toEqual(details);
}

/** ISO 8601 UTC timestamp. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * Registers, for the calling test file, an installer of a {@link testWarehouse}
 * adapter; after each test the adapter is released and the embedded warehouse restored.
 */
export function useTestWarehouses(): (options?: Parameters<typeof testWarehouse>[0]) => TestWarehouse {
  let adapter: TestWarehouse | undefined;
  afterEach(() => {
    adapter?.release();
    adapter = undefined;
    useWarehouse(undefined);
  });
  return (options) => {
    adapter = testWarehouse(options);
    useWarehouse(adapter);
    return adapter;
  };
}

/** A draft of `size` active accounts with one contact each (found: no refund), created over HTTP; its ID. */
export async function draftOfSize(baseUrl: string, apiKey: string, size: number): Promise<string> {
  const list = activeAccounts(uniquePrefix(), size);
  await importAccounts(list);
  return createApiCampaign(
    baseUrl,
    apiKey,
    list.map((a) => a.accountId),
  );
}

/**
 * The inputs of a racing-launches property (fast-check): 2–5 campaign sizes of 1–3 accounts, a limit of
 * 1–8 credits, and each launch's own start delay (0–20 ms), so the order of their transactions varies.
 */
export const racingLaunchInputs = [
  fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 5 }),
  fc.integer({ min: 1, max: 8 }),
  fc.array(fc.nat(20), { minLength: 5, maxLength: 5 }),
] as const;

/** One launch of {@link raceLaunches}: the campaign, its size (accounts) and the enrich answer. */
export interface RacedLaunch {
  campaignId: string;
  size: number;
  res: ApiResponse;
}

/**
 * Creates one draft per size (with `apiKey`), then launches them together, each after its own delay (ms):
 * the order of their transactions varies. Answers every launch, split into the launched (200) and the refused.
 */
export async function raceLaunches(
  baseUrl: string,
  apiKey: string,
  sizes: readonly number[],
  delays: readonly number[],
): Promise<{ launched: RacedLaunch[]; refused: RacedLaunch[]; charged: number }> {
  const drafts = await Promise.all(sizes.map((size) => draftOfSize(baseUrl, apiKey, size)));
  const answers = await Promise.all(
    drafts.map(async (campaignId, i) => {
      await new Promise((r) => setTimeout(r, delays[i]!));
      return { campaignId, size: sizes[i]!, res: await enrich(baseUrl, apiKey, campaignId) };
    }),
  );
  const launched = answers.filter((a) => a.res.status === 200);
  return {
    launched,
    refused: answers.filter((a) => a.res.status !== 200),
    charged: launched.reduce((total, a) => total + a.size, 0),
  };
}
