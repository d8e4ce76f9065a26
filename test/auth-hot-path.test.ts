/**
 * Authentication on the hot path (issue #18 items 1-2), through HTTP against
 * the local API server, DynamoDB Local and the local Step Functions endpoint.
 *
 * The key hash → organization mapping is kept per process (lib/http/auth.ts),
 * and the API server runs in this test process, so the cache is warm after a
 * key's first request here — as in a warm Lambda container. Revocation must
 * still show on the very next request: describe, get and enrich check it on
 * the organization item they read (its list of active keys,
 * lib/organizations/api-keys.ts), list on the key item beside its Query.
 * Round trips are counted by a middleware on the shared SDK clients
 * (lib/aws.ts), which the in-process server uses. The request-rate limiter's
 * own calls (docs/limits.md, lib/http/rate-limit.ts: a lease's UpdateItem when
 * this process's lease of the organization's window is used up, the key's
 * last-use UpdateItem once per minute, and the policy's GetItem when due) are
 * kept apart (`limiter`) and must run in the same wave as the request's first
 * read: they add no round trip. A request served from the lease writes nothing:
 * 1 round trip for get and describe, ≤ 1 write amortized over a lease.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ApiKeyCache } from '../lib/http/auth';
import { createApiHandler } from '../lib/http/pipeline';
import { defineOperation } from '../lib/http/operation';
import { NotFoundError } from '../lib/errors';
import { ddb, sfn } from '../lib/aws';
import { config } from '../lib/config';
import { LEASE_SHARE } from '../lib/http/rate-limit';
import * as keys from '../lib/db/keys';
import { hashApiKey } from '../lib/ids';
import { enrichCampaign } from '../lib/enrichment/launch';
import { reconcileEnrichments } from '../lib/enrichment/reconcile';
import type { WorkflowPort } from '../lib/enrichment/workflow';
import {
  apiKeys,
  campaigns,
  idempotencyRecords,
  launchDependencies,
  ledger,
  organizations,
  reconcileDependencies,
  workflow,
} from '../lib/root';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { serveHandler } from './support/serve-handler';
import { asBeforeTheList } from './support/api-key-lists';
import {
  activeAccounts,
  createApiCampaign,
  DESCRIBE,
  ENRICH,
  GET,
  importAccounts,
  LIST,
  pollUntil,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();

const REVOKED = { data: null, error: { code: 'revoked_api_key', message: 'The API key has been revoked.' } };

/** One SDK request as the counting middleware saw it. */
interface Sent {
  command: string;
  /** Order of the event among starts and ends (to tell parallel from sequential calls). */
  startedAt: number;
  endedAt?: number;
  input: unknown;
}

let clock = 0;
let spyCount = 0;
const removeSpies: (() => void)[] = [];
afterEach(() => {
  for (const remove of removeSpies.splice(0)) remove();
});

/** The request-rate limiter's own calls: its counter (a `…#LIMIT#…` partition) and its policy read (a projection of the limit attributes). */
const isLimiterCall = (command: string, input: unknown) => {
  const text = JSON.stringify(input);
  return (
    text.includes('#LIMIT#') || (command === 'GetItemCommand' && text.includes('ProjectionExpression') && text.includes('limitRequests'))
  );
};

/**
 * Counts every request a shared client sends (each SDK attempt: a retry would
 * show) until the test ends; with `about`, only requests whose input names
 * one of those strings (workflows of other campaigns run in the background).
 * The limiter's calls go to `limiter`, not the list.
 */
function countRequests(client: typeof ddb | ReturnType<typeof sfn>, about?: readonly string[]): Sent[] & { limiter: Sent[] } {
  const sent = Object.assign([] as Sent[], { limiter: [] as Sent[] });
  const name = `authHotPathSpy${++spyCount}`;
  (client.middlewareStack as typeof ddb.middlewareStack).add(
    (next, context) => async (args) => {
      const record: Sent = { command: context.commandName ?? 'unknown', startedAt: ++clock, input: args.input };
      const text = JSON.stringify(args.input);
      if (!about || about.some((s) => text.includes(s))) (isLimiterCall(record.command, args.input) ? sent.limiter : sent).push(record);
      try {
        return await next(args);
      } finally {
        record.endedAt = ++clock;
      }
    },
    { step: 'finalizeRequest', name },
  );
  removeSpies.push(() => client.middlewareStack.remove(name));
  return sent;
}

