/**
 * Helpers of the quote and per-account outcome tests (docs/launch.md): a
 * warehouse fixture with accounts in every evaluation bucket and every
 * workflow outcome, spelled out by hand; the two operations over HTTP; a
 * page walker; a snapshot of the whole table and bucket; and a warehouse
 * adapter whose contact reads the test lets through one at a time.
 */
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { ddb, s3 } from '../../lib/aws';
import { config } from '../../lib/config';
import { accountHistory, embeddedWarehouse, useWarehouse } from '../../lib/root';
import type { Warehouse } from '../../lib/warehouse/warehouse';
import { call, type ApiResponse, type CallOptions } from '../support/api';
import { DAY_MS, account, contact, importAccounts, uniquePrefix } from './support';

export const QUOTE = '/v1/campaigns/quote';
export const ACCOUNTS = '/v1/campaigns/accounts';

/** `POST /v1/campaigns/quote`. */
export const quote = (baseUrl: string, apiKey: string, campaignId: string, options: Partial<CallOptions> = {}): Promise<ApiResponse> =>
  call(baseUrl, QUOTE, { apiKey, body: { campaignId }, ...options });

/** `POST /v1/campaigns/accounts` with a JSON body. */
export const accountsPage = (baseUrl: string, apiKey: string, body: Record<string, unknown>): Promise<ApiResponse> =>
  call(baseUrl, ACCOUNTS, { apiKey, body });

/** One account as `/v1/campaigns/accounts` shows it. */
export interface AccountRow {
  accountId: string;
  outcome: string;
  contactsFound: number | null;
}

