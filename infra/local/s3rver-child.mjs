/**
 * s3rver in a process of its own, forked by `startS3Local`
 * (infra/local/emulators.ts): the local S3 endpoint is another process, as S3
 * is another service on AWS, so its work (MD5 of every body, file writes,
 * HTTP parsing) is not done on the thread the handlers run on.
 *
 * Plain JavaScript so that it runs the same under `tsx` (npm start, bench)
 * and under vitest's global setup, with no loader.
 *
 * Protocol (IPC, `process.send`):
 * - in `argv[2]`: the JSON options `{ port, directory, buckets, reportRequests }`;
 * - out `{ type: 'listening' }` once s3rver listens;
 * - out, with `reportRequests`, `{ type: 'requests', requests: [[method, url, bytesIn, bytesOut, at], …] }`,
 *   one entry per request served (`at`: epoch milliseconds), batched per event-loop turn;
 * - in `{ type: 'flush' }`: out the requests not yet sent, then `{ type: 'flushed' }`;
 * - the parent disconnecting (it stopped the stack, exited or crashed) ends this process.
 */
import { subscribe } from 'node:diagnostics_channel';
import S3rver from 's3rver';

const options = JSON.parse(process.argv[2]);
const server = new S3rver({
  port: options.port,
  address: '127.0.0.1',
  directory: options.directory,
  silent: true,
  vhostBuckets: false,
  configureBuckets: options.buckets.map((name) => ({ name, configs: [] })),
});

// Ctrl-C reaches the whole process group: the parent stops the stack (its S3 calls included) and then this process,
// as DynamoDB Local's JVM (a background job of its guard, which ignores SIGINT) waits for the parent too.
process.on('SIGINT', () => {});
// The parent's IPC channel is this process's lifeline: when it closes, the parent is gone or stopping.
process.on('disconnect', () => {
  server.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
});

if (options.reportRequests) {
  let pending = [];
  const send = () => {
    if (pending.length === 0) return;
    const requests = pending;
    pending = [];
    if (process.connected) process.send({ type: 'requests', requests });
  };
  // Everything served before the parent's `flush` reaches it before the `flushed` answer (one ordered channel).
  process.on('message', (message) => {
    if (message?.type !== 'flush') return;
    send();
    process.send({ type: 'flushed' });
  });
  subscribe('http.server.response.finish', ({ request, response }) => {
    if (pending.length === 0) setImmediate(send);
    pending.push([
      request.method ?? 'GET',
      request.url ?? '/',
      Number(request.headers['content-length'] ?? 0) || 0,
      Number(response.getHeader('content-length') ?? 0) || 0,
      performance.timeOrigin + performance.now(),
    ]);
  });
}

await server.run();
process.send({ type: 'listening' });
