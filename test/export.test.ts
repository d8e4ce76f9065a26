/**
 * Export campaign results as CSV (docs/csv.md,
 * docs/errors.md) end to end: real HTTP against
 * the local API server, DynamoDB Local, s3rver and the local Step Functions
 * workflow, and the file downloaded through the presigned URL it returns.
 *
 * The enriched campaign is produced the way a customer produces one (create →
 * enrich → poll get until `enriched`) from warehouse accounts this file
 * imports under a per-run unique prefix. Expected rows are computed here from
 * those accounts with the rules of docs/csv.md, independently of
 * lib/results/csv.ts, and compared with what a real CSV parser reads from the
 * downloaded bytes. States the API cannot reach on demand (enriching, expired,
 * enriched with zero accounts) are written straight to the table.
 */
import { parse } from 'csv-parse/sync';
import { customAlphabet } from 'nanoid';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountListKey } from '../lib/account-lists/account-list';
import type { CampaignRecord } from '../lib/campaigns/model';
import { newCampaignId } from '../lib/ids';
import { campaigns, embeddedWarehouse } from '../lib/root';
import { blankAccount, blankContact, type WarehouseAccount, type WarehouseContact } from '../lib/warehouse/schema';
import { call, newOrganization, useApi, type ApiResponse, type CallOptions } from './support/api';
import {
  accountRows,
  cellIn,
  cellsIn,
  CONTACT_COLUMNS,
  CONTRACT_COLUMNS,
  contractColumnsIn,
  CSV_COLUMNS,
  rowByColumn,
  rowOf,
} from './support/export-oracle';

const api = useApi();
const CREATE = '/v1/campaigns/create';
const GET = '/v1/campaigns/get';
const ENRICH = '/v1/campaigns/enrich';
const EXPORT = '/v1/campaigns/export';

const DAY_MS = 86_400_000;
const MAX_INTEGER = 9007199254740991;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The standard column catalog of docs/csv.md, as the test oracle derives it from the field declaration (not from the
 * code under test); the columns the contract names are pinned, in order, by CONTRACT_COLUMNS.
 */
const CATALOG: readonly string[] = CSV_COLUMNS;

// ---------------------------------------------------------------------------
// Warehouse fixture: every account-ID is unique to this run (the warehouse is
// global to the table).
// ---------------------------------------------------------------------------

const P = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 12)();

/** A contact with every field null except those given. */
function contact(contactId: string, fields: Partial<WarehouseContact> = {}): WarehouseContact {
  return {
    ...blankContact(contactId),
    ...fields,
  };
}

/** Contact fields for "has an email", "has a mobile phone". */
const withEmail = (id: string) => ({ email: `${id}@example.com`, emailStatus: 'verified' });
const withMobile = { mobilePhone: '+49 170 1234567' };

/**
 * Many contacts in scrambled order: every seniority, ties (c_suite, director)
 * listed in reverse contact_id order, a null seniority (ranks as unknown),
 * and every email/mobile combination.
 */
const mainAccount: WarehouseAccount = {
  ...blankAccount(`${P}-main`),
  name: 'Acme, "The Best" Corp',
  domain: 'acme.example',
  status: 'active',
  industry: 'Software\r\nand Services',
  employeeCount: 250,
  country: 'DE',
  contacts: [
    contact(`${P}-m-mgr`, {
      firstName: 'Mia',
      lastName: 'Manager',
      seniority: 'manager',
      title: 'IT Manager',
      ...withEmail('mgr'),
      ...withMobile,
    }),
    contact(`${P}-m-cfo`, { firstName: 'Carl', seniority: 'c_suite', title: 'CFO' }),
    contact(`${P}-m-dir-b`, { firstName: 'Dora', seniority: 'director', ...withMobile }),
    contact(`${P}-m-null`, { firstName: 'Nils', seniority: null, ...withEmail('null') }),
    contact(`${P}-m-ceo`, { firstName: 'Cleo', seniority: 'c_suite', title: 'CEO', ...withEmail('ceo') }),
    contact(`${P}-m-entry`, { firstName: 'Eve', seniority: 'entry', ...withEmail('entry') }),
    contact(`${P}-m-dir-a`, { firstName: 'Dan', seniority: 'director', ...withEmail('dir-a'), ...withMobile }),
    contact(`${P}-m-vp`, { firstName: 'Val', seniority: 'vp', department: 'Sales\nEMEA' }),
    contact(`${P}-m-unknown`, { firstName: 'Uma', seniority: 'unknown', ...withMobile }),
    contact(`${P}-m-senior`, { firstName: 'Sam', seniority: 'senior', email: '', mobilePhone: '' }),
  ],
};

/** No contacts at all: always exactly one account-only row. Non-ASCII name, null columns. */
const emptyAccount: WarehouseAccount = {
  ...blankAccount(`${P}-empty`),
  name: '株式会社テスト',
  domain: null,
  status: 'active',
  industry: null,
  employeeCount: null,
  country: 'JP',
  contacts: [],
};

