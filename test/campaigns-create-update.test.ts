/**
 * Create and update a campaign (docs/campaigns.md, docs/errors.md, docs/authentication.md) end to end: real HTTP
 * against the local API server, DynamoDB Local and the local S3 endpoint.
 * Every encoding of the body (JSON, urlencoded, multipart with repeated
 * fields or a CSV file part) must produce the same campaign and the same
 * stored account list; every refusal must name the field and write nothing.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { ddb, s3 } from '../lib/aws';
import { config } from '../lib/config';
import * as tableKeys from '../lib/db/keys';
import { accountListKey } from '../lib/account-lists/account-list';
import type { CampaignRecord } from '../lib/campaigns/model';
import { createCampaign } from '../lib/campaigns/use-cases';
import { newCampaignId } from '../lib/ids';
import { accountLists, campaigns, ledger, organizations } from '../lib/root';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';

const api = useApi();
const CREATE = '/v1/campaigns/create';
const UPDATE = '/v1/campaigns/update';
const GET = '/v1/campaigns/get';
const LIST = '/v1/campaigns/list';

/** Campaign ID convention of the spec: `camp_` + 21 base58 characters. */
const CAMPAIGN_ID = /^camp_[1-9A-HJ-NP-Za-km-z]{21}$/;
/** ISO 8601 UTC with milliseconds, as the service writes `createdAt`. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const deps = () => ({ campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() });

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A 400 `invalid_request` whose `details.issues` has a line starting with
 * `<path>: ` (docs/errors.md: one line per problem, naming the field path).
 */
function expectInvalidRequest(res: ApiResponse, path: string | RegExp): void {
  expect(res.status).toBe(400);
  expect(res.body.data).toBeNull();
  expect(res.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/\S/) });
  const issues: unknown = res.error?.details?.issues;
  expect(Array.isArray(issues)).toBe(true);
  expect((issues as string[]).length).toBeGreaterThan(0);
  const pattern = typeof path === 'string' ? new RegExp(`^${escapeRegExp(path)}: \\S`) : path;
  expect(issues).toEqual(expect.arrayContaining([expect.stringMatching(pattern)]));
}

