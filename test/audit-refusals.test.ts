/**
 * The audit log's refusals and late successes (docs/audit.md), over HTTP against the local stack:
 * - a write call refused at authentication (a revoked key of the organization, known to the process or read
 *   first) and one refused by the request rate (429, after a lease write and from the process's known refusal)
 *   each appear once, with the `X-Request-Id` the client saw; an unknown key writes nothing at all;
 * - several refusals at once share one BatchWriteItem;
 * - an export's entry is written before its answer (a failed write fails the export: no 200 without its entry);
 * - a redelivery's entry is written in the transaction that logs the attempt.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb } from '../lib/aws';
import { config } from '../lib/config';
import { authenticate, refusedKeyOf } from '../lib/http/auth';
import { newApiKey } from '../lib/ids';
import { apiKeys } from '../lib/root';
import { createRequestAudit } from '../lib/audit/log';
import type { RequestAnswer, RequestRecord } from '../lib/http/request-record';
import * as tableKeys from '../lib/db/keys';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import {
  activeAccounts,
  createApiCampaign,
  enrich,
  gate,
  importAccounts,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';
import { startReceiver } from './webhooks/receiver';

process.env.WEBHOOKS_ALLOW_LOCALHOST = 'true';
const api = useApi({ webhooks: { intervalMs: 100 } });
const UPDATE = '/v1/campaigns/update';
const MISSING_CAMPAIGN = 'camp_111111111111111111111';

/** Every entry of the organization's log (pages followed). */
async function entriesOf(apiKey: string): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(api(), '/v1/org/audit', { apiKey, body: { limit: 1000, ...(cursor ? { cursor } : {}) } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    entries.push(...page.data.entries);
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor);
  return entries;
}

/** The stored entries of an organization's log, read from the table (an organization over its rate cannot read it). */
async function storedEntries(organizationId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': tableKeys.auditEntries(organizationId) },
      ConsistentRead: true,
    }),
  );
  return Items;
}

const requestIdOf = (response: ApiResponse) => response.headers.get('x-request-id')!;

/** A key of the organization made over the API: its secret and ID. */
async function makeKey(apiKey: string, scopes: string[]): Promise<{ secret: string; id: string }> {
  const made = await call(api(), '/v1/keys/create', { apiKey, body: { name: 'Scoped', scopes } });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  return { secret: made.data.secret, id: made.data.key.id };
}

interface SentCommand {
  name: string;
  input: string;
}

/**
 * Records every DynamoDB command the shared client sends while `work` runs (the local server runs in this
 * process); `fail` may refuse a command with an error instead of sending it.
 */