/** Formula-injection starts in account and contact cells, account and contact IDs included. */
const formulaAccount: WarehouseAccount = {
  ...blankAccount(`-${P}-formula`),
  name: '=SUM(A1)',
  domain: '@cmd',
  status: 'active',
  industry: '+1 555',
  employeeCount: 0,
  country: '\tTAB',
  contacts: [
    contact(`+${P}-f-plus`, {
      firstName: '=HYPERLINK("http://evil.example","click")',
      lastName: '-3',
      title: '@cmd',
      seniority: 'vp',
      department: '\tTabbed',
      email: 'f@example.com',
      emailStatus: '+valid',
      mobilePhone: '+1 555 0100',
      directPhone: '-0',
      linkedinUrl: '\rCR-started',
      country: '=1+1',
    }),
    contact(`${P}-f-plain`, {
      firstName: 'Safe',
      lastName: 'Name',
      seniority: 'entry',
      title: 'a=b',
      department: 'x-y',
      ...withEmail('plain'),
    }),
  ],
};

/** Non-ASCII, quotes, commas, lone LF / lone CR, surrounding spaces. */
const intlAccount: WarehouseAccount = {
  ...blankAccount(`${P}-intl`),
  name: 'Zoë Ñúñez GmbH',
  domain: 'zoë.example',
  status: 'active',
  industry: 'Maschinenbau, "Präzision"',
  employeeCount: 12,
  country: 'ES',
  contacts: [
    contact(`${P}-i-zoe`, {
      firstName: 'Zoë',
      lastName: 'Ñúñez',
      title: 'Head of\nSales, "EMEA"',
      seniority: 'director',
      department: 'R&D\rLab',
      email: 'zoë@例え.jp',
      emailStatus: 'verified',
      linkedinUrl: 'https://linkedin.example/in/zoë?a=1,b=2',
      country: '日本',
    }),
    contact(`${P}-i-space`, { firstName: ' Ada', lastName: 'Lovelace ', seniority: 'senior', ...withMobile }),
  ],
};

/** Contacts with neither an email nor a mobile phone ('' counts as none): any filter leaves it account-only. */
const unreachableAccount: WarehouseAccount = {
  ...blankAccount(`${P}-unreachable`),
  name: 'Nobody Reachable Ltd',
  domain: 'unreachable.example',
  status: 'active',
  industry: 'Retail',
  employeeCount: 40,
  country: 'GB',
  contacts: [
    contact(`${P}-u-2`, { firstName: 'Blank', seniority: 'vp', email: '', mobilePhone: '', directPhone: '+44 20 7946 0000' }),
    contact(`${P}-u-1`, { firstName: 'Null', seniority: 'vp' }),
  ],
};

/** Mobile-only contacts: `hasEmail` alone leaves it account-only. */
const mobileAccount: WarehouseAccount = {
  ...blankAccount(`${P}-mobile`),
  name: 'Mobile First Inc',
  domain: 'mobile.example',
  status: 'active',
  industry: 'Telecom',
  employeeCount: 9000,
  country: 'US',
  contacts: [
    contact(`${P}-mo-entry`, { firstName: 'Ed', seniority: 'entry', ...withMobile }),
    contact(`${P}-mo-ceo`, { firstName: 'Cy', seniority: 'c_suite', ...withMobile }),
  ],
};

/** E.164 phones (kept as they are in the phone columns, docs/csv.md) beside formula-shaped names and near-E.164 values. */
const phoneAccount: WarehouseAccount = {
  ...blankAccount(`${P}-phone`),
  name: '+15551234567',
  domain: 'phones.example',
  status: 'active',
  industry: 'Telecom',
  employeeCount: 30,
  country: 'US',
  contacts: [
    contact(`${P}-p-1`, {
      firstName: '=1+1',
      lastName: '-',
      seniority: 'c_suite',
      mobilePhone: '+15551234567',
      directPhone: '+4930901820',
    }),
    contact(`${P}-p-2`, {
      firstName: '@Ada',
      seniority: 'vp',
      title: '+15551234567',
      mobilePhone: '+1 555 0100',
      directPhone: '+0123456789',
    }),
    contact(`${P}-p-3`, { firstName: 'Max', seniority: 'manager', mobilePhone: '+123456789012345', directPhone: '+1234567890123456' }),
  ],
};

const ELIGIBLE = [mainAccount, emptyAccount, formulaAccount, intlAccount, unreachableAccount, mobileAccount, phoneAccount];
/** Not eligible at launch (closed; absent from the warehouse): never in the file. */
const closedAccount: WarehouseAccount = {
  ...mobileAccount,
  accountId: `${P}-closed`,
  status: 'closed',
  contacts: [contact(`${P}-cl-1`, withEmail('cl'))],
};
const GHOST_ID = `${P}-ghost`;
const CAMPAIGN_NAME = 'Zoë Q4 targets, EMEA';

// ---------------------------------------------------------------------------
// Expected rows (docs/csv.md), computed from the fixture.
// ---------------------------------------------------------------------------

interface Selection {
  maxContactsPerAccount?: number;
  hasMobilePhone?: boolean;
  hasEmail?: boolean;
}

/**
 * The rows of one account, in file order, as a CSV parser reads them: computed from the fixture by the test oracle
 * (test/support/export-oracle.ts: the rules of docs/csv.md, its own code; the columns from the field declaration).
 */
