/**
 * The results stream (docs/results.md "The stream"), end to end through HTTP
 * against the local stack (DynamoDB Local, the S3 endpoint, the workflow):
 * JSON Lines and Server-Sent Events read to `end` give seq 1..N once each; a
 * reader racing the workflow that drops its connection at any point and
 * resumes with `Last-Event-ID` reads exactly the eligible accounts; the
 * stream pauses at its longest duration with keep-alives before; refusals
 * come before the first byte as the envelope; the client's
 * `results(…, { stream: true })` resumes by itself after a dropped connection.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCampaignEnrichmentClient } from '../client/index';
import { useWarehouse } from '../lib/root';
import { SETTINGS } from '../lib/config';
import { call, newOrganization, useApi } from './support/api';
import { createApiCampaign, enrich, expectError, importAccounts, uniquePrefix, waitForStatus } from './enrichment/support';
import { BATCH, gatedWarehouse, indexOf, launchedNumbered, numbered, openStreamAt, type Item, type Received } from './support/results';

const api = useApi();
const STREAM = '/v1/campaigns/results/stream';

/** Opens the stream on this file's stack (test/support/results.ts {@link openStreamAt}). */
const openStream = (apiKey: string | undefined, body: Record<string, unknown>, options?: Parameters<typeof openStreamAt>[3]) =>
  openStreamAt(api(), apiKey, body, options);