async function recording<T>(work: () => Promise<T>, fail?: (command: SentCommand) => boolean): Promise<{ result: T; sent: SentCommand[] }> {
  const sent: SentCommand[] = [];
  const name = `auditRefusalsRecorder${Math.random()}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const command = { name: String(context.commandName), input: JSON.stringify(args.input) };
      sent.push(command);
      if (fail?.(command)) throw new Error('planted fault: the audit entry could not be written');
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), sent };
  } finally {
    ddb.middlewareStack.remove(name);
  }
}

/** The DynamoDB operations that write (the names the shared client's middleware sees). */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

describe('refusals at authentication and by the request rate', () => {
  it('a revoked key of the organization: its write call appears once with its X-Request-Id, read first or known to the process', async () => {
    const org = await newOrganization();
    const known = await makeKey(org.apiKey, ['campaigns:write']);
    const unseen = await makeKey(org.apiKey, ['campaigns:write']);
    // `known` is used once, so this process keeps it; `unseen` never is, so its refusal is read before anything.
    const before = await call(api(), UPDATE, { apiKey: known.secret, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } });
    expect(before.status).toBe(404);
    for (const key of [known, unseen])
      expect((await call(api(), '/v1/keys/revoke', { apiKey: org.apiKey, body: { id: key.id } })).status).toBe(200);

    const refused = [];
    for (const key of [known, unseen]) {
      const response = await call(api(), UPDATE, { apiKey: key.secret, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } });
      expect(response.status).toBe(401);
      expect(response.error?.code).toBe('revoked_api_key');
      refused.push({ key, requestId: requestIdOf(response) });
    }
    // A read refused the same way is not a write: no entry.
    expect((await call(api(), '/v1/campaigns/get', { apiKey: unseen.secret, body: { campaignId: MISSING_CAMPAIGN } })).status).toBe(401);

    const entries = await entriesOf(org.apiKey);
    for (const { key, requestId } of refused) {
      expect(entries.filter((entry) => entry.requestId === requestId)).toEqual([
        expect.objectContaining({
          keyId: key.id,
          operation: 'updateCampaign',
          status: 401,
          code: 'revoked_api_key',
          campaignId: null,
          sourceIp: expect.any(String),
        }),
      ]);
    }
    expect(entries.filter((entry) => entry.status === 401)).toHaveLength(2);
  });

  it('a write call over the request rate appears once with its X-Request-Id (a lease refused, then a refusal the process knew)', async () => {
    const org = await newOrganization({ limits: { requests: 2, windowSeconds: 3600 } });
    const responses: ApiResponse[] = [];
    for (let i = 0; i < 4; i++)
      responses.push(await call(api(), UPDATE, { apiKey: org.apiKey, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } }));
    expect(responses.map((response) => response.status)).toEqual([404, 404, 429, 429]);
    const keyId = (await apiKeys().find(org.apiKey))!.keyId;

    const Items = await storedEntries(org.organizationId);
    for (const response of responses) {
      const matching = Items.filter((item) => item.requestId === requestIdOf(response));
      expect(matching).toHaveLength(1);
      expect(matching[0]).toMatchObject({
        keyId,
        operation: 'updateCampaign',
        status: response.status,
        code: response.status === 429 ? 'rate_limited' : 'not_found',
      });
    }
  });

  it('an unknown key writes nothing: no entry, no count, no write of any kind', async () => {
    const org = await newOrganization();
    const { result, sent } = await recording(() =>
      call(api(), UPDATE, { apiKey: newApiKey(), body: { campaignId: MISSING_CAMPAIGN, name: 'x' } }),
    );
    expect(result.status).toBe(401);
    expect(result.error?.code).toBe('invalid_api_key');
    expect(sent.filter((command) => WRITES.has(command.name))).toEqual([]);
    expect(sent.filter((command) => command.name === 'GetItemCommand')).toHaveLength(1); // the key's lookup
    expect(await entriesOf(org.apiKey)).toEqual([]);
  });

  it('refusals arriving together share one BatchWriteItem, each entry once', async () => {
    const org = await newOrganization({ limits: { requests: 1, windowSeconds: 3600 } });
    expect((await call(api(), UPDATE, { apiKey: org.apiKey, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } })).status).toBe(404);
    // The next refusal makes the refusal known to the process; the eight after it are answered from memory, together.
    expect((await call(api(), UPDATE, { apiKey: org.apiKey, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } })).status).toBe(429);
    const { result, sent } = await recording(() =>
      Promise.all(
        Array.from({ length: 8 }, () => call(api(), UPDATE, { apiKey: org.apiKey, body: { campaignId: MISSING_CAMPAIGN, name: 'x' } })),
      ),
    );
    expect(result.map((response) => response.status)).toEqual(Array(8).fill(429));
    const auditWrites = sent.filter((command) => WRITES.has(command.name) && command.input.includes(`ORG#${org.organizationId}#AUDIT`));
    expect(auditWrites.every((command) => command.name === 'BatchWriteItemCommand')).toBe(true);
    // How many writes eight HTTP refusals share depends on when their sockets are read; the sharing itself is counted
    // below, in process, where "together" is exact.
    expect(auditWrites.length).toBeLessThanOrEqual(8);
    const entries = await storedEntries(org.organizationId);
    for (const response of result) expect(entries.filter((entry) => entry.requestId === requestIdOf(response))).toHaveLength(1);
  });

  it('counted in process: refusals of one turn share one BatchWriteItem, and those arriving while it is in flight share the next', async () => {
    const org = await newOrganization();
    const audit = createRequestAudit({ client: ddb, tableName: config.tableName });
    const record = (requestId: string): RequestRecord => ({
      organizationId: org.organizationId,
      operation: 'updateCampaign',
      keyId: null,
      requestId,
      idempotencyKey: null,
      sourceIp: null,
      at: new Date().toISOString(),
    });
    const refused: RequestAnswer = { status: 429, code: 'rate_limited', campaignId: null };
    const held = gate();
    const reached = gate();
    let first = true;
    const { sent } = await recording(async () => {
      const name = `auditRefusalsHold${Math.random()}`;
      ddb.middlewareStack.add(
        (next, context) => async (args) => {
          if (first && context.commandName === 'BatchWriteItemCommand' && JSON.stringify(args.input).includes(org.organizationId)) {
            first = false;
            reached.open();
            await held.promise;
          }
          return next(args);
        },
        { step: 'initialize', name },
      );
      try {
        // Eight in one turn: one batch, held in flight; then seven while it is in flight: the next batch.
        const together = Array.from({ length: 8 }, (_, i) => audit.writeRefusal(record(`req_turn_${i}`), refused));
        await reached.promise;
        const meanwhile = Array.from({ length: 7 }, (_, i) => audit.writeRefusal(record(`req_meanwhile_${i}`), refused));
        held.open();
        await Promise.all([...together, ...meanwhile]);
      } finally {
        ddb.middlewareStack.remove(name);
      }
    });
    const auditWrites = sent.filter((command) => WRITES.has(command.name) && command.input.includes(org.organizationId));
    expect(auditWrites.map((command) => command.name)).toEqual(['BatchWriteItemCommand', 'BatchWriteItemCommand']);
    const entries = await storedEntries(org.organizationId);
    for (const id of [
      ...Array.from({ length: 8 }, (_, i) => `req_turn_${i}`),
      ...Array.from({ length: 7 }, (_, i) => `req_meanwhile_${i}`),
    ])
      expect(entries.filter((entry) => entry.requestId === id)).toHaveLength(1);
  });

  it('names the organization and key of a key read and found expired, and none for an unknown key', async () => {
    const org = await newOrganization();
    const key = await makeKey(org.apiKey, ['campaigns:read']);
    const expiresAt = Date.now() + 60_000;
    const record = await apiKeys().find(key.secret);
    const lookup = async () => ({ ...record!, expiresAt: new Date(expiresAt).toISOString() });
    const refusal = await authenticate(`Bearer ${key.secret}`, lookup, undefined, () => expiresAt + 1).catch((error) => error);
    expect(refusal.code).toBe('expired_api_key');
    expect(refusedKeyOf(refusal)).toEqual({ organizationId: org.organizationId, keyId: key.id });
    const unknown = await authenticate(`Bearer ${newApiKey()}`, async () => undefined).catch((error) => error);
    expect(unknown.code).toBe('invalid_api_key');
    expect(refusedKeyOf(unknown)).toBeUndefined();
  });
});