const expectedAccountRows = (account: WarehouseAccount, selection: Selection, enrichedAt: string): string[][] =>
  accountRows(account, selection, enrichedAt).rows;

/** Rows that carry a contact, over every eligible account. */
const expectedContactRows = (selection: Selection) =>
  ELIGIBLE.reduce((sum, account) => sum + accountRows(account, selection, '').contacts, 0);

// ---------------------------------------------------------------------------
// HTTP, download and CSV helpers.
// ---------------------------------------------------------------------------

/** A 400 `invalid_request` with an issue line starting with `<path>: `. */
function expectInvalidRequest(res: ApiResponse, path: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.data).toBeNull();
  expect(res.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/\S/) });
  expect(res.error?.details?.issues).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${escapeRegExp(path)}: \\S`))]));
}

/** A failure envelope with exactly this status, code and (when given) details. */
function expectError(res: ApiResponse, status: number, code: string, details?: Record<string, unknown>): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.data).toBeNull();
  expect(res.error?.code).toBe(code);
  expect(res.error?.message).toMatch(/\S/);
  if (details) expect(res.error?.details).toEqual(details);
}

const exportCampaign = (apiKey: string, body: Record<string, unknown>, options: Omit<CallOptions, 'apiKey' | 'body'> = {}) =>
  call(api(), EXPORT, { apiKey, ...(options.form || options.multipart || options.raw ? options : { body }) });

/** A successful export: status 200 and exactly the spec's "Export result" shape. */
function expectExportResult(
  res: ApiResponse,
  campaignId: string,
): { url: string; urlExpiresAt: string; rows: { accounts: number; contacts: number } } {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.error).toBeNull();
  expect(Object.keys(res.body).sort()).toEqual(['data', 'error']);
  expect(res.data).toStrictEqual({
    campaignId,
    url: expect.any(String),
    urlExpiresAt: expect.stringMatching(ISO_UTC),
    rows: { accounts: expect.any(Number), contacts: expect.any(Number) },
    file: { format: 'csv', encoding: 'utf-8-bom' },
  });
  return res.data;
}

interface Download {
  response: Response;
  bytes: Buffer;
  /** The file's text after the BOM. */
  text: string;
  header: string[];
  rows: string[][];
}

/**
 * Downloads an export through its presigned URL and parses it with csv-parse
 * (strict quotes, CRLF records, strict UTF-8). Checks the BOM, that every
 * record (the last one included) ends with CRLF and has one field per catalog
 * column, before returning the header and the data rows. Quoting of line
 * breaks inside values is checked by {@link expectLineBreaksOnlyInQuotedFields}.
 */
async function download(url: string): Promise<Download> {
  const response = await fetch(url);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(response.status, bytes.toString('utf8').slice(0, 500)).toBe(200);
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(3));
  expect(text.charCodeAt(0)).not.toBe(0xfeff);
  const records = parse(text, {
    bom: false,
    relax_quotes: false,
    relax_column_count: false,
    record_delimiter: '\r\n',
    skip_empty_lines: false,
  }) as string[][];
  // Outside quoted fields, line ends are exactly the record separators.
  const unquoted = text.replace(/"(?:[^"]|"")*"/g, '""');
  expect(unquoted.endsWith('\r\n')).toBe(true);
  expect(unquoted.split('\r\n').length - 1).toBe(records.length);
  expect(records.length).toBeGreaterThan(0);
  for (const record of records) expect(record).toHaveLength(CATALOG.length);
  const [header, ...rows] = records;
  return { response, bytes, text, header: header!, rows };
}

/**
 * RFC 4180: a field containing a line break (CR or LF, alone or paired) must
 * be quoted, so outside quoted fields the only CR or LF characters are the
 * CRLF record separators. A reader that splits lines on a lone CR or LF
 * (spreadsheets, most CSV parsers in their default mode) would otherwise
 * break the record in two.
 */
function expectLineBreaksOnlyInQuotedFields(text: string): void {
  const unquoted = text.replace(/"(?:[^"]|"")*"/g, '""').replace(/\r\n/g, '\u2424');
  const strays = [...unquoted.matchAll(/[^\u2424]{0,40}[\r\n][^\u2424]{0,10}/g)].map((m) => JSON.stringify(m[0]));
  expect(strays, 'unquoted fields containing CR or LF').toEqual([]);
}

/** Splits rows into runs of one account_id; each account must form exactly one run. */
function rowsByAccount(rows: string[][]): Map<string, string[][]> {
  const runs = new Map<string, string[][]>();
  let previous: string | undefined;
  for (const row of rows) {
    const accountId = cellIn(row, 'account_id')!;
    if (accountId !== previous) {
      expect(runs.has(accountId), `account ${accountId} appears in two separate places`).toBe(false);
      runs.set(accountId, []);
      previous = accountId;
    }
    runs.get(accountId)!.push(row);
  }
  return runs;
}

/** The object key of a presigned path-style URL (`/<bucket>/<key>`). */
const objectKeyOf = (url: string) => decodeURIComponent(new URL(url).pathname.split('/').slice(2).join('/'));

/** Polls get until the campaign reads `status`; returns the campaign. */
async function waitForStatus(apiKey: string, campaignId: string, status: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(api(), GET, { apiKey, body: { campaignId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.data.status === status) return res.data;
    if (Date.now() > deadline) throw new Error(`campaign ${campaignId} did not reach ${status}; last read: ${JSON.stringify(res.data)}`);
    await sleep(100);
  }
}

/** A campaign record in any state, written straight to the table. */
function campaignRecord(organizationId: string, overrides: Partial<CampaignRecord> = {}): CampaignRecord {
  const id = overrides.id ?? newCampaignId();
  const now = Date.now();
  return {
    id,
    organizationId,
    name: `Direct ${id.slice(-4)}`,
    status: 'draft',
    createdVia: 'api',
    excludeEnrichedWithinDays: null,
    createdAt: iso(now - 3 * DAY_MS),
    accountsRequested: 5,
    accountsObjectKey: accountListKey(organizationId, id),
    accountsEligible: null,
    accountsExcluded: null,
    creditsCharged: 0,
    lastEnrichment: null,
    ...overrides,
  };
}

/** Launch-evaluated fields, an attempt and (when `done`) completion fields for a directly written record. */
function attemptFields(organizationId: string, campaignId: string, completedAtMs: number, totalAccounts: number): Partial<CampaignRecord> {
  const attemptId = `att_${customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21)()}`;
  return {
    accountsEligible: totalAccounts,
    accountsExcluded: { total: 5 - totalAccounts, invalid: 5 - totalAccounts, recentlyEnriched: 0, crmExcluded: 0 },
    creditsCharged: totalAccounts,
    attempt: {
      id: attemptId,
      startedAt: iso(completedAtMs - 60_000),
      eligible: totalAccounts,
      charged: totalAccounts,
      creditsPerAccount: 1,
      eligibleObjectKey: `campaigns/${organizationId}/${campaignId}/attempts/${attemptId}/eligible.txt`,
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:local:${attemptId}`,
    },
  };
}

