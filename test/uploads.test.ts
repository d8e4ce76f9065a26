/**
 * Large account lists through an upload (docs/campaigns.md#large-account-lists-upload-first), end to end: real
 * HTTP against the local API server, DynamoDB Local and the local S3
 * endpoint (s3rver), whose presigned PUT the test uses as a customer would.
 * `POST /v1/uploads/create` presigns a PUT under the organization's prefix;
 * `POST /v1/campaigns/create` with `accountIdsUploadId` reads the file with
 * the `accountIdsFile` rules and the limits of docs/campaigns.md. Every refusal names
 * `accountIdsUploadId` (and the line) and writes no campaign.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountListKey } from '../lib/account-lists/account-list';
import { objectKeys } from '../lib/objects';
import { accountLists, uploads } from '../lib/root';
import { MAX_UPLOAD_BYTES } from '../lib/uploads/schema';
import { newUploadId } from '../lib/ids';
import { createCampaignEnrichmentClient } from '../client/index';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';

const api = useApi();
const UPLOAD = '/v1/uploads/create';
const CREATE = '/v1/campaigns/create';
const LIST = '/v1/campaigns/list';
const FIELD = 'accountIdsUploadId';

const UPLOAD_ID = /^upl_[1-9A-HJ-NP-Za-km-z]{21}$/;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A 400 `invalid_request` with an issue line starting `<path>: ` and matching `detail` when given. */
function expectInvalidRequest(res: ApiResponse, path: string, detail?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.error?.code).toBe('invalid_request');
  const issues = res.error?.details?.issues as string[];
  expect(issues).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${escapeRegExp(path)}: \\S`))]));
  if (detail) expect(issues.find((issue) => issue.startsWith(`${path}: `))).toMatch(detail);
}

/** Creates an upload for an organization and PUTs `content` to its URL, as `curl --upload-file` would. */
async function upload(apiKey: string, content: string | Buffer, contentType?: 'text/csv' | 'text/plain'): Promise<string> {
  const created = await call(api(), UPLOAD, { apiKey, body: contentType ? { contentType } : {} });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const put = await fetch(created.data.url, {
    method: 'PUT',
    body: content,
    ...(contentType ? { headers: { 'content-type': contentType } } : {}),
  });
  expect(put.status, await put.clone().text()).toBe(200);
  return created.data.uploadId;
}

/** No campaign was written for the organization. */
async function expectNoCampaign(apiKey: string): Promise<void> {
  const listed = await call(api(), LIST, { apiKey, body: {} });
  expect(listed.status).toBe(200);
  expect(listed.data.campaigns).toEqual([]);
}

describe('POST /v1/uploads/create', () => {
  afterEach(() => {
    delete process.env.UPLOAD_URL_TTL_SECONDS;
  });

  it("answers a presigned PUT URL under the organization's own prefix, valid 15 minutes, and maxBytes 50 MB", async () => {
    const { organizationId, apiKey } = await newOrganization();
    const before = Date.now();
    const res = await call(api(), UPLOAD, { apiKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({
      uploadId: expect.stringMatching(UPLOAD_ID),
      url: expect.any(String),
      expiresAt: expect.any(String),
      maxBytes: 50_000_000,
    });
    expect(MAX_UPLOAD_BYTES).toBe(50_000_000);
    const url = new URL(res.data.url);
    expect(decodeURIComponent(url.pathname)).toMatch(new RegExp(`/${escapeRegExp(objectKeys.upload(organizationId, res.data.uploadId))}$`));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    // No checksum of an empty body in the URL: S3 would refuse the real file with BadDigest.
    expect([...url.searchParams.keys()].filter((key) => /checksum/i.test(key))).toEqual([]);
    const expiresAt = Date.parse(res.data.expiresAt);
    expect(expiresAt - Math.floor(before / 1000) * 1000).toBeGreaterThanOrEqual(900_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(900_000);
    // An upload ID is new on every call.
    const again = await call(api(), UPLOAD, { apiKey });
    expect(again.status).toBe(200);
    expect(again.data.uploadId).not.toBe(res.data.uploadId);
  });

  it('signs a declared contentType into the URL; accepts it as a form field too', async () => {
    const { apiKey } = await newOrganization();
    const json = await call(api(), UPLOAD, { apiKey, body: { contentType: 'text/csv' } });
    expect(json.status).toBe(200);
    expect(new URL(json.data.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host');
    const form = await call(api(), UPLOAD, { apiKey, form: new URLSearchParams({ contentType: 'text/plain' }) });
    expect(form.status).toBe(200);
    expect(new URL(form.data.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-type;host');
  });

  it.each([
    ['another content type', { contentType: 'application/json' }, 'contentType'],
    ['a content type with parameters', { contentType: 'text/csv; charset=utf-8' }, 'contentType'],
    ['a number', { contentType: 5 }, 'contentType'],
    ['null', { contentType: null }, 'contentType'],
    ['an unknown property', { contentLength: 1000 }, 'contentLength'],
  ])('refuses %s: invalid_request naming the field', async (_label, body, path) => {
    const { apiKey } = await newOrganization();
    expectInvalidRequest(await call(api(), UPLOAD, { apiKey, body }), path);
  });

  it('replays the same upload for the same Idempotency-Key (docs/idempotency.md)', async () => {
    const { apiKey } = await newOrganization();
    const first = await call(api(), UPLOAD, { apiKey, body: {}, headers: { 'Idempotency-Key': 'upload-1' } });
    const second = await call(api(), UPLOAD, { apiKey, body: {}, headers: { 'Idempotency-Key': 'upload-1' } });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.data).toEqual(first.data);
    const other = await call(api(), UPLOAD, { apiKey, body: { contentType: 'text/csv' }, headers: { 'Idempotency-Key': 'upload-1' } });
    expect(other.status).toBe(422);
    expect(other.error?.code).toBe('idempotency_key_reused');
  });

  it('answers 401 without an API key', async () => {
    const res = await call(api(), UPLOAD, { body: {} });
    expect(res.status).toBe(401);
  });

  it('the local S3 endpoint refuses a PUT once the URL has expired', async () => {
    const { apiKey } = await newOrganization();
    process.env.UPLOAD_URL_TTL_SECONDS = '1';
    const res = await call(api(), UPLOAD, { apiKey, body: {} });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(res.data.expiresAt) - Date.now() + 1_100));
    const put = await fetch(res.data.url, { method: 'PUT', body: 'a\n' });
    expect(put.status).toBe(403);
    expect(await put.text()).toMatch(/expired/i);
  });
});

describe('POST /v1/campaigns/create with accountIdsUploadId', () => {
  it('creates a campaign of 100,000 IDs of 128 characters (≈ 13 MB, far over a request body) from an uploaded CSV', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const ids = Array.from({ length: 100_000 }, (_, i) => `acc_${String(i).padStart(6, '0')}_`.padEnd(128, 'x'));
    const file = `account_id,name\r\n${ids.map((id, i) => `${id},Company ${i}`).join('\r\n')}\r\n`;
    expect(Buffer.byteLength(file)).toBeGreaterThan(13_000_000);
    const uploadId = await upload(apiKey, file, 'text/csv');

    const res = await call(api(), CREATE, {
      apiKey,
      body: { name: 'Big list', accountIdsUploadId: uploadId, excludeEnrichedWithinDays: 30 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.data).toMatchObject({
      status: 'draft',
      createdVia: 'api',
      name: 'Big list',
      excludeEnrichedWithinDays: 30,
      accounts: { requested: 100_000, eligible: null, excluded: null },
    });
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(ids);
  });

  it('collapses duplicates in first-seen order, skips blank lines and the header, trims, reads a BOM; urlencoded works too', async () => {
    const { organizationId, apiKey } = await newOrganization();
    const uploadId = await upload(apiKey, '\uFEFFID\n b \n\na\nb\n  \na\nc\n');
    const res = await call(api(), CREATE, { apiKey, form: new URLSearchParams({ name: 'Dupes', accountIdsUploadId: uploadId }) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.data.accounts.requested).toBe(3);
    expect(await accountLists().get(accountListKey(organizationId, res.data.id))).toEqual(['b', 'a', 'c']);
    // The same upload may serve another create while it is usable.
    const again = await call(api(), CREATE, { apiKey, body: { name: 'Dupes again', accountIdsUploadId: uploadId } });
    expect(again.status).toBe(200);
    expect(again.data.accounts.requested).toBe(3);
  });

  it('works through the typed client: uploadAccountIds, then createCampaign', async () => {
    const { apiKey } = await newOrganization();
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey });
    const uploadId = await client.uploadAccountIds('account_id\nacc_1\nacc_2\n', { contentType: 'text/csv' });
    const campaign = await client.createCampaign({ name: 'Client upload', accountIdsUploadId: uploadId });
    expect(campaign.accounts.requested).toBe(2);
  });

  describe('refuses with invalid_request naming accountIdsUploadId, and writes nothing', () => {
    let apiKey: string;
    let organizationId: string;
    beforeAll(async () => {
      ({ organizationId, apiKey } = await newOrganization());
    });
    afterEach(async () => {
      await expectNoCampaign(apiKey);
    });
    const create = (body: Record<string, unknown>) => call(api(), CREATE, { apiKey, body: { name: 'Refused', ...body } });

    it('an unknown upload', async () => {
      expectInvalidRequest(await create({ accountIdsUploadId: newUploadId() }), FIELD, /no upload/);
    });

    it("another organization's upload (even one with a file)", async () => {
      const other = await newOrganization();
      const uploadId = await upload(other.apiKey, 'acc_1\n');
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /no upload/);
    });

    it('an upload whose file was never PUT', async () => {
      const res = await call(api(), UPLOAD, { apiKey, body: {} });
      expectInvalidRequest(await create({ accountIdsUploadId: res.data.uploadId }), FIELD, /nothing was uploaded/);
    });

    it('an expired upload (its record past usableUntil)', async () => {
      const uploadId = await upload(apiKey, 'acc_1\n');
      const record = (await uploads().get(organizationId, uploadId))!;
      expect(Date.parse(record.usableUntil) - Date.parse(record.createdAt)).toBe(3_600_000);
      await uploads().put({ ...record, usableUntil: new Date(Date.now() - 1000).toISOString() });
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /expired/);
    });

    it('a file of 50,000,001 bytes, one more than maxBytes (refused before it is read)', async () => {
      const uploadId = await upload(apiKey, Buffer.alloc(MAX_UPLOAD_BYTES + 1, 'a\n'));
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /50000001 bytes, more than maxBytes \(50000000\)/);
    });

    it('a file larger than the maxBytes its upload promised (the record keeps the limit it was created with)', async () => {
      const uploadId = await upload(apiKey, 'acc_1\nacc_2\nacc_3\n');
      const record = (await uploads().get(organizationId, uploadId))!;
      expect(record.maxBytes).toBe(MAX_UPLOAD_BYTES);
      await uploads().put({ ...record, maxBytes: 10 });
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /18 bytes, more than maxBytes \(10\)/);
    });

    it('a file with an ID of 129 characters, naming its line', async () => {
      const uploadId = await upload(apiKey, `account_id\nacc_1\n\n${'x'.repeat(129)}\nacc_2\n`);
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /^accountIdsUploadId: line 4: account ID "x+": .*128/);
    });

    it('a file with a control character in an ID, naming its line', async () => {
      const uploadId = await upload(apiKey, 'acc_1\nacc\u00072\n');
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /^accountIdsUploadId: line 2: .*control characters/);
    });

    it('a file of 100,001 IDs, naming the line of the one too many', async () => {
      const ids = Array.from({ length: 100_001 }, (_, i) => `a${i % 50_000}`);
      const uploadId = await upload(apiKey, `account_id\n${ids.join('\n')}\n`);
      expectInvalidRequest(
        await create({ accountIdsUploadId: uploadId }),
        FIELD,
        /^accountIdsUploadId: line 100002: more than 100000 account IDs/,
      );
    });

    it('a file with no IDs (a header only)', async () => {
      const uploadId = await upload(apiKey, 'account_id\r\n\r\n');
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /no account IDs/);
    });

    it('a file that is not CSV (an unclosed quote), naming the line', async () => {
      const uploadId = await upload(apiKey, 'acc_1\n"acc_2\nacc_3\n');
      expectInvalidRequest(await create({ accountIdsUploadId: uploadId }), FIELD, /line/i);
    });

    it('both accountIds and accountIdsUploadId', async () => {
      const uploadId = await upload(apiKey, 'acc_1\n');
      expectInvalidRequest(await create({ accountIds: ['acc_1'], accountIdsUploadId: uploadId }), FIELD, /exactly one/);
    });

    it('both accountIdsFile and accountIdsUploadId (multipart)', async () => {
      const uploadId = await upload(apiKey, 'acc_1\n');
      const form = new FormData();
      form.append('name', 'Refused');
      form.append('accountIdsUploadId', uploadId);
      form.append('accountIdsFile', new Blob(['acc_1\n'], { type: 'text/csv' }), 'ids.csv');
      expectInvalidRequest(await call(api(), CREATE, { apiKey, multipart: form }), FIELD, /exactly one/);
    });

    it('a malformed upload ID', async () => {
      expectInvalidRequest(await create({ accountIdsUploadId: 'upl_../../campaigns' }), FIELD, /upload ID/);
    });

    it('neither accountIds nor accountIdsUploadId', async () => {
      expectInvalidRequest(await create({}), 'accountIds', /accountIdsUploadId/);
    });
  });
});

describe('README "Large account lists: upload first"', () => {
  /** The first ```sh block under that heading, as written. */
  function readmeBlock(): string {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n### Large account lists: upload first\n'));
    const block = /\n```sh\n([\s\S]*?)\n```\n/.exec(section);
    if (!block) throw new Error('README.md has no ```sh block under "### Large account lists: upload first"');
    return block[1]!;
  }

  it("runs with bash and curl as written (after the quickstart's auth and json helpers)", async () => {
    const { apiKey } = await newOrganization();
    const dir = mkdtempSync(path.join(tmpdir(), 'upload-readme-'));
    try {
      writeFileSync(path.join(dir, 'big-ids.csv'), `account_id\n${Array.from({ length: 2_000 }, (_, i) => `acc_${i}`).join('\n')}\n`);
      const prelude = [
        'auth=(-H "Authorization: Bearer $KEY")',
        `json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).$1))"; }`,
      ].join('\n');
      const script = path.join(dir, 'upload.sh');
      writeFileSync(script, `${prelude}\n${readmeBlock()}\n`);
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          'bash',
          ['-e', '-o', 'pipefail', script],
          { cwd: dir, env: { ...process.env, API: api(), KEY: apiKey }, timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
      expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toMatchObject({
        data: { name: 'Full TAM', status: 'draft', accounts: { requested: 2_000 } },
        error: null,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
