/**
 * Data the figures work on: organizations (through the store, as the
 * operator CLI creates them), warehouse accounts and campaigns (through the
 * API).
 */
import { nanoid } from 'nanoid';
import { embeddedWarehouse, limits, organizations } from '../../lib/root';
import { blankAccount, type WarehouseAccount, type WarehouseContact } from '../../lib/warehouse/schema';
import type { CampaignRecord } from '../../lib/campaigns/model';
import { accountListKey } from '../../lib/account-lists/account-list';
import { objectKeys } from '../../lib/objects';
import { expectOk, post, PATHS } from './api';
import type { BenchStack } from './stack';

const SENIORITIES = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'];
const DEPARTMENTS = ['engineering', 'sales', 'marketing', 'finance', 'operations', 'hr', 'legal', 'it'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'CA', 'AU', 'NL', 'ES', 'JP', 'BR'];

/** A realistic contact, deterministic from its indexes (cheap to generate by the million). */
export function benchContact(accountId: string, account: number, c: number): WarehouseContact {
  const first = `First${(account * 7 + c) % 997}`;
  const last = `Last${(account * 13 + c) % 991}`;
  const shape = (account + c) % 4; // 0: email and mobile, 1: email only, 2: mobile only, 3: neither
  return {
    contactId: `${accountId}_c${c}`,
    firstName: first,
    lastName: last,
    title: 'Head of Engineering',
    seniority: SENIORITIES[(account + c) % SENIORITIES.length]!,
    department: DEPARTMENTS[(account + c) % DEPARTMENTS.length]!,
    email: shape <= 1 ? `${first}.${last}@company${account}.example.com`.toLowerCase() : null,
    emailStatus: shape <= 1 ? 'verified' : null,
    mobilePhone: shape === 0 || shape === 2 ? `+1 555 ${String(account % 1000).padStart(3, '0')} ${String(c).padStart(4, '0')}` : null,
    directPhone: c % 3 === 0 ? `+1 555 010 ${String(c).padStart(4, '0')}` : null,
    linkedinUrl: c % 2 === 0 ? `https://www.linkedin.com/in/${first}-${last}-${account}`.toLowerCase() : null,
    country: COUNTRIES[account % COUNTRIES.length]!,
  };
}

/** An active warehouse account with `contacts` contacts. */
export function benchAccount(accountId: string, index: number, contacts: number): WarehouseAccount {
  return {
    ...blankAccount(accountId),
    name: `Company ${index}`,
    domain: `company${index}.example.com`,
    industry: 'Software',
    employeeCount: 10 + (index % 5_000),
    country: COUNTRIES[index % COUNTRIES.length]!,
    contacts: Array.from({ length: contacts }, (_, c) => benchContact(accountId, index, c + 1)),
  };
}

/**
 * Imports `count` accounts `<prefix>_<i>` through the embedded warehouse, in
 * chunks generated on the fly (bounded memory), `parallel` chunks at a time:
 * DynamoDB Local answers each batch slowly but serves many at once.
 *
 * Without the warehouse identifier index (`withoutIdentifierIndex`): it is read by the vendor's erasure
 * alone, which no module importing through here measures, and it is ~35 items an account of 10 contacts
 * (3.5 M more items for the scale module's 100,000 accounts: its setup sat 20 minutes in DynamoDB Local).
 * The account and contacts items, the ones launch and FindContacts read, are the product's own.
 * @returns their IDs.
 */
export async function importBenchAccounts(
  prefix: string,
  count: number,
  contacts: number,
  options: { chunk?: number; parallel?: number } = {},
): Promise<string[]> {
  const chunk = options.chunk ?? 1_000;
  const ids = Array.from({ length: count }, (_, i) => `${prefix}_${String(i).padStart(6, '0')}`);
  let next = 0;
  const worker = async () => {
    for (let offset = next; offset < count; offset = next) {
      next += chunk;
      const accounts = ids.slice(offset, offset + chunk).map((id, i) => benchAccount(id, offset + i, contacts));
      await embeddedWarehouse().importAccounts(accounts, { withoutIdentifierIndex: true });
    }
  };
  await Promise.all(Array.from({ length: options.parallel ?? 4 }, worker));
  return ids;
}

/** Requests per window of a bench organization: the per-request figures measure the API, not its limit (bench/figures/limits.ts does). */
export const BENCH_REQUEST_LIMIT = 100_000_000;

/** A fresh organization and its API key; its request rate raised to {@link BENCH_REQUEST_LIMIT} (its requests are still counted). */
export async function benchOrganization(name: string, credits = 1_000_000, ceiling = 1_000_000) {
  const { organization, apiKey } = await organizations().create({
    name,
    smbCredits: credits,
    researchAgentCredits: 0,
    maxEnrichingAccounts: ceiling,
  });
  await limits().setLimits(organization.id, {
    requests: BENCH_REQUEST_LIMIT,
    exportsPerHour: BENCH_REQUEST_LIMIT,
    uploadsPerHour: BENCH_REQUEST_LIMIT,
  });
  return { organizationId: organization.id, apiKey };
}

/** The small data set of the per-request figures: an organization, a warehouse of 20 accounts and 30 draft campaigns. */
export interface SmallFixture {
  organizationId: string;
  apiKey: string;
  accountIds: string[];
  /** A draft campaign of 3 accounts. */
  campaignId: string;
}

export async function smallFixture(stack: BenchStack, label: string): Promise<SmallFixture> {
  const { organizationId, apiKey } = await benchOrganization(`Bench ${label}`);
  const accountIds = await importBenchAccounts(`b${nanoid(6).replace(/[^a-zA-Z0-9]/g, 'x')}`, 20, 3);
  let campaignId = '';
  for (let i = 0; i < 30; i++) {
    const created = expectOk(
      await post<{ id: string }>(stack, PATHS.create, apiKey, {
        name: `Campaign ${i}`,
        accountIds: accountIds.slice(i % 10, (i % 10) + 3),
      }),
      'create',
    );
    campaignId = created.id;
  }
  return { organizationId, apiKey, accountIds, campaignId };
}

/**
 * An `enriched` campaign record whose attempt `attemptId` holds results of
 * `accounts` accounts with `contacts` contacts each, as the workflow leaves
 * it (completed 30 s ago, results readable for a day); the caller writes the
 * parts under the attempt's results prefix.
 */
export function benchEnrichedCampaign(options: {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  name: string;
  accounts: number;
  contacts: number;
}): CampaignRecord {
  const { organizationId, campaignId, attemptId, accounts: n, contacts: c } = options;
  const now = Date.now();
  return {
    id: campaignId,
    organizationId,
    name: options.name,
    status: 'enriched',
    createdVia: 'api',
    excludeEnrichedWithinDays: null,
    createdAt: new Date(now - 60_000).toISOString(),
    accountsRequested: n,
    accountsObjectKey: accountListKey(organizationId, campaignId),
    accountsEligible: n,
    accountsExcluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 },
    creditsCharged: n,
    lastEnrichment: null,
    completedAt: new Date(now - 30_000).toISOString(),
    resultsExpireAt: new Date(now + 86_400_000).toISOString(),
    results: { totalAccounts: n, totalContactsFound: n * c, pctAccountsWithContact: c > 0 ? 1 : 0, pctAccountsWithMobile: c > 0 ? 1 : 0 },
    attempt: {
      id: attemptId,
      startedAt: new Date(now - 60_000).toISOString(),
      eligible: n,
      charged: n,
      creditsPerAccount: 1,
      eligibleObjectKey: objectKeys.eligibleList(organizationId, campaignId, attemptId),
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:bench:${attemptId}`,
    },
  };
}
