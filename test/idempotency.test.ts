/**
 * Safe retries with `Idempotency-Key` (docs/idempotency.md), through HTTP against
 * the local stack and DynamoDB Local: create, update and enrich honour the
 * key per organization + operation; a finished request replays its saved
 * status and body with `Idempotent-Replayed: true`; another body with the
 * same key is 422; a running one is 409 with `Retry-After: 1`; refusals that
 * are business answers are saved, transient ones release the key.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { idempotencyRecords, ledger, organizations, useWarehouse } from '../lib/root';
import { embeddedWarehouse } from '../lib/root';
import { fingerprintOf } from '../lib/idempotency/key';
import { ENRICHMENT_PENDING_RETRY_SECONDS } from '../lib/enrichment/launch';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  CREATE,
  ENRICH,
  expectError,
  GET,
  importAccounts,
  ledgerOf,
  LIST,
  uniquePrefix,
  useTestWarehouses,
  waitForStatus,
} from './enrichment/support';

const api = useApi();
const useTestWarehouse = useTestWarehouses();
const UPDATE = '/v1/campaigns/update';

const key = () => `key-${randomUUID()}`;
const replayed = (res: ApiResponse) => res.headers.get('idempotent-replayed');

/** Raw POST, to compare response bodies byte for byte. */
async function rawPost(path: string, apiKey: string, idempotencyKey: string | undefined, body: string, contentType = 'application/json') {
  const response = await fetch(`${api()}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': contentType,
      ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function campaignCount(apiKey: string): Promise<number> {
  const res = await call(api(), LIST, { apiKey, body: { limit: 100 } });
  expect(res.status).toBe(200);
  return res.data.campaigns.length;
}

describe('create with Idempotency-Key', () => {
  it('twice with one key: one campaign, identical bodies, the second marked replayed', async () => {
    const { apiKey } = await newOrganization();
    const k = key();
    const body = JSON.stringify({ name: 'Q4 targets', accountIds: ['acc_1', 'acc_2', 'acc_2'] });
    const first = await rawPost(CREATE, apiKey, k, body);
    const second = await rawPost(CREATE, apiKey, k, body);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    // Each answer has its own request ID, even the replay.
    expect(first.headers.get('x-request-id')).toBeTruthy();
    expect(second.headers.get('x-request-id')).toBeTruthy();
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await campaignCount(apiKey)).toBe(1);
  });

  it('the same input as JSON, urlencoded or multipart (a file part) is the same request', async () => {
    const { apiKey } = await newOrganization();
    const k = key();
    const json = await call(api(), CREATE, {
      apiKey,
      headers: { 'idempotency-key': k },
      body: { name: 'Same input', accountIds: ['a1', 'a2'] },
    });
    const form = new URLSearchParams([
      ['name', '  Same input '],
      ['accountIds', 'a1'],
      ['accountIds', 'a2'],
    ]);
    const urlencoded = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, form });
    const multipart = new FormData();
    multipart.set('name', 'Same input');
    multipart.set('accountIdsFile', new Blob(['account_id\na1\na2\n'], { type: 'text/csv' }), 'ids.csv');
    const file = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, multipart });
    expect(json.status).toBe(200);
    for (const res of [urlencoded, file]) {
      expect(res.status).toBe(200);
      expect(replayed(res)).toBe('true');
      expect(res.body).toEqual(json.body);
    }
    expect(await campaignCount(apiKey)).toBe(1);
  });

  it('another body with the same key: 422 idempotency_key_reused, nothing created', async () => {
    const { apiKey } = await newOrganization();
    const k = key();
    expect(
      (await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body: { name: 'First', accountIds: ['x'] } })).status,
    ).toBe(200);
    const other = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body: { name: 'Second', accountIds: ['x'] } });
    expectError(other, 422, 'idempotency_key_reused');
    expect(other.error?.details).toBeUndefined();
    expect(replayed(other)).toBeNull();
    expect(await campaignCount(apiKey)).toBe(1);
  });

  it('the same key from another organization is a separate request', async () => {
    const a = await newOrganization();
    const b = await newOrganization();
    const k = key();
    const body = { name: 'Shared key', accountIds: ['acc_9'] };
    const fromA = await call(api(), CREATE, { apiKey: a.apiKey, headers: { 'idempotency-key': k }, body });
    const fromB = await call(api(), CREATE, { apiKey: b.apiKey, headers: { 'idempotency-key': k }, body });
    expect(fromA.status).toBe(200);
    expect(fromB.status).toBe(200);
    expect(replayed(fromB)).toBeNull();
    expect(fromB.data.id).not.toBe(fromA.data.id);
    expect(await campaignCount(a.apiKey)).toBe(1);
    expect(await campaignCount(b.apiKey)).toBe(1);
    // And the same key on another operation of the same organization is separate too.
    const update = await call(api(), UPDATE, {
      apiKey: a.apiKey,
      headers: { 'idempotency-key': k },
      body: { campaignId: fromA.data.id, name: 'Renamed' },
    });
    expect(update.status).toBe(200);
    expect(replayed(update)).toBeNull();
    expect(update.data.name).toBe('Renamed');
  });

  it('keys expire after IDEMPOTENCY_TTL_SECONDS (a record past its expiry counts as absent)', async () => {
    const { apiKey } = await newOrganization();
    const k = key();
    const body = { name: 'Short-lived key', accountIds: ['acc_1'] };
    process.env.IDEMPOTENCY_TTL_SECONDS = '1';
    try {
      const first = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body });
      const within = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body });
      expect(replayed(within)).toBe('true');
      await new Promise((r) => setTimeout(r, 1_100));
      const after = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body });
      expect(after.status).toBe(200);
      expect(replayed(after)).toBeNull();
      expect(after.data.id).not.toBe(first.data.id);
      expect(await campaignCount(apiKey)).toBe(2);
    } finally {
      delete process.env.IDEMPOTENCY_TTL_SECONDS;
    }
  });
});

describe('the Idempotency-Key header', () => {
  it.each([
    ['empty quotes', '""'],
    ['a space', 'two words'],
    ['a non-ASCII character', 'clé'],
    ['256 characters', 'k'.repeat(256)],
  ])('is refused with 400 invalid_request naming the header: %s', async (_, value) => {
    const { apiKey } = await newOrganization();
    const res = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': value }, body: { name: 'n', accountIds: ['a'] } });
    expectError(res, 400, 'invalid_request');
    expect(res.error?.details.issues).toEqual([expect.stringMatching(/^Idempotency-Key: /)]);
    expect(await campaignCount(apiKey)).toBe(0);
  });

  it('takes 255 visible ASCII characters, and one pair of surrounding double quotes is removed', async () => {
    const { apiKey } = await newOrganization();
    const longest = `${randomUUID()}!#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`.padEnd(255, 'z');
    const body = { name: 'Quoted', accountIds: ['a'] };
    expect((await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': longest }, body })).status).toBe(200);
    const k = key();
    const bare = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': k }, body });
    const quoted = await call(api(), CREATE, { apiKey, headers: { 'idempotency-key': `"${k}"` }, body });
    expect(bare.status).toBe(200);
    expect(replayed(quoted)).toBe('true');
    expect(quoted.body).toEqual(bare.body);
    expect(await campaignCount(apiKey)).toBe(2);
  });

  it('is ignored by read-only operations, even malformed', async () => {
    const { apiKey } = await newOrganization();
    const campaignId = await createApiCampaign(api(), apiKey, ['acc_1']);
    for (let i = 0; i < 2; i++) {
      const res = await call(api(), GET, { apiKey, headers: { 'idempotency-key': 'not a valid key' }, body: { campaignId } });
      expect(res.status).toBe(200);
      expect(replayed(res)).toBeNull();
    }
  });
});