function completedFields(completedAtMs: number, resultsExpireAtMs: number, totalAccounts: number): Partial<CampaignRecord> {
  return {
    completedAt: iso(completedAtMs),
    resultsExpireAt: iso(resultsExpireAtMs),
    results: { totalAccounts, totalContactsFound: 0, pctAccountsWithContact: 0, pctAccountsWithMobile: 0 },
  };
}

// ---------------------------------------------------------------------------
// An enriched campaign, produced through the API.
// ---------------------------------------------------------------------------

let apiKey: string;
let campaignId: string;
let enriched: any;

beforeAll(async () => {
  await embeddedWarehouse().importAccounts([...ELIGIBLE, closedAccount]);
  ({ apiKey } = await newOrganization({ name: 'Export Org' }));
  const accountIds = [
    mobileAccount,
    closedAccount,
    emptyAccount,
    formulaAccount,
    intlAccount,
    unreachableAccount,
    mainAccount,
    phoneAccount,
  ].map((a) => a.accountId);
  const created = await call(api(), CREATE, { apiKey, body: { name: CAMPAIGN_NAME, accountIds: [GHOST_ID, ...accountIds] } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  campaignId = created.data.id;
  const launched = await call(api(), ENRICH, { apiKey, body: { campaignId } });
  expect(launched.status, JSON.stringify(launched.body)).toBe(200);
  enriched = await waitForStatus(apiKey, campaignId, 'enriched');
  // The fixture is what the workflow saw: six eligible accounts, closed and unknown IDs excluded.
  expect(enriched.accounts).toMatchObject({
    requested: 9,
    eligible: ELIGIBLE.length,
    excluded: { total: 2, invalid: 2, recentlyEnriched: 0, crmExcluded: 0 },
  });
  expect(enriched.results.totalAccounts).toBe(ELIGIBLE.length);
  expect(enriched.completedAt).toMatch(ISO_UTC);
});

const originalUrlTtl = process.env.EXPORT_URL_TTL_SECONDS;
afterEach(() => {
  if (originalUrlTtl === undefined) delete process.env.EXPORT_URL_TTL_SECONDS;
  else process.env.EXPORT_URL_TTL_SECONDS = originalUrlTtl;
});

describe('export of an enriched campaign: the file', () => {
  it('is UTF-8 with a BOM, CRLF records, the catalog header, and answers exactly the Export result shape', async () => {
    const before = Date.now();
    const res = await exportCampaign(apiKey, { campaignId });
    const after = Date.now();
    const result = expectExportResult(res, campaignId);
    // Default lifetime: 900 s (EXPORT_URL_TTL_SECONDS unset).
    const expiresAt = Date.parse(result.urlExpiresAt);
    // The URL is signed at a whole second (X-Amz-Date's resolution) during the request.
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 900_000);
    // The signature itself carries exactly that lifetime (X-Amz-Date + X-Amz-Expires = urlExpiresAt).
    const url = new URL(result.url);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    const amzDate = url.searchParams.get('X-Amz-Date')!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z');
    expect(Date.parse(amzDate) + 900_000).toBe(expiresAt);

    const file = await download(result.url);
    expect(file.header).toEqual(CATALOG);
    // Every column the contract names, in the contract's order (a column added to the declaration may sit among them).
    expect(contractColumnsIn(file.header)).toEqual(CONTRACT_COLUMNS);
    // The raw header line, byte for byte after the BOM.
    expect(
      file.bytes
        .subarray(3)
        .toString('utf8')
        .startsWith(`${CATALOG.join(',')}\r\n`),
    ).toBe(true);
    expect(result.rows).toEqual({ accounts: ELIGIBLE.length, contacts: expectedContactRows({}) });
  });

  const selections: [string, Selection][] = [
    ['omitted: every contact', {}],
    ['explicit false filters: every contact', { hasMobilePhone: false, hasEmail: false }],
    ['cap 0: one account-only row per account', { maxContactsPerAccount: 0 }],
    ['cap 1', { maxContactsPerAccount: 1 }],
    ['cap 2', { maxContactsPerAccount: 2 }],
    ['cap 1000', { maxContactsPerAccount: 1000 }],
    ['cap at the integer maximum', { maxContactsPerAccount: MAX_INTEGER }],
    ['hasMobilePhone', { hasMobilePhone: true }],
    ['hasEmail', { hasEmail: true }],
    ['hasMobilePhone OR hasEmail', { hasMobilePhone: true, hasEmail: true }],
    ['hasEmail, then cap 2', { hasEmail: true, maxContactsPerAccount: 2 }],
    ['hasMobilePhone, then cap 1', { hasMobilePhone: true, maxContactsPerAccount: 1 }],
    ['both filters, then cap 3', { hasMobilePhone: true, hasEmail: true, maxContactsPerAccount: 3 }],
    ['both filters and cap 0', { hasMobilePhone: true, hasEmail: true, maxContactsPerAccount: 0 }],
  ];

  it.each(selections)('%s: exact rows per account, each account once, counts', async (_name, selection) => {
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId, ...selection }), campaignId);
    const file = await download(result.url);
    expect(file.header).toEqual(CATALOG);

    const byAccount = rowsByAccount(file.rows);
    // Every eligible account appears once, and nothing else does.
    const fileAccountId = (account: WarehouseAccount) => cellIn(expectedAccountRows(account, {}, '')[0]!, 'account_id')!;
    expect([...byAccount.keys()].sort()).toEqual(ELIGIBLE.map(fileAccountId).sort());
    for (const account of ELIGIBLE) {
      expect(byAccount.get(fileAccountId(account)), account.accountId).toEqual(
        expectedAccountRows(account, selection, enriched.completedAt),
      );
    }

    const contactRows = file.rows.filter((row) => cellIn(row, 'contact_id') !== '').length;
    expect(contactRows).toBe(expectedContactRows(selection));
    expect(result.rows).toEqual({ accounts: byAccount.size, contacts: contactRows });
    expect(result.rows.accounts).toBe(enriched.results.totalAccounts);
    // Rows without a contact carry empty contact columns and the account's columns.
    for (const row of file.rows.filter((r) => cellIn(r, 'contact_id') === '')) {
      expect(cellsIn(row, CONTACT_COLUMNS)).toEqual(Array(CONTACT_COLUMNS.length).fill(''));
      expect(cellIn(row, 'enriched_at')).toBe(enriched.completedAt);
    }
  });

  it('orders contacts best first (seniority rank, null as unknown, ties by contact_id) — spelled out', async () => {
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId }), campaignId);
    const rows = rowsByAccount((await download(result.url)).rows).get(mainAccount.accountId)!;
    expect(rows.map((row) => cellIn(row, 'contact_id'))).toEqual(
      ['m-ceo', 'm-cfo', 'm-vp', 'm-dir-a', 'm-dir-b', 'm-mgr', 'm-senior', 'm-entry', 'm-null', 'm-unknown'].map((id) => `${P}-${id}`),
    );
    expect(rows.map((row) => cellIn(row, 'seniority'))).toEqual([
      'c_suite',
      'c_suite',
      'vp',
      'director',
      'director',
      'manager',
      'senior',
      'entry',
      '',
      'unknown',
    ]);

    const both = expectExportResult(
      await exportCampaign(apiKey, { campaignId, hasMobilePhone: true, hasEmail: true, maxContactsPerAccount: 3 }),
      campaignId,
    );
    const kept = rowsByAccount((await download(both.url)).rows).get(mainAccount.accountId)!;
    // m-cfo, m-vp (neither) and m-senior ('' email and mobile) are filtered out before the cap.
    expect(kept.map((row) => cellIn(row, 'contact_id'))).toEqual(['m-ceo', 'm-dir-a', 'm-dir-b'].map((id) => `${P}-${id}`));
  });

  it('neutralizes formula-injection cells with a leading apostrophe and nothing else', async () => {
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId }), campaignId);
    const runs = rowsByAccount((await download(result.url)).rows);
    const rows = runs.get(`'-${P}-formula`)!;
    expect(rows).toHaveLength(2);
    const byColumn = rowByColumn;
    expect(byColumn(rows[0]!)).toEqual(
      rowOf({
        account_id: `'-${P}-formula`,
        account_name: "'=SUM(A1)",
        account_domain: "'@cmd",
        account_industry: "'+1 555",
        account_employee_count: '0',
        account_country: "'\tTAB",
        contact_id: `'+${P}-f-plus`,
        first_name: `'=HYPERLINK("http://evil.example","click")`,
        last_name: "'-3",
        job_title: "'@cmd",
        seniority: 'vp',
        department: "'\tTabbed",
        email: 'f@example.com',
        email_status: "'+valid",
        mobile_phone: "'+1 555 0100",
        direct_phone: "'-0",
        linkedin_url: "'\rCR-started",
        contact_country: "'=1+1",
        enriched_at: enriched.completedAt,
      }),
    );
    // Formula characters later in a value are left alone.
    expect(byColumn(rows[1]!)).toMatchObject({ first_name: 'Safe', job_title: 'a=b', department: 'x-y' });
  });

  it('writes plain E.164 phone numbers unprefixed; formula-shaped names and near-E.164 phones stay prefixed (docs/csv.md)', async () => {
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId }), campaignId);
    const file = await download(result.url);
    const rows = rowsByAccount(file.rows).get(phoneAccount.accountId)!;
    const pick = (row: string[]) =>
      Object.fromEntries(
        ['account_name', 'first_name', 'last_name', 'job_title', 'mobile_phone', 'direct_phone'].map((c) => [c, row[CATALOG.indexOf(c)]]),
      );
    expect(rows.map(pick)).toEqual([
      {
        account_name: "'+15551234567",
        first_name: "'=1+1",
        last_name: "'-",
        job_title: '',
        mobile_phone: '+15551234567',
        direct_phone: '+4930901820',
      },
      {
        account_name: "'+15551234567",
        first_name: "'@Ada",
        last_name: '',
        job_title: "'+15551234567",
        mobile_phone: "'+1 555 0100",
        direct_phone: "'+0123456789",
      },
      {
        account_name: "'+15551234567",
        first_name: 'Max',
        last_name: '',
        job_title: '',
        mobile_phone: '+123456789012345',
        direct_phone: "'+1234567890123456",
      },
    ]);
    // In the raw bytes too: the E.164 cells are written bare, with no quote or apostrophe.
    expect(file.text).toContain(',+15551234567,+4930901820,');
  });

  it('keeps quotes, commas, CR/LF inside values, surrounding spaces and non-ASCII text through the round trip', async () => {
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId }), campaignId);
    const file = await download(result.url);
    expectLineBreaksOnlyInQuotedFields(file.text);
    const runs = rowsByAccount(file.rows);
    const main = runs.get(mainAccount.accountId)!;
    // A lone LF, a lone CR and a CR-started cell, all without any other character that needs quoting.
    expect(
      cellIn(
        main.find((row) => cellIn(row, 'contact_id') === `${P}-m-vp`)!,
        'department',
      ),
    ).toBe('Sales\nEMEA');
    expect(
      cellsIn(main[0]!, ['account_id', 'account_name', 'account_domain', 'account_industry', 'account_employee_count', 'account_country']),
    ).toEqual([mainAccount.accountId, 'Acme, "The Best" Corp', 'acme.example', 'Software\r\nand Services', '250', 'DE']);
    const [zoe, ada] = runs.get(intlAccount.accountId)!;
    expect(cellsIn(zoe!, ['account_name', 'account_domain', 'account_industry'])).toEqual([
      'Zoë Ñúñez GmbH',
      'zoë.example',
      'Maschinenbau, "Präzision"',
    ]);
    expect(cellsIn(zoe!, ['first_name', 'last_name', 'job_title', 'seniority', 'department', 'email'])).toEqual([
      'Zoë',
      'Ñúñez',
      'Head of\nSales, "EMEA"',
      'director',
      'R&D\rLab',
      'zoë@例え.jp',
    ]);
    expect(cellIn(zoe!, 'linkedin_url')).toBe('https://linkedin.example/in/zoë?a=1,b=2');
    expect(cellIn(zoe!, 'contact_country')).toBe('日本');
    expect(cellsIn(ada!, ['first_name', 'last_name'])).toEqual([' Ada', 'Lovelace ']);
    expect(runs.get(emptyAccount.accountId)!.map(rowByColumn)).toEqual([
      rowOf({
        account_id: emptyAccount.accountId,
        account_name: '株式会社テスト',
        account_country: 'JP',
        enriched_at: enriched.completedAt,
      }),
    ]);
    // Quotes are doubled inside a quoted field in the raw bytes (RFC 4180).
    expect(file.bytes.toString('utf8')).toContain('"Acme, ""The Best"" Corp"');
    expect(file.bytes.includes(Buffer.from('株式会社テスト', 'utf8'))).toBe(true);
  });

  it('serves the file as text/csv UTF-8, as an attachment named from the campaign name and date', async () => {
    const dayBefore = new Date().toISOString().slice(0, 10);
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId }), campaignId);
    const dayAfter = new Date().toISOString().slice(0, 10);
    const { response } = await download(result.url);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const disposition = response.headers.get('content-disposition') ?? '';
    expect(disposition).toMatch(/^attachment;/);
    const ascii = /filename="([^"]*)"/.exec(disposition)?.[1];
    expect([`zoe-q4-targets-emea-${dayBefore}.csv`, `zoe-q4-targets-emea-${dayAfter}.csv`]).toContain(ascii);
    const extended = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1];
    expect(extended && decodeURIComponent(extended)).toBe(`${CAMPAIGN_NAME} ${ascii!.slice(-14, -4)}.csv`);
  });

  it('writes a fresh file and a fresh URL for every request; both stay downloadable', async () => {
    const first = expectExportResult(await exportCampaign(apiKey, { campaignId, maxContactsPerAccount: 0 }), campaignId);
    const second = expectExportResult(await exportCampaign(apiKey, { campaignId, maxContactsPerAccount: 0 }), campaignId);
    expect(second.url).not.toBe(first.url);
    const firstKey = objectKeyOf(first.url);
    const secondKey = objectKeyOf(second.url);
    expect(firstKey).toMatch(/\.csv$/);
    expect(secondKey).not.toBe(firstKey);
    const [a, b] = await Promise.all([download(first.url), download(second.url)]);
    expect(a.rows).toHaveLength(ELIGIBLE.length);
    expect(b.rows).toEqual(a.rows);
  });

  it('the presigned URL works within its lifetime and stops working after it (EXPORT_URL_TTL_SECONDS)', async () => {
    // Checked first by hand: s3rver 3.7 enforces X-Amz-Date + X-Amz-Expires on
    // presigned GETs (403 AccessDenied "Request has expired"), so the refusal
    // itself is asserted, not only the urlExpiresAt arithmetic. X-Amz-Date has
    // whole seconds, so a 2 s lifetime leaves at least 1 s for the first fetch.
    process.env.EXPORT_URL_TTL_SECONDS = '2';
    const before = Date.now();
    const result = expectExportResult(await exportCampaign(apiKey, { campaignId, maxContactsPerAccount: 0 }), campaignId);
    const after = Date.now();
    expect(new URL(result.url).searchParams.get('X-Amz-Expires')).toBe('2');
    expect(Date.parse(result.urlExpiresAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 2_000);
    expect(Date.parse(result.urlExpiresAt)).toBeLessThanOrEqual(after + 2_000);
    expect((await download(result.url)).rows).toHaveLength(ELIGIBLE.length);

    await sleep(Date.parse(result.urlExpiresAt) + 1_500 - Date.now());
    const response = await fetch(result.url);
    const body = await response.text();
    expect(response.status).toBe(403);
    expect(body).toMatch(/Request has expired/);
  });

  it('exports a campaign whose name has characters no file name can carry (lone surrogate, quotes, slashes)', async () => {
    // Create accepts any 1..200-character name; export must still work and name the file.
    const { apiKey: key } = await newOrganization();
    const raw = JSON.stringify({ name: 'x', accountIds: [mobileAccount.accountId] }).replace('"x"', '"Q4 \\ud800 \\"best\\" / (EMEA)"');
    const created = await call(api(), CREATE, { apiKey: key, raw: { body: raw, contentType: 'application/json' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.data.name).toBe('Q4 \ud800 "best" / (EMEA)');
    expect((await call(api(), ENRICH, { apiKey: key, body: { campaignId: created.data.id } })).status).toBe(200);
    const done = await waitForStatus(key, created.data.id, 'enriched');

    const result = expectExportResult(await exportCampaign(key, { campaignId: created.data.id }), created.data.id);
    expect(result.rows).toEqual({ accounts: 1, contacts: 2 });
    const file = await download(result.url);
    expect(file.rows).toEqual(expectedAccountRows(mobileAccount, {}, done.completedAt));
    expect(file.response.headers.get('content-disposition')).toMatch(/^attachment; filename="q4-best-emea-\d{4}-\d{2}-\d{2}\.csv"/);
  });

  it('accepts the same request urlencoded and as multipart', async () => {
    const selection: Selection = { maxContactsPerAccount: 1, hasEmail: true };
    const expectedRows = ELIGIBLE.flatMap((account) => expectedAccountRows(account, selection, enriched.completedAt));
    const sortRows = (rows: string[][]) => [...rows].sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1));

    const form = new URLSearchParams({ campaignId, maxContactsPerAccount: '1', hasEmail: 'true' });
    const viaForm = expectExportResult(await exportCampaign(apiKey, {}, { form }), campaignId);
    expect(viaForm.rows).toEqual({ accounts: ELIGIBLE.length, contacts: expectedContactRows(selection) });
    expect(sortRows((await download(viaForm.url)).rows)).toEqual(sortRows(expectedRows));

    const multipart = new FormData();
    multipart.append('campaignId', campaignId);
    multipart.append('maxContactsPerAccount', '1');
    multipart.append('hasEmail', 'true');
    const viaMultipart = expectExportResult(await exportCampaign(apiKey, {}, { multipart }), campaignId);
    expect(sortRows((await download(viaMultipart.url)).rows)).toEqual(sortRows(expectedRows));
  });
});