const commands = (sent: Sent[]) => sent.map((s) => s.command).sort();

/** Every call was sent before any of them answered: one wave, one round trip. */
function expectOneWave(calls: Sent[]): void {
  expect(calls.length).toBeGreaterThan(0);
  expect(Math.max(...calls.map((c) => c.startedAt))).toBeLessThan(Math.min(...calls.map((c) => c.endedAt!)));
}

/** A lease write of the limiter: its organization's request day item (lib/http/request-counts.ts). */
const isLeaseWrite = (call: Sent) => JSON.stringify(call.input).includes('#LIMIT#REQUESTS');
/** A key's last-use write (`lastUsedAt`), at most once per minute per key and process. */
const isKeyUseWrite = (call: Sent) => JSON.stringify(call.input).includes('#LIMIT#KEYUSE');

/**
 * The limiter's own calls (docs/limits.md "How the rate is counted"): none when this process's lease has a request
 * left; else one lease UpdateItem; and one UpdateItem of the key's last use the first time the key is used in a
 * minute here. All of them in the same wave as `first`: they add no round trip. The writes per request amortized
 * over a lease are counted by the test "a lease serves several requests" below.
 */
function expectCountedBeside(sent: Sent[] & { limiter: Sent[] }, first: Sent): void {
  expect(sent.limiter.filter((c) => c.command !== 'UpdateItemCommand')).toEqual([]);
  expect(sent.limiter.filter(isLeaseWrite).length).toBeLessThanOrEqual(1);
  expect(sent.limiter.filter(isKeyUseWrite).length).toBeLessThanOrEqual(1);
  expect(sent.limiter.filter((c) => !isLeaseWrite(c) && !isKeyUseWrite(c))).toEqual([]);
  expectOneWave([first, ...sent.limiter]);
}

/** What names an organization's requests: its partitions and its API key item. */
const aboutOrg = (org: { organizationId: string; apiKey: string }) => [`ORG#${org.organizationId}`, keys.apiKey(hashApiKey(org.apiKey)).pk];

/** The request reads the API key item (in whichever command). */
const readsKey = (sent: Sent, apiKey: string) => JSON.stringify(sent.input).includes(keys.apiKey(hashApiKey(apiKey)).pk);

/** The request reads the organization item (in whichever command): its partition, and its sort key `ORG` on its own. */
const readsOrganization = (sent: Sent, organizationId: string) => {
  const text = JSON.stringify(sent.input);
  const { pk, sk } = keys.organization(organizationId);
  return text.includes(pk) && text.includes(JSON.stringify(sk));
};

/** The organization's list of active keys as stored (hashes), and whether it is complete. */
async function activeKeysOf(organizationId: string): Promise<{ hashes: string[]; complete: boolean }> {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: config.tableName, Key: keys.organization(organizationId), ConsistentRead: true }),
  );
  return { hashes: [...((Item?.activeApiKeys as Set<string> | undefined) ?? [])].sort(), complete: Item?.activeApiKeysSince !== undefined };
}

function expectRevoked(res: ApiResponse): void {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body).toEqual(REVOKED);
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
}

/** An API draft of two enrichable accounts in a new organization (10 credits), read once with its key: the key is known to this process. */
async function draftKnownToThisProcess() {
  const org = await newOrganization({ smbCredits: 10 });
  const list = activeAccounts(uniquePrefix(), 2);
  await importAccounts(list);
  const campaignId = await createApiCampaign(
    api(),
    org.apiKey,
    list.map((a) => a.accountId),
  );
  expect((await call(api(), GET, { apiKey: org.apiKey, body: { campaignId } })).status).toBe(200);
  return { org, campaignId };
}