describe('update with Idempotency-Key', () => {
  it('replays a 404 (a business refusal is saved)', async () => {
    const { apiKey } = await newOrganization();
    const k = key();
    const body = { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz', name: 'x' };
    const first = await call(api(), UPDATE, { apiKey, headers: { 'idempotency-key': k }, body });
    const second = await call(api(), UPDATE, { apiKey, headers: { 'idempotency-key': k }, body });
    expectError(first, 404, 'not_found');
    expectError(second, 404, 'not_found');
    expect(replayed(first)).toBeNull();
    expect(replayed(second)).toBe('true');
    expect(second.body).toEqual(first.body);
  });
});

describe('enrich with Idempotency-Key', () => {
  async function fixture(options: { accounts?: number; smbCredits?: number; maxEnrichingAccounts?: number } = {}) {
    const org = await newOrganization({
      smbCredits: options.smbCredits ?? 1_000,
      maxEnrichingAccounts: options.maxEnrichingAccounts ?? 5_000,
    });
    const accounts = activeAccounts(uniquePrefix(), options.accounts ?? 5);
    await importAccounts(accounts);
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      accounts.map((a) => a.accountId),
    );
    return { ...org, campaignId, eligible: accounts.length };
  }

  afterEach(() => useWarehouse(undefined));

  it('ten concurrent calls with one key: one launch, the others replayed or 409 idempotency_key_in_use, one charge', async () => {
    const f = await fixture({ accounts: 20 });
    // Hold the launch evaluation so the burst meets the first call still running.
    const warehouse = useTestWarehouse({ holdStatuses: true });
    const k = key();
    const burst = Array.from({ length: 10 }, () =>
      call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } }),
    );
    await warehouse.called('getAccountStatuses');
    await new Promise((r) => setTimeout(r, 200));
    warehouse.release();
    const responses = await Promise.all(burst);
    const launches = responses.filter((r) => r.status === 200 && replayed(r) === null);
    const replays = responses.filter((r) => r.status === 200 && replayed(r) === 'true');
    const inUse = responses.filter((r) => r.status === 409);
    expect(launches).toHaveLength(1);
    expect(launches.length + replays.length + inUse.length).toBe(10);
    expect(inUse.length).toBeGreaterThan(0);
    for (const r of inUse) {
      expectError(r, 409, 'idempotency_key_in_use');
      expect(r.headers.get('retry-after')).toBe('1');
    }
    for (const r of replays) expect(r.body).toEqual(launches[0]!.body);
    // After the first finished, the key replays.
    const retry = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expect(replayed(retry)).toBe('true');
    expect(retry.body).toEqual(launches[0]!.body);
    const ledger = await ledgerOf(f.organizationId, f.campaignId);
    expect(ledger.entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    expect(await balance(f.organizationId)).toBe(1_000 - f.eligible);
  });

  it('a refused launch (402) replays as 402, even once credits were added', async () => {
    const f = await fixture({ accounts: 5, smbCredits: 3 });
    const k = key();
    const first = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expectError(first, 402, 'insufficient_credits', { available: 3, required: 5, shortfall: 2 });
    await ledger().adjust(f.organizationId, 100);
    const second = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expect(second.status).toBe(402);
    expect(replayed(second)).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await balance(f.organizationId)).toBe(103);
    // A new key is a new request: it launches.
    const fresh = await call(api(), ENRICH, {
      apiKey: f.apiKey,
      headers: { 'idempotency-key': key() },
      body: { campaignId: f.campaignId },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.data.status).toBe('enriching');
  });

  it('a 429 is not saved: the key is released and the same request launches later', async () => {
    const f = await fixture({ accounts: 5, maxEnrichingAccounts: 2 });
    const k = key();
    const first = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expectError(first, 429, 'concurrency_limit_exceeded');
    await organizations().setCapacity(f.organizationId, { maxEnrichingAccounts: 100 });
    const second = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expect(second.status).toBe(200);
    expect(replayed(second)).toBeNull();
    expect(second.data.status).toBe('enriching');
    expect((await ledgerOf(f.organizationId, f.campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('409 enrichment_pending carries a Retry-After of a few seconds and releases the key', async () => {
    const f = await fixture({ accounts: 5 });
    const warehouse = useTestWarehouse({ holdStatuses: true });
    const holder = call(api(), ENRICH, { apiKey: f.apiKey, body: { campaignId: f.campaignId } });
    await warehouse.called('getAccountStatuses');
    const k = key();
    const pending = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expectError(pending, 409, 'enrichment_pending');
    const retryAfter = Number(pending.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // A few seconds (the holder answers within them), not the lock's 60 s lifetime (docs/launch.md).
    expect(retryAfter).toBeLessThanOrEqual(ENRICHMENT_PENDING_RETRY_SECONDS);
    warehouse.release();
    expect((await holder).status).toBe(200);
    // Released: the same key now runs (a repeat call on an enriching campaign answers it, no new charge).
    const again = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expect(again.status).toBe(200);
    expect(replayed(again)).toBeNull();
    expect(again.data.status).toBe('enriching');
    expect((await ledgerOf(f.organizationId, f.campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('a 500 is not saved: the key is released and a retry launches', async () => {
    const f = await fixture({ accounts: 5 });
    const inner = embeddedWarehouse();
    useWarehouse({
      getAccountStatuses: async () => {
        throw new Error('Injected warehouse outage');
      },
      getAccounts: (ids) => inner.getAccounts(ids),
    });
    const k = key();
    const failed = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expectError(failed, 500, 'internal_error');
    useWarehouse(undefined);
    const retry = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': k }, body: { campaignId: f.campaignId } });
    expect(retry.status).toBe(200);
    expect(replayed(retry)).toBeNull();
    await waitForStatus(api(), f.apiKey, f.campaignId, 'enriched');
    expect(await balance(f.organizationId)).toBe(1_000 - f.eligible);
  });

  it('a lock whose holder died frees itself when it lapses (the function timeout); a live one answers 409', async () => {
    const f = await fixture({ accounts: 5 });
    const fingerprint = fingerprintOf({ campaignId: f.campaignId });
    const claimAs = async (k: string, lockExpiresAt: number) =>
      idempotencyRecords().claim({
        organizationId: f.organizationId,
        operationId: 'enrichCampaign',
        key: k,
        fingerprint,
        token: randomUUID(),
        requestId: 'died',
        now: Date.now(),
        lockExpiresAt,
        ttlSeconds: 86_400,
      });
    const live = key();
    expect((await claimAs(live, Date.now() + 60_000)).ok).toBe(true);
    const held = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': live }, body: { campaignId: f.campaignId } });
    expectError(held, 409, 'idempotency_key_in_use');
    expect(held.headers.get('retry-after')).toBe('1');

    const dead = key();
    expect((await claimAs(dead, Date.now() - 1)).ok).toBe(true);
    // Another input cannot take a lapsed lock over: the key still names the first request.
    const other = await call(api(), ENRICH, {
      apiKey: f.apiKey,
      headers: { 'idempotency-key': dead },
      body: { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
    });
    expectError(other, 422, 'idempotency_key_reused');
    const taken = await call(api(), ENRICH, { apiKey: f.apiKey, headers: { 'idempotency-key': dead }, body: { campaignId: f.campaignId } });
    expect(taken.status).toBe(200);
    expect(replayed(taken)).toBeNull();
    expect(taken.data.status).toBe('enriching');
  });
});
