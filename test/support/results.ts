/**
 * Helpers of the tests of results as they arrive (test/results.test.ts,
 * test/results-stream.test.ts): numbered campaigns of several workflow
 * batches, and a warehouse whose batches the test lets through one by one.
 */
import { afterEach } from 'vitest';
import type { Warehouse } from '../../lib/warehouse/warehouse';
import { embeddedWarehouse, useWarehouse } from '../../lib/root';
import { expect } from 'vitest';
import {
  account,
  contact,
  createApiCampaign,
  enrich,
  gate,
  importAccounts,
  NO_ERASURE,
  pollUntil,
  uniquePrefix,
  type Gate,
} from '../enrichment/support';
import { newOrganization } from './api';

afterEach(() => useWarehouse(undefined));

/** Accounts per workflow batch (lib/enrichment/workflow.ts ENRICHMENT_BATCH_SIZE), spelled out: the test builds campaigns of several batches. */
export const BATCH = 1_000;

/** A warehouse whose contact reads (one per workflow batch) each wait for the test to let that batch through. */
export function gatedWarehouse(batchOf: (firstAccountId: string) => number) {
  const inner = embeddedWarehouse();
  const gates = new Map<number, Gate>();
  const gateOf = (batch: number) => gates.get(batch) ?? gates.set(batch, gate()).get(batch)!;
  const arrived = new Set<number>();
  let failing = new Set<number>();
  const warehouse: Warehouse = {
    getAccountStatuses: (ids) => inner.getAccountStatuses(ids),
    async getAccounts(ids, known) {
      const batch = batchOf(ids[0]!);
      arrived.add(batch);
      await gateOf(batch).promise;
      if (failing.has(batch)) throw new Error(`Injected failure of batch ${batch}`);
      return inner.getAccounts(ids, known);
    },
  };
  return {
    warehouse,
    release: (batch: number) => gateOf(batch).open(),
    fail: (batches: number[]) => (failing = new Set(batches)),
    arrived: (n: number) =>
      pollUntil(
        async () => arrived.size,
        (size) => size >= n,
      ),
  };
}

/** `count` active accounts `<prefix>_<i>` (i zero-padded, so the eligible list's order is the index order), one contact each. */
export const numbered = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    account(`${prefix}_${String(i).padStart(5, '0')}`, 'active', [
      contact(`${prefix}_${String(i).padStart(5, '0')}_c`, { mobile: i % 2 === 0 }),
    ]),
  );
export const indexOf = (accountId: string) => Number(accountId.slice(accountId.lastIndexOf('_') + 1));

export interface Item {
  seq: number;
  accountId: string;
  outcome: string;
  account: Record<string, unknown>;
  contacts: Record<string, unknown>[];
}

const STREAM = '/v1/campaigns/results/stream';

/** One object of the stream, and for SSE its event name, id, or that it was a comment. */
export interface Received {
  object: { type: string; seq?: number; lastSeq?: number; complete?: boolean } & Partial<Item>;
  event?: string;
  id?: string;
  comment?: boolean;
}

/** An SSE block (`id:`, `event:`, `data:` lines, or a `:` comment) as a {@link Received}. */
function parseEvent(block: string): Received {
  if (block.startsWith(':')) return { object: { type: block.slice(1).trim() }, comment: true };
  const fields = new Map(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
  return { object: JSON.parse(fields.get('data')!), event: fields.get('event'), ...(fields.has('id') ? { id: fields.get('id') } : {}) };
}

/**
 * Opens the results stream of the stack at `baseUrl` and reads its objects until the closing one, or until `stopAfter` accounts (then drops the
 * connection). Answers the status and headers; for a refusal, the envelope.
 */
export async function openStreamAt(
  baseUrl: string,
  apiKey: string | undefined,
  body: Record<string, unknown>,
  options: { accept?: string; lastEventId?: string; stopAfter?: number; onObject?: (item: Received, accounts: number) => void } = {},
) {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}${STREAM}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...(options.accept ? { accept: options.accept } : {}),
      ...(options.lastEventId !== undefined ? { 'last-event-id': options.lastEventId } : {}),
    },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (!response.ok) return { response, received: [] as Received[], envelope: (await response.json()) as any };
  const sse = options.accept === 'text/event-stream';
  const received: Received[] = [];
  let accounts = 0;
  let buffered = '';
  const decoder = new TextDecoder();
  const separator = sse ? '\n\n' : '\n';
  reading: for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf(separator); end >= 0; end = buffered.indexOf(separator)) {
      const piece = buffered.slice(0, end);
      buffered = buffered.slice(end + separator.length);
      const item = sse ? parseEvent(piece) : { object: JSON.parse(piece) };
      received.push(item);
      if (item.object.type === 'account') accounts++;
      options.onObject?.(item, accounts);
      if (item.object.type === 'end' || item.object.type === 'pause') break reading;
      if (options.stopAfter !== undefined && accounts >= options.stopAfter) break reading;
    }
  }
  // The reader goes away: the connection is dropped, whatever the server still had to write.
  controller.abort();
  return { response, received, envelope: undefined };
}

/**
 * A campaign of `count` numbered accounts (imported into the warehouse) for a fresh organization of 10,000 credits,
 * launched (200 asserted); with `gated`, its workflow reads the warehouse through that gate from the launch on.
 */
export async function launchedNumbered(baseUrl: string, count: number, gated?: { warehouse: Warehouse }) {
  const accounts = numbered(uniquePrefix(), count);
  await importAccounts(accounts, NO_ERASURE);
  if (gated) useWarehouse(gated.warehouse);
  const { apiKey } = await newOrganization({ smbCredits: 10_000 });
  const campaignId = await createApiCampaign(
    baseUrl,
    apiKey,
    accounts.map((a) => a.accountId),
  );
  expect((await enrich(baseUrl, apiKey, campaignId)).status).toBe(200);
  return { apiKey, campaignId, accounts };
}
