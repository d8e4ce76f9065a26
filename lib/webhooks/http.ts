/**
 * One webhook HTTP request (docs/webhooks.md): POST, 15 s for the whole
 * exchange, redirects never followed, the connection made to the addresses
 * the SSRF check approved (lib/webhooks/ssrf.ts), and only the first 1 KB of
 * the answer read.
 */
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type ResolvedAddress } from './ssrf';

/** Longest exchange, request sent to answer read, in milliseconds. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** Bytes of the answer kept in the delivery log. */
export const RESPONSE_PREFIX_BYTES = 1_024;

/** What came back: the status and the start of the body, or the error that ended the exchange. */
export interface HttpOutcome {
  /** HTTP status, or null when no answer came (timeout, refused connection, TLS failure). */
  status: number | null;
  /** First {@link RESPONSE_PREFIX_BYTES} bytes of the answer's body, as UTF-8 text. */
  body: string;
  /** Milliseconds from sending the request to the end of what was read (or the error). */
  latencyMs: number;
  /** Why no answer came, e.g. `timeout after 15 s`, `ECONNREFUSED`. */
  error: string | null;
}

/** Sends one webhook request. Never throws: every failure is an {@link HttpOutcome}. */
export async function postWebhook(request: {
  url: URL;
  addresses: readonly ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs?: number;
}): Promise<HttpOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = request.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const client = request.url.protocol === 'https:' ? https : http;
  return new Promise<HttpOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<HttpOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: elapsed() });
    };
    const req = client.request(
      request.url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(request.addresses) as never,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          finish({
            status: res.statusCode ?? null,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX_BYTES).toString('utf8'),
            error: null,
          });
          req.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_PREFIX_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_PREFIX_BYTES) done();
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, body: '', error: `timeout after ${timeoutMs / 1000} s` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ status: null, body: '', error: error.code ?? error.message }));
    req.end(request.body);
  });
}
