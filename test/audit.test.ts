/**
 * The audit log (docs/audit.md), over HTTP against the local stack: every call of an audited
 * operation appears once with the X-Request-Id the client saw (refusals and a replayed idempotent
 * call included), reads and an unknown key's 401 do not (test/audit-refusals.test.ts: a revoked key's and a 429); operator changes appear with `keyId: "operator"`; a
 * transaction that fails writes no success entry; filters and cursor page the log; no secret is
 * stored in an entry.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiHandler } from '../lib/http/pipeline';
import { defineOperation } from '../lib/http/operation';
import { transactWrite } from '../lib/db/conditional';
import { CampaignNotEditableError } from '../lib/errors';
import { createRequestAudit } from '../lib/audit/log';
import { serveHandler } from './support/serve-handler';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { apiKeys, organizations } from '../lib/root';
import { API_ROUTES, AUDITED_ROUTES } from '../infra/routes';
import { MAX_WEBHOOK_ENDPOINTS } from '../lib/webhooks/schema';
import { AUDIT_ENTRY_FIELDS } from '../lib/audit/log';
import { call, newOrganization, useApi, type ApiResponse, type CallOptions } from './support/api';
import { opsJson } from './support/ops';
import { activeAccounts, createApiCampaign, importAccounts, uniquePrefix } from './enrichment/support';

// Webhook endpoints on the loopback address (the endpoint-limit case): the local stack's setting.
process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi();
const AUDIT = '/v1/org/audit';

/** Every entry of the organization's log, newest first, paged with `limit` (cursor followed to the end). */
async function allEntries(apiKey: string, body: Record<string, unknown> = {}, limit = 3): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(api(), AUDIT, { apiKey, body: { ...body, limit, ...(cursor ? { cursor } : {}) } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.data.entries.length).toBeLessThanOrEqual(limit);
    entries.push(...page.data.entries);
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor);
  return entries;
}

/** The key ID (`key_…`) of a secret. */
const keyIdOf = async (secret: string) => (await apiKeys().find(secret))!.keyId!;

/** The stored items of an organization's audit partition. */
async function storedItems(organizationId: string) {
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.auditEntries(organizationId) },
      ConsistentRead: true,
    }),
  );
  return Items;
}

describe('which operations are audited', () => {
  it('every operation that changes something is declared audited, and none that only reads', () => {
    expect(AUDITED_ROUTES.map((route) => route.operation.operationId).sort()).toEqual(
      [
        'cancelCampaign',
        'createCampaign',
        'createErasure',
        'createKey',
        'createSuppressions',
        'createUpload',
        'createWebhookEndpoint',
        'deleteSuppression',
        'deleteWebhookEndpoint',
        'enrichCampaign',
        'exportCampaign',
        'redeliverWebhook',
        'revokeKey',
        'rotateKey',
        'rotateWebhookSecret',
        'testWebhookEndpoint',
        'updateCampaign',
      ].sort(),
    );
    // An audited function writes its entry: it may write the table.
    for (const route of AUDITED_ROUTES) expect(route.permissions.table, route.functionId).toBe('readWrite');
    expect(API_ROUTES.find((route) => route.operation.path === AUDIT)?.operation.scope).toBe('usage:read');
  });
});