const accountsOf = (received: Received[]) => received.filter((r) => r.object.type === 'account').map((r) => r.object as unknown as Item);
const seqs1toN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('POST /v1/campaigns/results/stream', () => {
  it('JSON Lines (the default) and Server-Sent Events read to `end` give seq 1..N once each, the page’s accounts, the attempt in Attempt-Id', async () => {
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 200);
    const jsonl = await openStream(apiKey, { campaignId });
    expect(jsonl.response.status).toBe(200);
    expect(jsonl.response.headers.get('content-type')).toMatch(/^application\/jsonl/);
    expect(jsonl.response.headers.get('x-request-id')).toBeTruthy();
    const items = accountsOf(jsonl.received);
    expect(items.map((item) => item.seq)).toEqual(seqs1toN(accounts.length));
    expect(new Set(items.map((item) => item.accountId)).size).toBe(accounts.length);
    expect(jsonl.received.at(-1)!.object).toEqual({ type: 'end', lastSeq: accounts.length, complete: true });

    await waitForStatus(api(), apiKey, campaignId, 'enriched');
    const page = await call(api(), '/v1/campaigns/results', { apiKey, body: { campaignId, limit: 1_000 } });
    expect(jsonl.response.headers.get('attempt-id')).toBe(page.data.attemptId);
    // The same reader as the page: the same objects, with their type.
    expect(items.slice(0, 1_000)).toEqual(page.data.accounts.map((a: Item) => ({ type: 'account', ...a })));

    const ndjson = await openStream(apiKey, { campaignId, afterSeq: accounts.length - 5 }, { accept: 'application/x-ndjson' });
    expect(ndjson.response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(accountsOf(ndjson.received).map((item) => item.seq)).toEqual(seqs1toN(accounts.length).slice(-5));

    const sse = await openStream(apiKey, { campaignId }, { accept: 'text/event-stream' });
    expect(sse.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sse.received.filter((r) => r.event === 'account');
    expect(events.map((r) => Number(r.id))).toEqual(seqs1toN(accounts.length));
    expect(events.map((r) => r.object.seq)).toEqual(seqs1toN(accounts.length));
    expect(sse.received.at(-1)).toMatchObject({ event: 'end', object: { type: 'end', lastSeq: accounts.length, complete: true } });
  });

  it('a reader racing the workflow that drops its connection at any point and resumes with Last-Event-ID reads exactly the eligible accounts: seq 1..N, no gap, no duplicate', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 1_200 }), { minLength: 6, maxLength: 6 }), async (disconnectAfter) => {
        const gated = gatedWarehouse((id) => Math.floor(Number(id.slice(id.lastIndexOf('_') + 1)) / BATCH));
        const { apiKey, campaignId, accounts } = await launchedNumbered(api(), 2 * BATCH + 300, gated);
        await gated.arrived(3);
        const sizes = [BATCH, BATCH, 300];
        let released = 0;
        let releasedAccounts = 0;
        const releaseNext = () => {
          if (released < sizes.length) {
            gated.release(released);
            releasedAccounts += sizes[released++]!;
          }
        };
        releaseNext();
        const seen: Item[] = [];
        let lastEventId: string | undefined;
        let attemptId: string | undefined;
        for (let connection = 0; ; connection++) {
          // Drop after the drawn number of accounts, or once everything let through so far was read (then the next batch is let through).
          const stopAfter =
            released < sizes.length
              ? Math.min(disconnectAfter[connection % disconnectAfter.length]!, releasedAccounts - seen.length)
              : undefined;
          const read = await openStream(apiKey, { campaignId }, { accept: 'text/event-stream', lastEventId, stopAfter });
          expect(read.response.status, JSON.stringify(read.envelope)).toBe(200);
          attemptId ??= read.response.headers.get('attempt-id')!;
          expect(read.response.headers.get('attempt-id')).toBe(attemptId);
          const events = read.received.filter((r) => r.event === 'account');
          seen.push(...events.map((r) => r.object as unknown as Item));
          if (events.length > 0) lastEventId = events.at(-1)!.id;
          if (read.received.at(-1)?.object.type === 'end') break;
          if (seen.length >= releasedAccounts) releaseNext();
          expect(connection).toBeLessThan(200);
        }
        expect(seen.map((item) => item.seq)).toEqual(seqs1toN(accounts.length));
        expect(seen.map((item) => item.accountId).sort()).toEqual(accounts.map((a) => a.accountId).sort());
      }),
      { numRuns: 3, endOnFailure: true },
    );
  });

  it('writes keep-alives while nothing arrives and closes with `pause` at its longest duration (a small one set for the test); the reader resumes from its lastSeq', async () => {
    const saved = {
      max: process.env[SETTINGS.resultsStreamMaxSeconds.env],
      keepAlive: process.env[SETTINGS.resultsStreamKeepAliveSeconds.env],
    };
    process.env[SETTINGS.resultsStreamMaxSeconds.env] = '1';
    process.env[SETTINGS.resultsStreamKeepAliveSeconds.env] = '0.2';
    try {
      const gated = gatedWarehouse(() => 0);
      const { apiKey, campaignId } = await launchedNumbered(api(), 30, gated);
      await gated.arrived(1);
      const idle = await openStream(apiKey, { campaignId });
      expect(idle.received.filter((r) => r.object.type === 'keepalive').length).toBeGreaterThanOrEqual(1);
      expect(idle.received.at(-1)!.object).toEqual({ type: 'pause', lastSeq: 0, complete: false });
      const sse = await openStream(apiKey, { campaignId }, { accept: 'text/event-stream' });
      expect(sse.received.some((r) => r.comment && r.object.type === 'keepalive')).toBe(true);
      expect(sse.received.at(-1)).toMatchObject({ event: 'pause', object: { type: 'pause', lastSeq: 0, complete: false } });
      gated.release(0);
      await waitForStatus(api(), apiKey, campaignId, 'enriched');
      const resumed = await openStream(apiKey, { campaignId, afterSeq: 0 });
      expect(accountsOf(resumed.received).map((item) => item.seq)).toEqual(seqs1toN(30));
      expect(resumed.received.at(-1)!.object).toEqual({ type: 'end', lastSeq: 30, complete: true });
    } finally {
      for (const [name, value] of [
        [SETTINGS.resultsStreamMaxSeconds.env, saved.max],
        [SETTINGS.resultsStreamKeepAliveSeconds.env, saved.keepAlive],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('a failed attempt pauses an open stream at the last seq it wrote; the resume is refused 409; after a new launch the old position is told (another Attempt-Id, or 409 beyond the new attempt), never mixed silently', async () => {
    const saved = process.env[SETTINGS.resultsStreamKeepAliveSeconds.env];
    // The stream looks at the campaign once per keep-alive: a short one, so the failure is seen at once.
    process.env[SETTINGS.resultsStreamKeepAliveSeconds.env] = '0.2';
    try {
      const gated = gatedWarehouse((id) => Math.floor(indexOf(id) / BATCH));
      const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 200, gated);
      await gated.arrived(2);
      gated.release(0);
      let firstBatchRead!: () => void;
      const firstBatch = new Promise<void>((resolve) => (firstBatchRead = resolve));
      const streaming = openStream(apiKey, { campaignId }, { onObject: (_item, read) => read === BATCH && firstBatchRead() });
      await firstBatch;
      // The first batch is read; the second fails: the attempt fails and its results go with it.
      gated.fail([1]);
      gated.release(1);
      const read = await streaming;
      const oldAttempt = read.response.headers.get('attempt-id');
      expect(oldAttempt).toBeTruthy();
      expect(accountsOf(read.received).map((item) => item.seq)).toEqual(seqs1toN(BATCH));
      expect(read.received.at(-1)!.object).toEqual({ type: 'pause', lastSeq: BATCH, complete: false });
      await waitForStatus(api(), apiKey, campaignId, 'draft', 60_000);

      // Resuming the ended attempt is refused as the page refuses it, by body or by Last-Event-ID.
      const refused = await openStream(apiKey, { campaignId, afterSeq: BATCH });
      expect(refused.response.status).toBe(409);
      expect(refused.envelope.error.code).toBe('results_not_ready');
      const refusedSse = await openStream(apiKey, { campaignId }, { accept: 'text/event-stream', lastEventId: String(BATCH) });
      expect(refusedSse.response.status).toBe(409);

      useWarehouse(undefined);
      expect((await enrich(api(), apiKey, campaignId)).status).toBe(200);
      await waitForStatus(api(), apiKey, campaignId, 'enriched', 60_000);
      // The old position within the new attempt's accounts: answered, but under another Attempt-Id (its seqs start at 1).
      const told = await openStream(apiKey, { campaignId }, { accept: 'text/event-stream', lastEventId: String(BATCH) });
      expect(told.response.status).toBe(200);
      const newAttempt = told.response.headers.get('attempt-id');
      expect(newAttempt).toBeTruthy();
      expect(newAttempt).not.toBe(oldAttempt);
      // Beyond the new attempt's accounts: it cannot be this attempt's position, refused.
      const beyond = await openStream(apiKey, { campaignId, afterSeq: accounts.length + 1 });
      expect(beyond.response.status).toBe(409);
      expect(beyond.envelope.error.code).toBe('results_not_ready');
      // Read from 0, the new attempt gives 1..N once each.
      const fresh = await openStream(apiKey, { campaignId });
      expect(fresh.response.headers.get('attempt-id')).toBe(newAttempt);
      expect(accountsOf(fresh.received).map((item) => item.seq)).toEqual(seqs1toN(accounts.length));
      expect(fresh.received.at(-1)!.object).toEqual({ type: 'end', lastSeq: accounts.length, complete: true });
    } finally {
      if (saved === undefined) delete process.env[SETTINGS.resultsStreamKeepAliveSeconds.env];
      else process.env[SETTINGS.resultsStreamKeepAliveSeconds.env] = saved;
    }
  }, 180_000);

  it('a suppression answered while the stream is open keeps its contact out of the accounts read after it (docs/privacy.md: never delivered again, not by the stream)', async () => {
    const gated = gatedWarehouse((id) => Math.floor(indexOf(id) / BATCH));
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 200, gated);
    await gated.arrived(2);
    gated.release(0);
    const suppressedIndex = BATCH + 5;
    const suppressedContact = accounts[suppressedIndex]!.contacts[0]!.contactId;
    const keptContact = accounts[BATCH + 6]!.contacts[0]!.contactId;
    let firstBatchRead!: () => void;
    const firstBatch = new Promise<void>((resolve) => (firstBatchRead = resolve));
    const streaming = openStream(apiKey, { campaignId }, { onObject: (_item, read) => read === BATCH && firstBatchRead() });
    // The stream is open and has written the first batch; the second becomes readable only after the suppression is answered.
    await firstBatch;
    const suppressed = await call(api(), '/v1/privacy/suppressions/create', {
      apiKey,
      body: { identifiers: [{ type: 'contact_id', value: suppressedContact }], reason: 'opt_out' },
    });
    expect(suppressed.status).toBe(200);
    gated.release(1);
    const read = await streaming;
    const items = accountsOf(read.received);
    expect(items.map((item) => item.seq)).toEqual(seqs1toN(accounts.length));
    expect(read.received.at(-1)!.object).toEqual({ type: 'end', lastSeq: accounts.length, complete: true });
    const contactsOf = (index: number) => JSON.stringify(items.find((item) => item.accountId === accounts[index]!.accountId)!.contacts);
    expect([contactsOf(suppressedIndex).includes(suppressedContact), contactsOf(BATCH + 6).includes(keptContact)]).toEqual([false, true]);
  }, 120_000);

  it('refuses before the first byte with the envelope and its status: draft 409, another organization 404, no key 401, a bad Last-Event-ID or field 400 naming it', async () => {
    const prefix = uniquePrefix();
    const accounts = numbered(prefix, 3);
    await importAccounts(accounts);
    const { apiKey } = await newOrganization({ smbCredits: 100 });
    const other = await newOrganization({ smbCredits: 100 });
    const campaignId = await createApiCampaign(
      api(),
      apiKey,
      accounts.map((a) => a.accountId),
    );
    const refused = async (key: string | undefined, body: Record<string, unknown>, status: number, code: string, options = {}) => {
      const read = await openStream(key, body, options);
      expect(read.response.status).toBe(status);
      expect(read.response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(read.response.headers.get('x-request-id')).toBeTruthy();
      expect(read.envelope).toMatchObject({ data: null, error: { code } });
      return read.envelope;
    };
    await refused(apiKey, { campaignId }, 409, 'results_not_ready', { accept: 'text/event-stream' });
    await refused(other.apiKey, { campaignId }, 404, 'not_found');
    await refused(undefined, { campaignId }, 401, 'invalid_api_key');
    expect(JSON.stringify(await refused(apiKey, { campaignId }, 400, 'invalid_request', { lastEventId: 'abc' }))).toContain(
      'last-event-id',
    );
    for (const field of ['limit', 'waitSeconds']) {
      expect(JSON.stringify(await refused(apiKey, { campaignId, [field]: 1 }, 400, 'invalid_request'))).toContain(field);
    }
    expectError(await call(api(), STREAM, { apiKey, body: { campaignId, afterSeq: -1 } }), 400, 'invalid_request');
  });

  it("the client's results(campaignId, {stream: true}) reads every account once, in seq order, while the campaign enriches, and resumes by itself after dropped connections", async () => {
    const gated = gatedWarehouse((id) => Math.floor(Number(id.slice(id.lastIndexOf('_') + 1)) / BATCH));
    const { apiKey, campaignId, accounts } = await launchedNumbered(api(), BATCH + 100, gated);
    await gated.arrived(2);
    // The first two stream connections drop after their first chunk of bytes; the client reconnects from the last seq it handed out.
    let connections = 0;
    const dropping = async (request: Request) => {
      const response = await fetch(request);
      if (new URL(request.url).pathname !== STREAM || !response.ok || ++connections > 2) return response;
      const reader = response.body!.getReader();
      let chunks = 0;
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await reader.read();
          if (next.done) return controller.close();
          if (chunks++ >= 1) {
            await reader.cancel();
            return controller.error(new TypeError('terminated: other side closed'));
          }
          controller.enqueue(next.value);
        },
      });
      return new Response(cut, { status: response.status, headers: response.headers });
    };
    const client = createCampaignEnrichmentClient({ baseUrl: api(), apiKey, fetch: dropping, initialBackoffMs: 10 });
    const seqs: number[] = [];
    const ids: string[] = [];
    gated.release(0);
    for await (const item of client.results(campaignId, { stream: true })) {
      seqs.push(item.seq);
      ids.push(item.accountId);
      expect(item).not.toHaveProperty('type');
      if (seqs.length === 1) gated.release(1);
    }
    expect(seqs).toEqual(seqs1toN(accounts.length));
    expect(ids.slice().sort()).toEqual(accounts.map((a) => a.accountId).sort());
    expect(connections).toBeGreaterThanOrEqual(3);
  });
});