describe('export refusals', () => {
  it('results_not_ready (409) for a draft (created over HTTP), an enriching and a tam_only campaign', async () => {
    const { apiKey: key, organizationId } = await newOrganization();
    const draft = await call(api(), CREATE, { apiKey: key, body: { name: 'Still a draft', accountIds: [`${P}-main`] } });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    expectError(await exportCampaign(key, { campaignId: draft.data.id }), 409, 'results_not_ready');

    const enrichingId = newCampaignId();
    await campaigns().create(
      campaignRecord(organizationId, {
        id: enrichingId,
        status: 'enriching',
        ...attemptFields(organizationId, enrichingId, Date.now(), 3),
      }),
    );
    expectError(await exportCampaign(key, { campaignId: enrichingId }), 409, 'results_not_ready');

    const tamOnly = campaignRecord(organizationId, { status: 'tam_only', createdVia: 'ui' });
    await campaigns().create(tamOnly);
    expectError(await exportCampaign(key, { campaignId: tamOnly.id }), 409, 'results_not_ready');
  });

  it('results_expired (410) for an enriched campaign past resultsExpireAt and for a stored expired one', async () => {
    const { apiKey: key, organizationId } = await newOrganization();
    const now = Date.now();
    const lapsedId = newCampaignId();
    await campaigns().create(
      campaignRecord(organizationId, {
        id: lapsedId,
        status: 'enriched',
        ...attemptFields(organizationId, lapsedId, now - 31 * DAY_MS, 3),
        ...completedFields(now - 31 * DAY_MS, now - 2_000, 3),
      }),
    );
    expectError(await exportCampaign(key, { campaignId: lapsedId }), 410, 'results_expired');

    const expiredId = newCampaignId();
    await campaigns().create(
      campaignRecord(organizationId, {
        id: expiredId,
        status: 'expired',
        ...attemptFields(organizationId, expiredId, now - 40 * DAY_MS, 3),
        resultsExpireAt: iso(now - 10 * DAY_MS),
      }),
    );
    expectError(await exportCampaign(key, { campaignId: expiredId }), 410, 'results_expired');
  });

  it('not_found (404) for an unknown campaign and for another organization’s enriched campaign', async () => {
    const unknown = newCampaignId();
    expectError(await exportCampaign(apiKey, { campaignId: unknown }), 404, 'not_found', { resource: 'campaign', id: unknown });
    const { apiKey: otherKey } = await newOrganization({ name: 'Other Org' });
    expectError(await exportCampaign(otherKey, { campaignId }), 404, 'not_found', { resource: 'campaign', id: campaignId });
  });

  it('no_eligible_accounts (422) for an enriched campaign with zero accounts', async () => {
    const { apiKey: key, organizationId } = await newOrganization();
    const now = Date.now();
    const id = newCampaignId();
    await campaigns().create(
      campaignRecord(organizationId, {
        id,
        status: 'enriched',
        accountsRequested: 5,
        ...attemptFields(organizationId, id, now - DAY_MS, 0),
        ...completedFields(now - DAY_MS, now + 29 * DAY_MS, 0),
      }),
    );
    expectError(await exportCampaign(key, { campaignId: id }), 422, 'no_eligible_accounts', { requested: 5 });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['maxContactsPerAccount -1', { maxContactsPerAccount: -1 }, 'maxContactsPerAccount'],
    ['maxContactsPerAccount 1.5', { maxContactsPerAccount: 1.5 }, 'maxContactsPerAccount'],
    ['maxContactsPerAccount "2" (a string in JSON)', { maxContactsPerAccount: '2' }, 'maxContactsPerAccount'],
    ['maxContactsPerAccount 9007199254740992', { maxContactsPerAccount: 9007199254740992 }, 'maxContactsPerAccount'],
    ['maxContactsPerAccount null', { maxContactsPerAccount: null }, 'maxContactsPerAccount'],
    ['hasEmail "yes"', { hasEmail: 'yes' }, 'hasEmail'],
    ['hasMobilePhone "true" (a string in JSON)', { hasMobilePhone: 'true' }, 'hasMobilePhone'],
    ['an unknown property', { includeArchived: true }, 'includeArchived'],
  ])('invalid_request (400) naming the field: %s', async (_name, extra, path) => {
    expectInvalidRequest(await exportCampaign(apiKey, { campaignId, ...extra }), path);
  });

  it('invalid_request (400) for a malformed or missing campaignId', async () => {
    expectInvalidRequest(await exportCampaign(apiKey, { campaignId: 'camp_tooShort' }), 'campaignId');
    expectInvalidRequest(await exportCampaign(apiKey, { campaignId: `camp_${'0'.repeat(21)}` }), 'campaignId');
    expectInvalidRequest(await exportCampaign(apiKey, { hasEmail: true }), 'campaignId');
  });

  it('invalid_request (400) for form values that are not numbers or booleans', async () => {
    expectInvalidRequest(
      await exportCampaign(apiKey, {}, { form: new URLSearchParams({ campaignId, maxContactsPerAccount: '1e2' }) }),
      'maxContactsPerAccount',
    );
    expectInvalidRequest(await exportCampaign(apiKey, {}, { form: new URLSearchParams({ campaignId, hasEmail: 'yes' }) }), 'hasEmail');
  });
});