/** A campaign whose launch charged but whose StartExecution was lost (the launching Lambda died): enriching, no execution. */
async function launchedWithoutExecution(org: { organizationId: string; apiKey: string }) {
  const list = activeAccounts(uniquePrefix(), 2);
  await importAccounts(list);
  const campaignId = await createApiCampaign(
    api(),
    org.apiKey,
    list.map((a) => a.accountId),
  );
  const lost: WorkflowPort = { ...workflow(), start: async (input) => workflow().executionArnOf(input.attemptId) };
  expect((await enrichCampaign({ ...launchDependencies(org.organizationId), workflow: lost }, org.organizationId, campaignId)).status).toBe(
    'enriching',
  );
  const attempt = (await campaigns().get(org.organizationId, campaignId))!.attempt!;
  expect(await workflow().status(attempt.executionArn)).toBe('MISSING');
  return { campaignId, attempt };
}

/** Starts the lost execution (the reconciler, no grace period) and waits for the campaign to settle. */
async function repairAndSettle(org: { organizationId: string; apiKey: string }, campaignId: string) {
  const report = await reconcileEnrichments({ ...reconcileDependencies(), graceSeconds: 0 }, { organizationId: org.organizationId });
  expect(report.repairs.map((r) => [r.campaignId, r.action])).toEqual([[campaignId, 'started']]);
  await pollUntil(
    () => campaigns().get(org.organizationId, campaignId),
    (c) => c?.status === 'enriched',
  );
}