describe('org/audit', () => {
  it('shows every call of a sequence once, with the X-Request-Id the client saw; reads and a 401 of an unknown key are not logged', async () => {
    const org = await newOrganization({ smbCredits: 1 });
    const ownerKeyId = await keyIdOf(org.apiKey);
    const sent: { requestId: string; keyId: string; operation: string; status: number; code: string | null; campaignId?: string }[] = [];
    const send = async (path: string, operation: string, options: CallOptions, keyId = ownerKeyId): Promise<ApiResponse> => {
      const response = await call(api(), path, options);
      sent.push({
        requestId: response.headers.get('x-request-id')!,
        keyId,
        operation,
        status: response.status,
        code: response.error?.code ?? null,
      });
      return response;
    };

    const writer = await send('/v1/keys/create', 'createKey', {
      apiKey: org.apiKey,
      body: { name: 'Writer', scopes: ['campaigns:write', 'campaigns:read'] },
    });
    expect(writer.status).toBe(200);
    const writerSecret = writer.data.secret as string;
    const writerKeyId = writer.data.key.id as string;

    const accounts = activeAccounts(uniquePrefix(), 3);
    await importAccounts(accounts);
    const idempotencyKey = `create-${randomUUID()}`;
    const createBody = { name: 'Audited', accountIds: accounts.map((account) => account.accountId) };
    const created = await send(
      '/v1/campaigns/create',
      'createCampaign',
      { apiKey: writerSecret, body: createBody, headers: { 'idempotency-key': idempotencyKey } },
      writerKeyId,
    );
    expect(created.status).toBe(200);
    const campaignId = created.data.id as string;
    sent.at(-1)!.campaignId = campaignId;
    const replay = await send(
      '/v1/campaigns/create',
      'createCampaign',
      { apiKey: writerSecret, body: createBody, headers: { 'idempotency-key': idempotencyKey } },
      writerKeyId,
    );
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    sent.at(-1)!.campaignId = campaignId;
    await send('/v1/campaigns/update', 'updateCampaign', { apiKey: writerSecret, body: { campaignId, name: 'Renamed' } }, writerKeyId);
    // Refusals: a scope the key lacks (403), a body that is invalid (400), a missing campaign (404), credits short (402).
    await send('/v1/campaigns/enrich', 'enrichCampaign', { apiKey: writerSecret, body: { campaignId } }, writerKeyId);
    await send('/v1/campaigns/update', 'updateCampaign', { apiKey: writerSecret, body: { campaignId } }, writerKeyId);
    const missing = 'camp_111111111111111111111';
    await send('/v1/campaigns/update', 'updateCampaign', { apiKey: writerSecret, body: { campaignId: missing, name: 'x' } }, writerKeyId);
    await send('/v1/campaigns/enrich', 'enrichCampaign', { apiKey: org.apiKey, body: { campaignId } });
    await send('/v1/keys/revoke', 'revokeKey', { apiKey: org.apiKey, body: { id: 'key_111111111111111111111' } });
    // Not logged: reads, and a request no key stands behind.
    expect((await call(api(), '/v1/campaigns/get', { apiKey: writerSecret, body: { campaignId } })).status).toBe(200);
    expect((await call(api(), '/v1/campaigns/update', { apiKey: 'cek_unknown', body: { campaignId, name: 'x' } })).status).toBe(401);

    expect(sent.map((call) => call.status)).toEqual([200, 200, 200, 200, 403, 400, 404, 402, 404]);
    const entries = await allEntries(org.apiKey);
    expect(entries).toHaveLength(sent.length);
    // Newest first.
    expect(entries.map((entry) => entry.at)).toEqual([...entries.map((entry) => entry.at)].sort().reverse());
    for (const call of sent) {
      const matching = entries.filter((entry) => entry.requestId === call.requestId);
      expect(matching, call.operation).toHaveLength(1);
      expect(matching[0]).toMatchObject({
        keyId: call.keyId,
        operation: call.operation,
        status: call.status,
        code: call.code,
        sourceIp: expect.any(String),
        ...(call.campaignId ? { campaignId: call.campaignId } : {}),
      });
      expect(Object.keys(matching[0])).toEqual([...AUDIT_ENTRY_FIELDS]);
    }
    const [first, second] = entries.filter((entry) => entry.operation === 'createCampaign');
    expect([first.idempotencyKey, second.idempotencyKey]).toEqual([idempotencyKey, idempotencyKey]);
    expect(entries.find((entry) => entry.code === 'not_found' && entry.operation === 'updateCampaign').campaignId).toBe(missing);

    // No secret in what is stored.
    const stored = JSON.stringify(await storedItems(org.organizationId));
    expect(stored).not.toContain(writerSecret);
    expect(stored).not.toContain(org.apiKey);
    expect(stored).not.toContain(writerSecret.slice(0, 12));
  });

  it('logs operator changes with keyId "operator", each with the change', async () => {
    const org = await newOrganization();
    await opsJson(['org:credits', '--org', org.organizationId, '--add', '25', '--note', 'audit test']);
    await opsJson(['org:capacity', '--org', org.organizationId, '--max-enriching', '100']);
    await opsJson(['org:limits', '--org', org.organizationId, '--low-balance', '10']);
    const created = await opsJson(['key:create', '--org', org.organizationId, '--name', 'From the operator']);
    await opsJson(['key:revoke', '--key', created.apiKey, '--yes']);
    // Reading limits changes nothing: no entry.
    await opsJson(['org:limits', '--org', org.organizationId]);

    const entries = await allEntries(org.apiKey, { filters: { keyId: 'operator' } }, 10);
    expect(entries.map((entry) => entry.operation)).toEqual(['key:revoke', 'key:create', 'org:limits', 'org:capacity', 'org:credits']);
    for (const entry of entries)
      expect(entry).toMatchObject({
        keyId: 'operator',
        status: 200,
        code: null,
        sourceIp: null,
        requestId: expect.stringMatching(/^ops_/),
      });
    expect(JSON.stringify(await storedItems(org.organizationId))).not.toContain(created.apiKey);
    // Nothing of another organization.
    expect(await allEntries((await newOrganization()).apiKey)).toEqual([]);
  });

  it('a change whose transaction fails writes no success entry, only its refusal', async () => {
    const org = await newOrganization();
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) {
      const created = await call(api(), '/v1/webhooks/create', { apiKey: org.apiKey, body: { url: `http://127.0.0.1:9/hook-${i}` } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
    // The endpoint count's condition fails inside the transaction that carries the entry.
    const refused = await call(api(), '/v1/webhooks/create', { apiKey: org.apiKey, body: { url: 'http://127.0.0.1:9/one-too-many' } });
    expect(refused.status).toBe(409);
    const requestId = refused.headers.get('x-request-id');
    const entries = await allEntries(org.apiKey, { filters: { operation: 'createWebhookEndpoint' } }, 100);
    expect(entries).toHaveLength(MAX_WEBHOOK_ENDPOINTS + 1);
    expect(entries.filter((entry) => entry.requestId === requestId)).toEqual([
      expect.objectContaining({ status: 409, code: refused.error!.code }),
    ]);
    expect(entries.filter((entry) => entry.status === 200)).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
  });

  it('filters by key, operation and time, and pages by cursor bound to its filters', async () => {
    const org = await newOrganization();
    const other = await call(api(), '/v1/keys/create', { apiKey: org.apiKey, body: { name: 'Other', scopes: ['campaigns:write'] } });
    const otherKeyId = other.data.key.id as string;
    const ownerKeyId = await keyIdOf(org.apiKey);
    const accounts = activeAccounts(uniquePrefix(), 1);
    await importAccounts(accounts);
    const ids = [accounts[0]!.accountId];
    for (let i = 0; i < 3; i++) await createApiCampaign(api(), org.apiKey, ids);
    const middle = new Date().toISOString();
    // Bounds are inclusive to the millisecond: the next request arrives after `middle`.
    while (new Date().toISOString() <= middle) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 2; i++) await createApiCampaign(api(), other.data.secret, ids);
    await call(api(), '/v1/uploads/create', { apiKey: other.data.secret, body: {} });

    const byKey = await allEntries(org.apiKey, { filters: { keyId: otherKeyId } }, 2);
    expect(byKey.map((entry) => entry.operation)).toEqual(['createUpload', 'createCampaign', 'createCampaign']);
    const byKeyAndOperation = await allEntries(org.apiKey, { filters: { keyId: otherKeyId, operation: 'createCampaign' } }, 1);
    expect(byKeyAndOperation).toHaveLength(2);
    const byOperation = await allEntries(org.apiKey, { filters: { operation: 'createCampaign' } }, 2);
    expect(byOperation).toHaveLength(5);
    const owner = await allEntries(org.apiKey, { filters: { keyId: ownerKeyId } }, 10);
    expect(owner.map((entry) => entry.operation)).toEqual(['createCampaign', 'createCampaign', 'createCampaign', 'createKey']);
    const since = await allEntries(org.apiKey, { filters: { from: middle } }, 2);
    expect(since.map((entry) => entry.keyId)).toEqual([otherKeyId, otherKeyId, otherKeyId]);
    const until = await allEntries(org.apiKey, { filters: { to: middle } }, 2);
    expect(until).toHaveLength(4);

    // A cursor is bound to its filters and limit.
    const page = await call(api(), AUDIT, { apiKey: org.apiKey, body: { filters: { operation: 'createCampaign' }, limit: 2 } });
    const cursor = page.data.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const misused = await call(api(), AUDIT, { apiKey: org.apiKey, body: { cursor, limit: 2 } });
    expect(misused.status).toBe(400);
    expect(misused.error).toMatchObject({ code: 'invalid_request' });
    // Bad input names the field.
    const bad = await call(api(), AUDIT, { apiKey: org.apiKey, body: { limit: 1001 } });
    expect(bad.error?.details?.issues?.join(' ')).toContain('limit');
    const reversed = await call(api(), AUDIT, { apiKey: org.apiKey, body: { filters: { from: middle, to: '2000-01-01T00:00:00Z' } } });
    expect(reversed.error?.details?.issues?.join(' ')).toContain('filters.to');
    // usage:read is the scope.
    const writerOnly = await call(api(), AUDIT, { apiKey: other.data.secret, body: {} });
    expect(writerOnly.error).toMatchObject({ code: 'insufficient_scope', details: { required: 'usage:read' } });
    expect((await organizations().get(org.organizationId))?.id).toBe(org.organizationId);
  });
});

describe('the pipeline and a change that carries its entry', () => {
  const operation = defineOperation({
    operationId: 'auditedChangeTest',
    scope: 'campaigns:write',
    path: '/v1/test/audited-change',
    audited: true,
    request: z.strictObject({ mode: z.enum(['commit', 'conflict', 'nothing']), marker: z.string() }),
  });
  let lateWrites = 0;
  const real = createRequestAudit({ client: ddb, tableName: config.tableName });
  const audit = {
    changeItem: real.changeItem,
    writeRefusal: real.writeRefusal,
    writeAnswer: async (...args: Parameters<typeof real.writeAnswer>) => {
      lateWrites++;
      await real.writeAnswer(...args);
    },
  };
  const markerKey = (marker: string) => ({ pk: `AUDITTEST#${marker}`, sk: 'MARKER' });
  // The use case writes a marker item; with `conflict` the marker exists already, so its transaction fails.
  const handler = createApiHandler(
    operation,
    async (input, { auditItem }) => {
      if (input.mode === 'nothing') return { changed: false };
      const outcome = await transactWrite(ddb, {
        TransactItems: [
          { Put: { TableName: config.tableName, Item: markerKey(input.marker), ConditionExpression: 'attribute_not_exists(pk)' } },
          auditItem!(),
        ],
      });
      if (!outcome.ok) throw new ConflictTestError();
      return { changed: true };
    },
    { findApiKey: (keyHash) => apiKeys().findByHash(keyHash), audit },
  );
  const baseUrl = serveHandler(handler, { path: operation.path, functionName: 'AuditedChange' });

  it('a success whose transaction carried its entry writes no other; a failed transaction leaves only its refusal; no change: a late entry', async () => {
    const org = await newOrganization();
    const marker = randomUUID();
    const entryOf = async (response: ApiResponse) =>
      (await storedItems(org.organizationId)).filter((item) => item.requestId === response.headers.get('x-request-id'));

    const committed = await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: { mode: 'commit', marker } });
    expect(committed.status).toBe(200);
    expect(lateWrites).toBe(0);
    expect(await entryOf(committed)).toEqual([expect.objectContaining({ status: 200, code: null, operation: 'auditedChangeTest' })]);

    const conflicted = await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: { mode: 'conflict', marker } });
    expect(conflicted.status).toBe(409);
    expect(lateWrites).toBe(1);
    expect(await entryOf(conflicted)).toEqual([expect.objectContaining({ status: 409, code: 'campaign_not_editable' })]);

    const unchanged = await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: { mode: 'nothing', marker } });
    expect(unchanged.status).toBe(200);
    expect(lateWrites).toBe(2);
    expect(await entryOf(unchanged)).toEqual([expect.objectContaining({ status: 200, code: null })]);
  });
});

/** A refusal of the test operation's failed transaction (any 409 the document knows). */
class ConflictTestError extends CampaignNotEditableError {
  constructor() {
    super('enriching');
  }
}
