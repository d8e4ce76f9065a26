/**
 * A real webhook receiver on 127.0.0.1 for the tests: it records every
 * request (headers, raw body) and answers from a script, one reply per
 * request in order (the last one repeats), or holds the request unanswered.
 *
 * Every request is judged against the published documents
 * (test/support/webhook-contract.ts: its AsyncAPI message and its OpenAPI
 * `webhooks` entry); `received()` and `close()` fail while any delivery
 * broke them, so every test that receives webhooks also judges them.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from '../enrichment/support';
import { SPAWNED_RUN_MS } from '../support/spawned';
import { judgeDelivery } from '../support/webhook-contract';

/** A request the receiver got. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as sent (signatures are over these bytes). */
  body: string;
}

/** An answer: a status and body, or `hang` (never answer). */
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A running receiver. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** How the deliveries so far break docs/asyncapi.json or docs/openapi.json (empty when none does). */
  violations: string[];
  /** Resolves once `n` requests have come (fails after `timeoutMs`). */
  received(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Replaces the script. */
  script(replies: Reply[]): void;
  close(): Promise<void>;
}

/** Standard Webhooks headers of a request, for `Webhook.verify`. */
export const webhookHeaders = (request: ReceivedRequest): Record<string, string> => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

/** Starts a receiver answering `replies` in order (default: 200 always). */
export async function startReceiver(replies: Reply[] = [{ status: 200, body: 'ok' }]): Promise<Receiver> {
  let script = replies;
  const requests: ReceivedRequest[] = [];
  const violations: string[] = [];
  const judged = () => {
    if (violations.length) throw new Error(`webhook deliveries break the published documents:\n${violations.join('\n')}`);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = script[Math.min(requests.length, script.length - 1)]!;
      const request = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      violations.push(...judgeDelivery(request).map((v) => `request ${requests.length}: ${v}`));
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    violations,
    received: async (n, timeoutMs = SPAWNED_RUN_MS) => {
      await pollUntil(
        async () => requests.length,
        (count) => count >= n,
        { timeoutMs, intervalMs: 50 },
      );
      judged();
      return requests;
    },
    script: (next) => {
      script = next;
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      judged();
    },
  };
}