describe('a key revoked between two requests fails on the second, with the key known to this process', () => {
  it.each([
    ['describe', DESCRIBE, () => ({})],
    ['get', GET, (campaignId: string) => ({ campaignId })],
    ['list', LIST, () => ({})],
  ])('%s', async (_label, path, body) => {
    const org = await newOrganization();
    const campaignId = await createApiCampaign(api(), org.apiKey, ['acct_1', 'acct_2']);
    const first = await call(api(), path, { apiKey: org.apiKey, body: body(campaignId) });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await apiKeys().revoke(org.apiKey);
    expectRevoked(await call(api(), path, { apiKey: org.apiKey, body: body(campaignId) }));
  });

  it('enrich on a draft: 401 and nothing written (no lock, no charge, no evaluation)', async () => {
    const { org, campaignId } = await draftKnownToThisProcess();
    const before = await campaigns().get(org.organizationId, campaignId);
    await apiKeys().revoke(org.apiKey);
    const sent = countRequests(ddb, aboutOrg(org));
    expectRevoked(await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } }));
    // One read, and no write but the refusal's audit entry (docs/audit.md), after it.
    const auditWrites = sent.filter((s) => JSON.stringify(s.input).includes(keys.auditEntries(org.organizationId)));
    expect(auditWrites.map((s) => s.command)).toEqual(['BatchWriteItemCommand']);
    expect(commands(sent.filter((s) => !auditWrites.includes(s)))).toEqual(['BatchGetItemCommand']);
    expect(await campaigns().get(org.organizationId, campaignId)).toEqual(before);
    expect((await ledger().audit(org.organizationId))?.balance).toBe(10);
  });

  it('enrich repeated on an enriching campaign', async () => {
    const org = await newOrganization({ smbCredits: 10 });
    const { campaignId } = await launchedWithoutExecution(org);
    const repeat = await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } });
    expect(repeat.data).toMatchObject({ status: 'enriching', credits: { charged: 2, remaining: 8 } });
    await apiKeys().revoke(org.apiKey);
    expectRevoked(await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } }));
    await repairAndSettle(org, campaignId);
  });

  it('an invalid body, a bad cursor or an unknown campaign still answers 401 revoked_api_key (never the other error)', async () => {
    const org = await newOrganization();
    expect((await call(api(), DESCRIBE, { apiKey: org.apiKey })).status).toBe(200);
    await apiKeys().revoke(org.apiKey);
    expectRevoked(await call(api(), DESCRIBE, { apiKey: org.apiKey, body: { unknown: true } }));
    expectRevoked(await call(api(), GET, { apiKey: org.apiKey, body: { campaignId: 'camp_123' } }));
    expectRevoked(await call(api(), GET, { apiKey: org.apiKey, body: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' } }));
    expectRevoked(await call(api(), LIST, { apiKey: org.apiKey, body: { cursor: 'not-a-cursor' } }));
    expectRevoked(await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' } }));
  });

  it('enrich with an Idempotency-Key: 401, and no idempotency record claimed', async () => {
    const org = await newOrganization();
    const campaignId = await createApiCampaign(api(), org.apiKey, ['acct_1']);
    await apiKeys().revoke(org.apiKey);
    expectRevoked(await call(api(), ENRICH, { apiKey: org.apiKey, headers: { 'idempotency-key': 'revoked-1' }, body: { campaignId } }));
    const claim = await idempotencyRecords().claim({
      organizationId: org.organizationId,
      operationId: 'enrichCampaign',
      key: 'revoked-1',
      fingerprint: 'x',
      token: 't',
      requestId: 'r',
      now: Date.now(),
      lockExpiresAt: Date.now() + 1_000,
      ttlSeconds: 60,
    });
    // The key was free: nothing was claimed under the revoked key.
    expect(claim.ok).toBe(true);
  });
});

describe('DynamoDB round trips per operation (the key known to this process)', () => {
  let org: { organizationId: string; apiKey: string };
  let campaignId: string;

  beforeAll(async () => {
    org = await newOrganization({ smbCredits: 10 });
    campaignId = await createApiCampaign(api(), org.apiKey, ['acct_1', 'acct_2']);
  });

  it('the first request of a key in a process reads the key first (it needs its organization), then the data', async () => {
    const fresh = await newOrganization();
    const sent = countRequests(ddb, aboutOrg(fresh));
    expect((await call(api(), DESCRIBE, { apiKey: fresh.apiKey })).status).toBe(200);
    expect(sent.map((s) => s.command)).toEqual(['GetItemCommand', 'GetItemCommand']);
    expect(readsKey(sent[0]!, fresh.apiKey)).toBe(true);
    expect(sent[0]!.endedAt).toBeLessThan(sent[1]!.startedAt);
    // The organization is new to this process: its policy is read beside its first lease (of one request), the
    // key's first use is recorded (lastUsedAt), and its data is read, all in one wave.
    expect(commands(sent.limiter)).toEqual(['GetItemCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
    expect(sent.limiter.filter(isLeaseWrite)).toHaveLength(1);
    expect(sent.limiter.filter(isKeyUseWrite)).toHaveLength(1);
    expectOneWave([sent[1]!, ...sent.limiter]);
  });

  it('a lease serves several requests: 41 describes cost 1 + 4 lease writes per window they span, and a key-use write per minute', async () => {
    const fresh = await newOrganization();
    const sent = countRequests(ddb, aboutOrg(fresh));
    const started = Date.now();
    for (let i = 0; i < 41; i++) expect((await call(api(), DESCRIBE, { apiKey: fresh.apiKey })).status).toBe(200);
    const ended = Date.now();
    // The first lease is of one request (the policy is read beside it); then leases of 5 % of the limit (200 per
    // 10 s: 10 requests). A new window starts new leases: the bound counts the windows the requests spanned.
    const lease = Math.floor(config.rateLimitRequests * LEASE_SHARE);
    const windowMs = config.rateLimitWindowSeconds * 1000;
    const windows = Math.floor(ended / windowMs) - Math.floor(started / windowMs) + 1;
    const minutes = Math.floor(ended / 60_000) - Math.floor(started / 60_000) + 1;
    expect(lease).toBe(10);
    const leaseWrites = sent.limiter.filter(isLeaseWrite).length;
    expect(leaseWrites).toBeGreaterThanOrEqual(1 + Math.ceil(40 / lease));
    expect(leaseWrites).toBeLessThanOrEqual(windows * (1 + Math.ceil(40 / lease)));
    expect(sent.limiter.filter(isKeyUseWrite).length).toBeLessThanOrEqual(minutes);
    // Every other call is the request's own read: one per request.
    expect(sent.filter((c) => c.command === 'GetItemCommand')).toHaveLength(41 + 1);
  });

  it('describe: 1 (one GetItem of the organization, whose list of active keys verifies the key)', async () => {
    const sent = countRequests(ddb, aboutOrg(org));
    const res = await call(api(), DESCRIBE, { apiKey: org.apiKey });
    expect(res.status).toBe(200);
    expect(commands(sent)).toEqual(['GetItemCommand']);
    expect(readsOrganization(sent[0]!, org.organizationId)).toBe(true);
    expect(readsKey(sent[0]!, org.apiKey)).toBe(false);
    expectCountedBeside(sent, sent[0]!);
  });

  it('get: 1 (one BatchGetItem: campaign + organization)', async () => {
    const sent = countRequests(ddb, aboutOrg(org));
    const res = await call(api(), GET, { apiKey: org.apiKey, body: { campaignId } });
    expect(res.status).toBe(200);
    expect(res.data.credits.remaining).toBe(10);
    expect(commands(sent)).toEqual(['BatchGetItemCommand']);
    expect(readsOrganization(sent[0]!, org.organizationId)).toBe(true);
    expect(readsKey(sent[0]!, org.apiKey)).toBe(false);
    expectCountedBeside(sent, sent[0]!);
  });

  it('list: 1 (+1 in parallel: the key GetItem runs beside the Query)', async () => {
    const sent = countRequests(ddb, aboutOrg(org));
    const res = await call(api(), LIST, { apiKey: org.apiKey, body: {} });
    expect(res.status).toBe(200);
    expect(commands(sent)).toEqual(['GetItemCommand', 'QueryCommand']);
    const [query, key] = [sent.find((s) => s.command === 'QueryCommand')!, sent.find((s) => s.command === 'GetItemCommand')!];
    expect(readsKey(key, org.apiKey)).toBe(true);
    // All were sent before any answered.
    expectOneWave([query, key, ...sent.limiter]);
    expectCountedBeside(sent, query);
  });

  it('enrich repeated while enriching: 1 (one BatchGetItem) and its audit entry, no Step Functions call; a lost StartExecution is repaired by the reconciler', async () => {
    const { campaignId: enriching, attempt } = await launchedWithoutExecution(org);
    const dynamo = countRequests(ddb, aboutOrg(org));
    const stepFunctions = countRequests(sfn(), [enriching, attempt.id]);
    const repeat = await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId: enriching } });
    expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
    expect(repeat.data).toMatchObject({ id: enriching, status: 'enriching', credits: { charged: 2, remaining: 8 } });
    // The reads: one BatchGetItem. Then the call's audit entry (docs/audit.md: a write operation, whatever its
    // outcome), written once the answer is decided, after the reads.
    const auditWrites = dynamo.filter((sent) => JSON.stringify(sent.input).includes(keys.auditEntries(org.organizationId)));
    expect(auditWrites.map((sent) => sent.command)).toEqual(['PutItemCommand']);
    expect(commands(dynamo.filter((sent) => !auditWrites.includes(sent)))).toEqual(['BatchGetItemCommand']);
    expect(auditWrites[0]!.startedAt).toBeGreaterThan(dynamo[0]!.endedAt!);
    expect(readsOrganization(dynamo[0]!, org.organizationId)).toBe(true);
    expect(readsKey(dynamo[0]!, org.apiKey)).toBe(false);
    expectCountedBeside(dynamo, dynamo[0]!);
    expect([...stepFunctions]).toEqual([]);
    // The repeat call no longer restarts a lost execution: the reconciler does.
    expect(await workflow().status(attempt.executionArn)).toBe('MISSING');
    await repairAndSettle(org, enriching);
    const done = await waitForStatus(api(), org.apiKey, enriching, 'enriched');
    expect(done.credits.charged).toBeLessThanOrEqual(2);
    const audit = await ledger().audit(org.organizationId);
    expect(audit?.ledgerSum).toBe(audit?.balance);
  });

  it('accounts: 1 (campaign + organization in one BatchGetItem, beside the outcome manifest and the suppression sets)', async () => {
    // An organization of its own: the launch below charges it.
    const own = await newOrganization({ smbCredits: 10 });
    expect((await call(api(), DESCRIBE, { apiKey: own.apiKey })).status).toBe(200);
    const { campaignId: launched } = await launchedWithoutExecution(own);
    const manifest = keys.campaignOutcomes(launched);
    const sent = countRequests(ddb, [...aboutOrg(own), manifest.pk, keys.suppressionSet(own.organizationId).pk]);
    const res = await call(api(), '/v1/campaigns/accounts', { apiKey: own.apiKey, body: { campaignId: launched } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.data.summary).toMatchObject({ pending: 2, found: 0 });
    // The campaign read verifies the key on the organization's list of active keys; the manifest and the delivery
    // policy (docs/privacy.md: the organization's and the global suppression sets) are read beside it.
    expect(commands(sent)).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand', 'GetItemCommand']);
    const campaignRead = sent.find((s) => s.command === 'BatchGetItemCommand' && readsOrganization(s, own.organizationId))!;
    expect(JSON.stringify(campaignRead.input)).toContain(launched);
    expect(sent.some((s) => readsKey(s, own.apiKey))).toBe(false);
    expect(sent.filter((s) => s.command === 'GetItemCommand').map((s) => JSON.stringify(s.input))).toEqual([
      expect.stringContaining(manifest.pk),
    ]);
    expectOneWave(sent);
    expectCountedBeside(sent, campaignRead);
  });

  it('a non-read operation still verifies the key before its use case (create: key GetItem first)', async () => {
    // An organization of its own (no workflow of another test writes in it), its key known to this process.
    const own = await newOrganization();
    expect((await call(api(), DESCRIBE, { apiKey: own.apiKey })).status).toBe(200);
    const sent = countRequests(ddb, aboutOrg(own));
    const res = await call(api(), '/v1/campaigns/create', { apiKey: own.apiKey, body: { name: 'Counted', accountIds: ['acct_1'] } });
    expect(res.status).toBe(200);
    expect(sent[0]!.command).toBe('GetItemCommand');
    expect(readsKey(sent[0]!, own.apiKey)).toBe(true);
    expect(sent[0]!.endedAt).toBeLessThan(sent[1]!.startedAt);
    // Counted beside the key's read, before the body is read.
    expectCountedBeside(sent, sent[0]!);
  });
});

describe("the organization's list of active keys (lib/organizations/api-keys.ts)", () => {
  it('is written with the keys: the first key at creation, a new key added, a revoked one removed, in the same transactions', async () => {
    const org = await newOrganization();
    expect(await activeKeysOf(org.organizationId)).toEqual({ hashes: [hashApiKey(org.apiKey)], complete: true });
    const second = await apiKeys().create(org.organizationId);
    expect(await activeKeysOf(org.organizationId)).toEqual({ hashes: [hashApiKey(org.apiKey), hashApiKey(second)].sort(), complete: true });
    expect(await apiKeys().revoke(org.apiKey)).toBe(true);
    expect(await activeKeysOf(org.organizationId)).toEqual({ hashes: [hashApiKey(second)], complete: true });
    expect((await apiKeys().find(org.apiKey))?.revokedAt).toBeDefined();
    // Revoking again changes nothing; an unknown key is refused.
    expect(await apiKeys().revoke(org.apiKey)).toBe(true);
    expect(await activeKeysOf(org.organizationId)).toEqual({ hashes: [hashApiKey(second)], complete: true });
    expect(await apiKeys().revoke('cek_thisKeyWasNeverIssuedToAnyoneAtAll0')).toBe(false);
    expect((await call(api(), DESCRIBE, { apiKey: second })).status).toBe(200);
  });

  describe('an organization created before the list (no activeApiKeysSince): the key item is read, the answers are the same', () => {
    it('describe and get: one more read (the key item), then 200; once the key is revoked, 401', async () => {
      const org = await newOrganization({ smbCredits: 10 });
      const campaignId = await createApiCampaign(api(), org.apiKey, ['acct_1']);
      await asBeforeTheList(org.organizationId);
      // A key created now is added to the list, which still does not count as complete.
      await apiKeys().create(org.organizationId);
      expect((await activeKeysOf(org.organizationId)).complete).toBe(false);
      for (const [path, body] of [
        [DESCRIBE, {}],
        [GET, { campaignId }],
      ] as const) {
        const sent = countRequests(ddb, aboutOrg(org));
        expect((await call(api(), path, { apiKey: org.apiKey, body })).status).toBe(200);
        expect(sent).toHaveLength(2);
        expect(readsKey(sent[1]!, org.apiKey)).toBe(true);
      }
      await apiKeys().revoke(org.apiKey);
      expectRevoked(await call(api(), DESCRIBE, { apiKey: org.apiKey }));
      expectRevoked(await call(api(), GET, { apiKey: org.apiKey, body: { campaignId } }));
    });

    it('enrich on a draft with a revoked key: 401 and nothing written (the key is read before the first write)', async () => {
      const { org, campaignId } = await draftKnownToThisProcess();
      await asBeforeTheList(org.organizationId);
      const before = await campaigns().get(org.organizationId, campaignId);
      await apiKeys().revoke(org.apiKey);
      const sent = countRequests(ddb, aboutOrg(org));
      expectRevoked(await call(api(), ENRICH, { apiKey: org.apiKey, body: { campaignId } }));
      // No write but the refusal's audit entry (docs/audit.md).
      const auditWrites = sent.filter((s) => JSON.stringify(s.input).includes(keys.auditEntries(org.organizationId)));
      expect(auditWrites.map((s) => s.command)).toEqual(['BatchWriteItemCommand']);
      expect(commands(sent.filter((s) => !auditWrites.includes(s)))).toEqual(['BatchGetItemCommand', 'GetItemCommand']);
      expect(
        readsKey(
          sent.find((s) => s.command === 'GetItemCommand')!,
          org.apiKey,
        ),
      ).toBe(true);
      expect(await campaigns().get(org.organizationId, campaignId)).toEqual(before);
      expect((await ledger().audit(org.organizationId))?.balance).toBe(10);
    });
  });
});

describe('the safety net: an in-read operation whose use case never verifies the key', () => {
  const operation = defineOperation({
    operationId: 'keyCheckSafetyNetTest',
    scope: 'org:read',
    path: '/v1/test/key-check',
    request: z.strictObject({ missing: z.boolean().optional() }),
  });
  let useCaseRuns = 0;
  // The use case ignores context.keyCheck: the pipeline must verify it before answering.
  const handler = createApiHandler(
    operation,
    async (input) => {
      useCaseRuns++;
      if (input.missing) throw new NotFoundError('campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz');
      return { answered: true };
    },
    { findApiKey: (keyHash) => apiKeys().findByHash(keyHash), apiKeyCache: new ApiKeyCache() },
    { keyCheck: 'in-read' },
  );

  const baseUrl = serveHandler(handler, { path: operation.path, functionName: 'KeyCheckSafetyNet' });

  it('reads the key after the use case (one GetItem) and answers; once revoked, neither the data nor the error leaves: 401', async () => {
    const org = await newOrganization();
    expect((await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: {} })).data).toEqual({ answered: true });

    // Known key: the use case runs first, then the pipeline's own key read.
    const sent = countRequests(ddb, aboutOrg(org));
    const warm = await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: {} });
    expect(warm.data).toEqual({ answered: true });
    expect(sent.map((s) => s.command)).toEqual(['GetItemCommand']);
    expect(readsKey(sent[0]!, org.apiKey)).toBe(true);

    // A second key of the organization, known to this process too.
    const second = await apiKeys().create(org.organizationId);
    expect((await call(baseUrl(), operation.path, { apiKey: second, body: {} })).data).toEqual({ answered: true });

    await apiKeys().revoke(org.apiKey);
    await apiKeys().revoke(second);
    const runs = useCaseRuns;
    expectRevoked(await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: {} }));
    expectRevoked(await call(baseUrl(), operation.path, { apiKey: second, body: { missing: true } }));
    // Each key, found revoked, was forgotten by this process: its next request reads it first, the use case never runs.
    expectRevoked(await call(baseUrl(), operation.path, { apiKey: org.apiKey, body: {} }));
    expectRevoked(await call(baseUrl(), operation.path, { apiKey: second, body: { unknown: 1 } }));
    // The use case did run for the first two (its data, then its error, withheld), not after.
    expect(useCaseRuns - runs).toBe(2);
  });
});