/** Walks every page of `/v1/campaigns/accounts` with the given filters and limit; returns the accounts and the pages' sizes. */
export async function allAccounts(
  baseUrl: string,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<{ accounts: AccountRow[]; pages: number[]; summary: Record<string, number> }> {
  const accounts: AccountRow[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  let summary: Record<string, number> = {};
  do {
    const res = await accountsPage(baseUrl, apiKey, { ...body, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    accounts.push(...res.data.accounts);
    pages.push(res.data.accounts.length);
    summary = res.data.summary;
    cursor = res.data.nextCursor ?? undefined;
    if (pages.length > 10_000) throw new Error('allAccounts: too many pages');
  } while (cursor);
  return { accounts, pages, summary };
}

/**
 * The bucket fixture: 11 distinct accounts (12 submitted, one twice) with
 * `excludeEnrichedWithinDays` 30, one or more in every bucket of docs/launch.md
 * and every outcome of docs/launch.md#per-account-outcomes, each with what the API must say about it.
 */
export interface BucketFixture {
  prefix: string;
  /** The IDs as submitted to create (one duplicate). */
  submitted: string[];
  /** Every distinct account in submission order with its expected outcome and contacts. */
  expected: AccountRow[];
  /** Expected evaluation figures (accounts). */
  accounts: {
    requested: number;
    eligible: number;
    excluded: { total: number; invalid: number; recentlyEnriched: number; crmExcluded: number };
  };
}

/**
 * Imports the fixture's warehouse and the organization's history and CRM
 * targets: enrichment of `recent` and `recentCrm` 5 days ago; CRM targets
 * `recentCrm` (recency wins), `crm`, and `closedCrm` (invalid wins).
 */
export async function bucketFixture(organizationId: string): Promise<BucketFixture> {
  const p = uniquePrefix();
  const id = (name: string) => `${p}_${name}`;
  await importAccounts([
    account(id('found2c'), 'active', [contact(id('found2c_1'), { mobile: true }), contact(id('found2c_2'), { email: false })]),
    account(id('found1c'), 'active', [contact(id('found1c_1'))]),
    account(id('none1'), 'active', []),
    account(id('none2'), 'active', []),
    account(id('closed'), 'closed', [contact(id('closed_1'))]),
    account(id('inactive'), 'inactive', [contact(id('inactive_1'))]),
    account(id('closedCrm'), 'closed', []),
    account(id('recent'), 'active', [contact(id('recent_1'))]),
    account(id('recentCrm'), 'active', [contact(id('recentCrm_1'))]),
    account(id('crm'), 'active', [contact(id('crm_1'))]),
  ]);
  await accountHistory().recordEnrichment(organizationId, [id('recent'), id('recentCrm')], new Date(Date.now() - 5 * DAY_MS).toISOString());
  await accountHistory().addCrmTargets(organizationId, [id('recentCrm'), id('crm'), id('closedCrm')]);

  const expected: AccountRow[] = [
    { accountId: id('found2c'), outcome: 'found', contactsFound: 2 },
    { accountId: id('closed'), outcome: 'invalid', contactsFound: null },
    { accountId: id('recent'), outcome: 'recently_enriched', contactsFound: null },
    { accountId: id('none1'), outcome: 'not_found', contactsFound: 0 },
    { accountId: id('crm'), outcome: 'crm_excluded', contactsFound: null },
    { accountId: id('unknown'), outcome: 'invalid', contactsFound: null },
    { accountId: id('found1c'), outcome: 'found', contactsFound: 1 },
    { accountId: id('inactive'), outcome: 'invalid', contactsFound: null },
    { accountId: id('recentCrm'), outcome: 'recently_enriched', contactsFound: null },
    { accountId: id('none2'), outcome: 'not_found', contactsFound: 0 },
    { accountId: id('closedCrm'), outcome: 'invalid', contactsFound: null },
  ];
  return {
    prefix: p,
    submitted: [...expected.map((row) => row.accountId), id('found2c')],
    expected,
    accounts: { requested: 11, eligible: 4, excluded: { total: 7, invalid: 4, recentlyEnriched: 2, crmExcluded: 1 } },
  };
}

/** Canonical JSON of a stored value: sorted keys, sets as sorted arrays. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Set) return [...v].sort();
    if (v && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)));
    return v;
  });
}

/** Every item of the table (consistent Scan) and every object of the bucket (key → ETag, size, last modified). */
export interface StorageSnapshot {
  items: Map<string, string>;
  objects: Map<string, string>;
}

/** Reads the whole table and lists the whole bucket. */
export async function snapshotStorage(options: { prefixes?: string[] } = {}): Promise<StorageSnapshot> {
  const items = new Map<string, string>();
  for await (const page of paginateScan({ client: ddb }, { TableName: config.tableName, ConsistentRead: true })) {
    for (const item of page.Items ?? []) items.set(`${String(item.pk)}|${String(item.sk)}`, canonical(item));
  }
  // s3rver lists by walking its folder and reading each object's metadata file: an object another test
  // file writes at that moment can fail the listing with a 500. Such a listing is read again from the start.
  for (let attempt = 1; ; attempt++) {
    try {
      const objects = new Map<string, string>();
      for (const prefix of options.prefixes ?? ['']) {
        for await (const page of paginateListObjectsV2(
          { client: s3() },
          { Bucket: config.bucketName, ...(prefix ? { Prefix: prefix } : {}) },
        )) {
          for (const object of page.Contents ?? [])
            objects.set(object.Key!, `${object.ETag} ${object.Size} ${object.LastModified?.toISOString()}`);
        }
      }
      return { items, objects };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      if (status < 500 || attempt >= 30) throw error;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** Entries added, removed or changed between two snapshots, as `key → before → after` lines. */
export function storageChanges(before: StorageSnapshot, after: StorageSnapshot): string[] {
  const diff = (a: Map<string, string>, b: Map<string, string>, kind: string) => {
    const changes: string[] = [];
    for (const key of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(key) !== b.get(key)) changes.push(`${kind} ${key}: ${a.get(key) ?? '(absent)'} → ${b.get(key) ?? '(absent)'}`);
    }
    return changes;
  };
  return [...diff(before.items, after.items, 'item'), ...diff(before.objects, after.objects, 'object')];
}

/** A warehouse adapter whose contact reads (`getAccounts`, one per workflow batch) wait until the test lets them through one at a time. */
export interface SteppedWarehouse extends Warehouse {
  /** Contact reads started so far. */
  readonly started: number;
  /** Resolves once `n` contact reads have started. */
  startedAtLeast(n: number): Promise<void>;
  /** Lets the oldest waiting contact read through. */
  releaseOne(): void;
  /** Lets every waiting and later read through. */
  releaseAll(): void;
}

/** Installs a {@link SteppedWarehouse} for this process; `restore` puts the embedded warehouse back. */
export function installSteppedWarehouse(): SteppedWarehouse & { restore(): void } {
  const inner = embeddedWarehouse();
  const waiting: Array<() => void> = [];
  const watchers: Array<{ n: number; resolve: () => void }> = [];
  let open = false;
  let started = 0;
  const adapter = {
    get started() {
      return started;
    },
    startedAtLeast(n: number) {
      return started >= n ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ n, resolve }));
    },
    releaseOne() {
      waiting.shift()?.();
    },
    releaseAll() {
      open = true;
      for (const release of waiting.splice(0)) release();
    },
    getAccountStatuses: (ids: readonly string[]) => inner.getAccountStatuses(ids),
    async getAccounts(ids: readonly string[]) {
      started++;
      for (const watcher of watchers.splice(0)) {
        if (started >= watcher.n) watcher.resolve();
        else watchers.push(watcher);
      }
      if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
      return inner.getAccounts(ids);
    },
    restore() {
      adapter.releaseAll();
      useWarehouse(undefined);
    },
  };
  useWarehouse(adapter);
  return adapter;
}