/** Every list item of an organization, all pages. */
async function listAll(apiKey: string): Promise<{ id: string; name: string; status: string; excludeEnrichedWithinDays: number | null }[]> {
  const items = [];
  let cursor: string | undefined;
  do {
    const res = await call(api(), LIST, { apiKey, body: { limit: 100, ...(cursor ? { cursor } : {}) } });
    expect(res.status).toBe(200);
    items.push(...res.data.campaigns);
    cursor = res.data.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

/** Keys of the S3 objects under an organization's campaign prefix. */
async function storedObjectKeys(organizationId: string): Promise<string[]> {
  const out = await s3().send(new ListObjectsV2Command({ Bucket: config.bucketName, Prefix: `campaigns/${organizationId}/` }));
  return (out.Contents ?? []).map((object) => object.Key!);
}

/** Asserts an organization has no campaign item and no account-list object. */
async function expectNothingWritten(organizationId: string, apiKey: string): Promise<void> {
  expect(await listAll(apiKey)).toEqual([]);
  expect(await storedObjectKeys(organizationId)).toEqual([]);
}

/** A form body from pairs, keeping repeated keys in order. */
const urlencoded = (pairs: [string, string][]) => new URLSearchParams(pairs);

/** A multipart body from pairs; a `Blob` value becomes a file part named `filename`. */
function multipart(pairs: [string, string | { content: string; filename: string; type?: string }][]): FormData {
  const form = new FormData();
  for (const [key, value] of pairs) {
    if (typeof value === 'string') form.append(key, value);
    else form.append(key, new Blob([value.content], { type: value.type ?? 'text/csv' }), value.filename);
  }
  return form;
}

/** A full stored API campaign in `enriching` (written directly, as a launch would leave it). */
function enrichingRecord(organizationId: string): CampaignRecord {
  const id = newCampaignId();
  return {
    id,
    organizationId,
    name: 'Launched',
    status: 'enriching',
    createdVia: 'api',
    excludeEnrichedWithinDays: 30,
    createdAt: new Date(Date.now() - 60_000).toISOString(),
    accountsRequested: 10,
    accountsObjectKey: accountListKey(organizationId, id),
    accountsEligible: 8,
    accountsExcluded: { total: 2, invalid: 1, recentlyEnriched: 1, crmExcluded: 0 },
    creditsCharged: 8,
    lastEnrichment: null,
    attempt: {
      id: 'att_1',
      startedAt: new Date().toISOString(),
      eligible: 8,
      charged: 8,
      creditsPerAccount: 1,
      eligibleObjectKey: `campaigns/${organizationId}/${id}/attempts/att_1/eligible.txt`,
      executionArn: 'arn:aws:states:us-east-1:000000000000:execution:enrichment:att_1',
    },
  };
}

describe('POST /v1/campaigns/create', () => {
  describe('every body encoding gives the same campaign and the same stored list', () => {
    const SUBMITTED = ['acc_1', 'acc_2', 'acc_1', 'acc_3', 'acc_2'];
    const DISTINCT = ['acc_1', 'acc_2', 'acc_3'];
    const CSV =
      '\uFEFFaccount_id,account_name,domain\r\nacc_1,Acme,acme.com\r\n\r\nacc_2,Beta,beta.io\r\n  acc_1  ,Acme again,acme.com\r\n\r\nacc_3,Gamma,\r\nacc_2,Beta,beta.io\r\n\r\n';

    let organizationId: string;
    let apiKey: string;
    beforeAll(async () => {
      ({ organizationId, apiKey } = await newOrganization({ smbCredits: 4321 }));
    });

    const bodies: [string, () => Parameters<typeof call>[2]][] = [
      ['JSON', () => ({ apiKey, body: { name: '  Q4 targets  ', accountIds: SUBMITTED, excludeEnrichedWithinDays: 30 } })],
      [
        'urlencoded, repeated accountIds',
        () => ({
          apiKey,
          form: urlencoded([
            ['name', '  Q4 targets  '],
            ...SUBMITTED.map((id) => ['accountIds', id] as [string, string]),
            ['excludeEnrichedWithinDays', '30'],
          ]),
        }),
      ],
      [
        'multipart, repeated accountIds fields',
        () => ({
          apiKey,
          multipart: multipart([
            ['name', '  Q4 targets  '],
            ...SUBMITTED.map((id) => ['accountIds', id] as [string, string]),
            ['excludeEnrichedWithinDays', '30'],
          ]),
        }),
      ],
      [
        'multipart, accountIdsFile CSV (BOM, header account_id, extra columns, blank lines)',
        () => ({
          apiKey,
          multipart: multipart([
            ['name', '  Q4 targets  '],
            ['accountIdsFile', { content: CSV, filename: 'ids.csv' }],
            ['excludeEnrichedWithinDays', '30'],
          ]),
        }),
      ],
    ];

    it.each(bodies)('%s', async (_label, options) => {
      const before = Date.now();
      const res = await call(api(), CREATE, options());
      expect(res.status).toBe(200);
      expect(res.error).toBeNull();
      const campaign = res.data;
      expect(campaign.id).toMatch(CAMPAIGN_ID);
      expect(campaign.createdAt).toMatch(ISO_UTC);
      expect(Date.parse(campaign.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(campaign.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
      // Exactly these keys: no completedAt, resultsExpireAt or results on a draft.
      expect(campaign).toStrictEqual({
        id: campaign.id,
        status: 'draft',
        createdVia: 'api',
        name: 'Q4 targets',
        accounts: { requested: 3, eligible: null, excluded: null },
        credits: { charged: 0, remaining: 4321 },
        excludeEnrichedWithinDays: 30,
        lastEnrichment: null,
        createdAt: campaign.createdAt,
      });
      expect(Object.keys(campaign)).not.toContain('completedAt');
      expect(Object.keys(campaign)).not.toContain('resultsExpireAt');
      expect(Object.keys(campaign)).not.toContain('results');

      // The distinct IDs, in first-seen order, are what S3 holds.
      expect(await accountLists().get(accountListKey(organizationId, campaign.id))).toEqual(DISTINCT);

      // And the campaign reads back the same through get.
      const got = await call(api(), GET, { apiKey, body: { campaignId: campaign.id } });
      expect(got.status).toBe(200);
      expect(got.data).toStrictEqual(campaign);
    });
  });

  it('defaults excludeEnrichedWithinDays to null, keeps 0, accepts a single urlencoded accountIds and a plain text file', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const defaulted = await call(api(), CREATE, { apiKey, body: { name: 'n', accountIds: ['x'] } });
    expect(defaulted.status).toBe(200);
    expect(defaulted.data.excludeEnrichedWithinDays).toBeNull();
    expect(defaulted.data.accounts.requested).toBe(1);

    const zero = await call(api(), CREATE, { apiKey, body: { name: 'n', accountIds: ['x'], excludeEnrichedWithinDays: 0 } });
    expect(zero.status).toBe(200);
    expect(zero.data.excludeEnrichedWithinDays).toBe(0);

    const explicitNull = await call(api(), CREATE, { apiKey, body: { name: 'n', accountIds: ['x'], excludeEnrichedWithinDays: null } });
    expect(explicitNull.status).toBe(200);
    expect(explicitNull.data.excludeEnrichedWithinDays).toBeNull();

    const max = await call(api(), CREATE, { apiKey, body: { name: 'n', accountIds: ['x'], excludeEnrichedWithinDays: 3650 } });
    expect(max.status).toBe(200);
    expect(max.data.excludeEnrichedWithinDays).toBe(3650);

    const single = await call(api(), CREATE, {
      apiKey,
      form: urlencoded([
        ['name', 'one'],
        ['accountIds', 'only_one'],
      ]),
    });
    expect(single.status).toBe(200);
    expect(single.data.accounts.requested).toBe(1);
    expect(await accountLists().get(accountListKey(organizationId, single.data.id))).toEqual(['only_one']);

    const text = await call(api(), CREATE, {
      apiKey,
      multipart: multipart([
        ['name', 'txt'],
        ['accountIdsFile', { content: 't_2\nt_1\n\nt_2\nt_3', filename: 'ids.txt', type: 'text/plain' }],
      ]),
    });
    expect(text.status).toBe(200);
    expect(text.data.accounts.requested).toBe(3);
    expect(await accountLists().get(accountListKey(organizationId, text.data.id))).toEqual(['t_2', 't_1', 't_3']);
  });

  it.each(['account_id', 'ACCOUNT_ID', 'Account_Id', 'id', 'ID', 'Id', ' id '])(
    'does not count a header row "%s" in accountIdsFile as an account',
    async (header) => {
      const { organizationId, apiKey } = await newOrganization();
      const res = await call(api(), CREATE, {
        apiKey,
        multipart: multipart([
          ['name', 'h'],
          ['accountIdsFile', { content: `${header},name\r\nh_1,A\r\nh_2,B\r\n`, filename: 'ids.csv' }],
        ]),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.data.accounts.requested).toBe(2);
      expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(['h_1', 'h_2']);
    },
  );

  it('counts "id" as an account when it is not the first row, and other first rows as accounts', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const res = await call(api(), CREATE, {
      apiKey,
      multipart: multipart([
        ['name', 'h'],
        ['accountIdsFile', { content: 'identifier\nid\nx_1\n', filename: 'ids.csv' }],
      ]),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(['identifier', 'id', 'x_1']);
  });

  it('accepts the boundaries: name of 200 characters after trimming, IDs of 128 characters', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const name = 'n'.repeat(200);
    const longId = 'i'.repeat(128);
    const res = await call(api(), CREATE, { apiKey, body: { name: `   ${name}   `, accountIds: [longId, 'ü-unicode_ok'] } });
    expect(res.status).toBe(200);
    expect(res.data.name).toBe(name);
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual([longId, 'ü-unicode_ok']);
  });

  it('creates a campaign of 100,000 account IDs in one JSON request and refuses 100,001', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const ids = Array.from({ length: 100_000 }, (_, i) => i.toString(36));
    const res = await call(api(), CREATE, { apiKey, body: { name: 'Big', accountIds: ids } });
    expect(res.status).toBe(200);
    expect(res.data.accounts.requested).toBe(100_000);
    const stored = await accountLists().get(accountListKey(organizationId, res.data.id));
    expect(stored.length).toBe(100_000);
    expect(stored[0]).toBe('0');
    expect(stored.at(-1)).toBe((99_999).toString(36));

    const fresh = await newOrganization();
    const tooMany = await call(api(), CREATE, { apiKey: fresh.apiKey, body: { name: 'Too big', accountIds: [...ids, 'one_more'] } });
    expectInvalidRequest(tooMany, 'accountIds');
    await expectNothingWritten(fresh.organizationId, fresh.apiKey);
  });

  it('counts 100,000 submitted IDs before collapsing duplicates', async () => {
    const { apiKey } = await newOrganization();
    const ids = Array.from({ length: 100_000 }, (_, i) => `d${i % 10}`);
    const res = await call(api(), CREATE, { apiKey, body: { name: 'Dupes', accountIds: ids } });
    expect(res.status).toBe(200);
    expect(res.data.accounts.requested).toBe(10);
  });

  it('keeps 1,000 repeated urlencoded fields, and refuses more rather than truncating them', async () => {
    // The urlencoded parser keeps only 1,000 fields (node:querystring maxKeys): the API refuses
    // longer bodies with a clear error instead of silently dropping IDs (README "Bodies").
    const { organizationId, apiKey } = await newOrganization();
    const ids = Array.from({ length: 999 }, (_, i) => `u${i}`);
    const res = await call(api(), CREATE, {
      apiKey,
      form: urlencoded([['name', 'Form'], ...ids.map((id) => ['accountIds', id] as [string, string])]),
    });
    expect(res.status).toBe(200);
    expect(res.data.accounts.requested).toBe(999);
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(ids);

    const more = Array.from({ length: 1_500 }, (_, i) => `v${i}`);
    const refused = await call(api(), CREATE, {
      apiKey,
      form: urlencoded([['name', 'Form'], ...more.map((id) => ['accountIds', id] as [string, string])]),
    });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('invalid_request');
    expect(refused.error?.details.issues).toEqual(['body: too many urlencoded fields']);
    expect(refused.error?.message).toMatch(/at most 1000 fields/);
    const listed = await call(api(), '/v1/campaigns/list', { apiKey, body: {} });
    expect(listed.data.campaigns.map((c: { id: string }) => c.id)).toEqual([res.data.id]);
  });

  it('keeps 5,000 repeated multipart accountIds fields in order', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const ids = Array.from({ length: 5_000 }, (_, i) => `m${i}`);
    const res = await call(api(), CREATE, {
      apiKey,
      multipart: multipart([['name', 'Parts'], ...ids.map((id) => ['accountIds', id] as [string, string])]),
    });
    expect(res.status).toBe(200);
    expect(res.data.accounts.requested).toBe(5_000);
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(ids);
  });

  describe('refuses bad input with invalid_request naming the field, and writes nothing', () => {
    const valid = { name: 'Valid', accountIds: ['a'] };
    const jsonCases: [string, unknown, string][] = [
      ['name missing', { accountIds: ['a'] }, 'name'],
      ['name empty', { ...valid, name: '' }, 'name'],
      ['name only spaces', { ...valid, name: '    ' }, 'name'],
      ['name of 201 characters', { ...valid, name: 'n'.repeat(201) }, 'name'],
      ['name of 201 characters inside spaces', { ...valid, name: ` ${'n'.repeat(201)} ` }, 'name'],
      ['name not a string', { ...valid, name: 42 }, 'name'],
      ['name null', { ...valid, name: null }, 'name'],
      ['accountIds missing', { name: 'n' }, 'accountIds'],
      ['accountIds empty', { ...valid, accountIds: [] }, 'accountIds'],
      ['accountIds not an array', { ...valid, accountIds: 'a' }, 'accountIds'],
      ['accountIds an object', { ...valid, accountIds: { 0: 'a' } }, 'accountIds'],
      ['accountIds element empty string', { ...valid, accountIds: ['a', ''] }, 'accountIds[1]'],
      ['accountIds element of 129 characters', { ...valid, accountIds: ['i'.repeat(129)] }, 'accountIds[0]'],
      ['accountIds element with a control character', { ...valid, accountIds: ['ok', 'a\u0001b'] }, 'accountIds[1]'],
      ['accountIds element with a newline', { ...valid, accountIds: ['a\nb'] }, 'accountIds[0]'],
      ['accountIds element with DEL', { ...valid, accountIds: ['a\u007fb'] }, 'accountIds[0]'],
      ['accountIds element not a string', { ...valid, accountIds: ['a', 7] }, 'accountIds[1]'],
      ['excludeEnrichedWithinDays -1', { ...valid, excludeEnrichedWithinDays: -1 }, 'excludeEnrichedWithinDays'],
      ['excludeEnrichedWithinDays 3651', { ...valid, excludeEnrichedWithinDays: 3651 }, 'excludeEnrichedWithinDays'],
      ['excludeEnrichedWithinDays 1.5', { ...valid, excludeEnrichedWithinDays: 1.5 }, 'excludeEnrichedWithinDays'],
      [
        'excludeEnrichedWithinDays "30" (JSON strings are not coerced)',
        { ...valid, excludeEnrichedWithinDays: '30' },
        'excludeEnrichedWithinDays',
      ],
      ['excludeEnrichedWithinDays true', { ...valid, excludeEnrichedWithinDays: true }, 'excludeEnrichedWithinDays'],
      ['unknown property', { ...valid, createdVia: 'ui' }, 'createdVia'],
      ['accountIdsFile in JSON', { name: 'n', accountIdsFile: 'a\nb' }, 'accountIdsFile'],
    ];

    let organizationId: string;
    let apiKey: string;
    beforeAll(async () => {
      ({ organizationId, apiKey } = await newOrganization());
    });

    it.each(jsonCases)('JSON: %s', async (_label, body, path) => {
      const res = await call(api(), CREATE, { apiKey, body });
      expectInvalidRequest(res, path);
      await expectNothingWritten(organizationId, apiKey);
    });

    it('urlencoded: excludeEnrichedWithinDays=abc', async () => {
      const res = await call(api(), CREATE, {
        apiKey,
        form: urlencoded([
          ['name', 'n'],
          ['accountIds', 'a'],
          ['excludeEnrichedWithinDays', 'abc'],
        ]),
      });
      expectInvalidRequest(res, 'excludeEnrichedWithinDays');
      await expectNothingWritten(organizationId, apiKey);
    });

    it('urlencoded: excludeEnrichedWithinDays=1.5 and an unknown field', async () => {
      const res = await call(api(), CREATE, {
        apiKey,
        form: urlencoded([
          ['name', 'n'],
          ['accountIds', 'a'],
          ['excludeEnrichedWithinDays', '1.5'],
          ['color', 'red'],
        ]),
      });
      expectInvalidRequest(res, 'excludeEnrichedWithinDays');
      expectInvalidRequest(res, 'color');
      await expectNothingWritten(organizationId, apiKey);
    });

    it('urlencoded: no accountIds', async () => {
      const res = await call(api(), CREATE, { apiKey, form: urlencoded([['name', 'n']]) });
      expectInvalidRequest(res, 'accountIds');
      await expectNothingWritten(organizationId, apiKey);
    });

    it('multipart: both accountIds and accountIdsFile', async () => {
      const res = await call(api(), CREATE, {
        apiKey,
        multipart: multipart([
          ['name', 'n'],
          ['accountIds', 'a'],
          ['accountIdsFile', { content: 'account_id\nb\n', filename: 'ids.csv' }],
        ]),
      });
      expectInvalidRequest(res, 'accountIdsFile');
      await expectNothingWritten(organizationId, apiKey);
    });

    it('multipart: a file with a header and no IDs', async () => {
      const res = await call(api(), CREATE, {
        apiKey,
        multipart: multipart([
          ['name', 'n'],
          ['accountIdsFile', { content: '\uFEFFaccount_id\r\n\r\n', filename: 'ids.csv' }],
        ]),
      });
      expectInvalidRequest(res, /^accountIds(File)?: \S/);
      await expectNothingWritten(organizationId, apiKey);
    });

    it("multipart: a file with an ID containing a control character is reported against the file's line", async () => {
      const res = await call(api(), CREATE, {
        apiKey,
        multipart: multipart([
          ['name', 'n'],
          ['accountIdsFile', { content: 'account_id\nok\nbad\u0007id\n', filename: 'ids.csv' }],
        ]),
      });
      // Line 3 of the file (the header is line 1), never accountIds[1], a field the client did not send.
      expectInvalidRequest(res, /^accountIdsFile: line 3: account ID "bad\\u0007id": must not contain control characters$/);
      expect(res.error?.message).toBe('accountIdsFile: the file has a bad account ID on line 3.');
      await expectNothingWritten(organizationId, apiKey);
    });
  });
});

describe('POST /v1/campaigns/update', () => {
  /** A fresh organization with one API draft; returns what the create answered. */
  async function draft(input: { excludeEnrichedWithinDays?: number | null } = {}) {
    const org = await newOrganization({ smbCredits: 777 });
    const created = await call(api(), CREATE, { apiKey: org.apiKey, body: { name: 'Original', accountIds: ['a', 'b'], ...input } });
    expect(created.status).toBe(200);
    return { ...org, campaign: created.data };
  }

  /** Reads a campaign back and asserts it equals `expected` exactly. */
  async function expectStored(apiKey: string, expected: unknown) {
    const got = await call(api(), GET, { apiKey, body: { campaignId: (expected as { id: string }).id } });
    expect(got.status).toBe(200);
    expect(got.data).toStrictEqual(expected);
  }

  it('changes the name only (trimmed), in JSON', async () => {
    const { apiKey, campaign } = await draft({ excludeEnrichedWithinDays: 14 });
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: campaign.id, name: '  Renamed  ' } });
    expect(res.status).toBe(200);
    expect(res.data).toStrictEqual({ ...campaign, name: 'Renamed' });
    await expectStored(apiKey, res.data);
    // The list item (an index projection) follows the change too.
    expect(await listAll(apiKey)).toEqual([expect.objectContaining({ id: campaign.id, name: 'Renamed', excludeEnrichedWithinDays: 14 })]);
  });

  it('changes excludeEnrichedWithinDays only: to 0, to null, to 3650, in JSON', async () => {
    const { apiKey, campaign } = await draft({ excludeEnrichedWithinDays: 30 });
    for (const value of [0, null, 3650]) {
      const res = await call(api(), UPDATE, { apiKey, body: { campaignId: campaign.id, excludeEnrichedWithinDays: value } });
      expect(res.status).toBe(200);
      expect(res.data).toStrictEqual({ ...campaign, excludeEnrichedWithinDays: value });
      await expectStored(apiKey, res.data);
    }
    expect(await listAll(apiKey)).toEqual([expect.objectContaining({ id: campaign.id, excludeEnrichedWithinDays: 3650 })]);
  });

  it('changes both fields at once, in JSON', async () => {
    const { apiKey, campaign } = await draft();
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: campaign.id, name: 'Both', excludeEnrichedWithinDays: 7 } });
    expect(res.status).toBe(200);
    expect(res.data).toStrictEqual({ ...campaign, name: 'Both', excludeEnrichedWithinDays: 7 });
    await expectStored(apiKey, res.data);
  });

  it('changes fields in urlencoded bodies, numbers and null coerced from text', async () => {
    const { apiKey, campaign } = await draft();
    const both = await call(api(), UPDATE, {
      apiKey,
      form: urlencoded([
        ['campaignId', campaign.id],
        ['name', ' Form name '],
        ['excludeEnrichedWithinDays', '45'],
      ]),
    });
    expect(both.status).toBe(200);
    expect(both.data).toStrictEqual({ ...campaign, name: 'Form name', excludeEnrichedWithinDays: 45 });

    const zero = await call(api(), UPDATE, {
      apiKey,
      form: urlencoded([
        ['campaignId', campaign.id],
        ['excludeEnrichedWithinDays', '0'],
      ]),
    });
    expect(zero.status).toBe(200);
    expect(zero.data.excludeEnrichedWithinDays).toBe(0);

    const cleared = await call(api(), UPDATE, {
      apiKey,
      form: urlencoded([
        ['campaignId', campaign.id],
        ['excludeEnrichedWithinDays', 'null'],
      ]),
    });
    expect(cleared.status).toBe(200);
    expect(cleared.data).toStrictEqual({ ...campaign, name: 'Form name', excludeEnrichedWithinDays: null });
    await expectStored(apiKey, cleared.data);

    const bad = await call(api(), UPDATE, {
      apiKey,
      form: urlencoded([
        ['campaignId', campaign.id],
        ['excludeEnrichedWithinDays', 'abc'],
      ]),
    });
    expectInvalidRequest(bad, 'excludeEnrichedWithinDays');
    await expectStored(apiKey, cleared.data);
  });

  it('reports the live balance in credits.remaining', async () => {
    const { organizationId, apiKey, campaign } = await draft();
    await ledger().adjust(organizationId, 100);
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: campaign.id, name: 'Balance' } });
    expect(res.status).toBe(200);
    expect(res.data.credits).toEqual({ charged: 0, remaining: 877 });
  });

  describe('refusals leave the campaign unchanged', () => {
    const cases: [string, (id: string) => unknown, string][] = [
      ['neither name nor excludeEnrichedWithinDays', (id) => ({ campaignId: id }), 'body'],
      ['campaignId missing', () => ({ name: 'x' }), 'campaignId'],
      ['malformed campaignId', () => ({ campaignId: 'camp_0OIl', name: 'x' }), 'campaignId'],
      ['campaignId with a wrong prefix', () => ({ campaignId: 'cmp_1234567890ABCDEFGHJKL', name: 'x' }), 'campaignId'],
      ['name empty', (id) => ({ campaignId: id, name: '' }), 'name'],
      ['name only spaces', (id) => ({ campaignId: id, name: '   ' }), 'name'],
      ['name of 201 characters', (id) => ({ campaignId: id, name: 'n'.repeat(201) }), 'name'],
      ['name null', (id) => ({ campaignId: id, name: null }), 'name'],
      ['excludeEnrichedWithinDays -1', (id) => ({ campaignId: id, excludeEnrichedWithinDays: -1 }), 'excludeEnrichedWithinDays'],
      ['excludeEnrichedWithinDays 3651', (id) => ({ campaignId: id, excludeEnrichedWithinDays: 3651 }), 'excludeEnrichedWithinDays'],
      ['excludeEnrichedWithinDays 2.5', (id) => ({ campaignId: id, excludeEnrichedWithinDays: 2.5 }), 'excludeEnrichedWithinDays'],
      ['excludeEnrichedWithinDays "30"', (id) => ({ campaignId: id, excludeEnrichedWithinDays: '30' }), 'excludeEnrichedWithinDays'],
      ['unknown property', (id) => ({ campaignId: id, name: 'x', accountIds: ['z'] }), 'accountIds'],
    ];

    let apiKey: string;
    let campaign: { id: string };
    beforeAll(async () => {
      ({ apiKey, campaign } = await draft({ excludeEnrichedWithinDays: 5 }));
    });

    it.each(cases)('%s → invalid_request', async (_label, body, path) => {
      const res = await call(api(), UPDATE, { apiKey, body: body(campaign.id) });
      expectInvalidRequest(res, path);
      await expectStored(apiKey, campaign);
    });
  });

  it('answers not_found for an unknown campaign', async () => {
    const { apiKey } = await newOrganization();
    const unknown = newCampaignId();
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: unknown, name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'not_found', message: expect.any(String), details: { resource: 'campaign', id: unknown } },
    });
    // The conditional write must not have created an item.
    expect(await listAll(apiKey)).toEqual([]);
    const got = await call(api(), GET, { apiKey, body: { campaignId: unknown } });
    expect(got.status).toBe(404);
  });

  it("answers not_found for another organization's campaign and leaves it unchanged", async () => {
    const owner = await draft({ excludeEnrichedWithinDays: 9 });
    const other = await newOrganization();
    const res = await call(api(), UPDATE, {
      apiKey: other.apiKey,
      body: { campaignId: owner.campaign.id, name: 'Hijacked', excludeEnrichedWithinDays: null },
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'not_found', message: expect.any(String), details: { resource: 'campaign', id: owner.campaign.id } },
    });
    await expectStored(owner.apiKey, owner.campaign);
    expect(await listAll(other.apiKey)).toEqual([]);
  });

  it('refuses a tam_only campaign created through the interface: 409 campaign_not_editable', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const ui = await createCampaign(deps(), { organizationId, name: 'From UI', accountIds: ['a'], createdVia: 'ui', status: 'tam_only' });
    expect(ui).toMatchObject({ status: 'tam_only', createdVia: 'ui' });
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: ui.id, name: 'Changed' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'campaign_not_editable', message: expect.any(String), details: { status: 'tam_only' } },
    });
    await expectStored(apiKey, ui);
  });

  it('answers 404 not_found, not an empty campaign, when the draft is deleted between the audited update and its read-back', async () => {
    const { apiKey, organizationId, campaign } = await draft();
    const key = tableKeys.campaign(organizationId, campaign.id);
    const name = 'deleteAfterUpdate';
    let transactions = 0;
    // The update runs in one transaction with the request's audit entry (docs/audit.md) and reads the draft back after it:
    // the draft is deleted right after that transaction, before the read-back.
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes(key.pk)) {
          transactions++;
          await ddb.send(new DeleteCommand({ TableName: config.tableName, Key: key }));
        }
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      const res = await call(api(), UPDATE, { apiKey, body: { campaignId: campaign.id, name: 'Renamed' } });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.error).toMatchObject({ code: 'not_found' });
    } finally {
      ddb.middlewareStack.remove(name);
    }
    expect(transactions).toBe(1);
  });

  it('refuses a draft created through another surface (only API-created drafts are editable)', async () => {
    const { organizationId, apiKey } = await newOrganization();
    for (const createdVia of ['ui', 'data_cube'] as const) {
      const other = await createCampaign(deps(), {
        organizationId,
        name: `From ${createdVia}`,
        accountIds: ['a'],
        createdVia,
        status: 'draft',
      });
      const res = await call(api(), UPDATE, { apiKey, body: { campaignId: other.id, excludeEnrichedWithinDays: 1 } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        data: null,
        error: { code: 'campaign_not_editable', message: expect.any(String), details: { status: 'draft' } },
      });
      await expectStored(apiKey, other);
    }
  });

  it('refuses an API campaign that is enriching: 409 campaign_not_editable {status: enriching}', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const record = enrichingRecord(organizationId);
    await campaigns().create(record);
    const before = await call(api(), GET, { apiKey, body: { campaignId: record.id } });
    expect(before.data.status).toBe('enriching');
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: record.id, name: 'Changed', excludeEnrichedWithinDays: 0 } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'campaign_not_editable', message: expect.any(String), details: { status: 'enriching' } },
    });
    await expectStored(apiKey, before.data);
  });

  it('refuses an enriched campaign whose results lapsed, reporting the status as read (expired)', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const base = enrichingRecord(organizationId);
    const record: CampaignRecord = {
      ...base,
      status: 'enriched',
      completedAt: new Date(Date.now() - 40 * 86_400_000).toISOString(),
      resultsExpireAt: new Date(Date.now() - 10 * 86_400_000).toISOString(),
      results: { totalAccounts: 8, totalContactsFound: 20, pctAccountsWithContact: 0.75, pctAccountsWithMobile: 0.5 },
    };
    await campaigns().create(record);
    const res = await call(api(), UPDATE, { apiKey, body: { campaignId: record.id, name: 'Changed' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'campaign_not_editable', message: expect.any(String), details: { status: 'expired' } },
    });
    const stored = await campaigns().get(organizationId, record.id);
    expect(stored?.name).toBe('Launched');
  });
});
