/**
 * A real webhook receiver on 127.0.0.1 for the tests: it records every
 * request (headers, raw body) and answers from a script, one reply per
 * request in order (the last one repeats), or holds the request unanswered.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from '../enrichment/support';

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
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = script[Math.min(requests.length, script.length - 1)]!;
      requests.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    received: async (n, timeoutMs = 30_000) => (await pollUntil(async () => requests.length, (count) => count >= n, { timeoutMs, intervalMs: 50 }), requests),
    script: (next) => {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