describe('changes outside the table', () => {
  it('an export answers 200 only once its entry is written: a failed entry write fails the export', async () => {
    const org = await newOrganization();
    const accounts = activeAccounts(uniquePrefix(), 2);
    await importAccounts(accounts);
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      accounts.map((account) => account.accountId),
    );
    expect((await enrich(api(), org.apiKey, campaignId)).status).toBe(200);
    await waitForStatus(api(), org.apiKey, campaignId, 'enriched');
    const auditPartition = `ORG#${org.organizationId}#AUDIT`;

    const failed = await recording(
      () => call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } }),
      (command) => command.name === 'PutItemCommand' && command.input.includes(auditPartition),
    );
    expect(failed.result.status).toBe(500);

    const exported = await recording(() => call(api(), '/v1/campaigns/export', { apiKey: org.apiKey, body: { campaignId } }));
    expect(exported.result.status, JSON.stringify(exported.result.body)).toBe(200);
    // One write of the entry, before the answer (the pipeline writes no second one).
    expect(exported.sent.filter((command) => WRITES.has(command.name) && command.input.includes(auditPartition))).toHaveLength(1);

    const entries = await entriesOf(org.apiKey);
    expect(entries.filter((entry) => entry.requestId === requestIdOf(exported.result))).toEqual([
      expect.objectContaining({ operation: 'exportCampaign', status: 200, code: null, campaignId }),
    ]);
    // The failed export has no success entry (its answer said 500).
    expect(entries.filter((entry) => entry.requestId === requestIdOf(failed.result) && entry.status === 200)).toEqual([]);
  });

  it('a redelivery writes its entry in the transaction that logs the attempt', async () => {
    const org = await newOrganization();
    const hook = await startReceiver();
    try {
      const endpoint = await call(api(), '/v1/webhooks/create', { apiKey: org.apiKey, body: { url: hook.url } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
      const sent = await call(api(), '/v1/webhooks/test', { apiKey: org.apiKey, body: { endpointId: endpoint.data.id } });
      expect(sent.status).toBe(200);
      await hook.received(1);
      await pollUntil(
        () => call(api(), '/v1/webhooks/deliveries', { apiKey: org.apiKey, body: {} }),
        (r: ApiResponse) => r.status === 200 && r.data.deliveries.length === 1,
      );

      const auditPartition = `ORG#${org.organizationId}#AUDIT`;
      const redelivered = await recording(() =>
        call(api(), '/v1/webhooks/redeliver', { apiKey: org.apiKey, body: { messageId: sent.data.messageId } }),
      );
      expect(redelivered.result.status, JSON.stringify(redelivered.result.body)).toBe(200);
      const auditWrites = redelivered.sent.filter((command) => WRITES.has(command.name) && command.input.includes(auditPartition));
      expect(auditWrites.map((command) => command.name)).toEqual(['TransactWriteItemsCommand']);
      expect(auditWrites[0]!.input).toContain(redelivered.result.data.id); // with the delivery it logs
      const entries = await entriesOf(org.apiKey);
      expect(entries.filter((entry) => entry.requestId === requestIdOf(redelivered.result))).toEqual([
        expect.objectContaining({ operation: 'redeliverWebhook', status: 200, code: null }),
      ]);
    } finally {
      await hook.close();
    }
  });
});
