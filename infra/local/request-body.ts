/**
 * Reading a request's body on the local stack's HTTP endpoints (infra/local/server.ts, infra/local/lambda-invoke.ts).
 */
import type { IncomingMessage } from 'node:http';

/**
 * The whole body of `req`, or `undefined` once it passes `maxBytes` (the rest is not kept).
 * @param maxBytes - the endpoint's limit, in bytes.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
