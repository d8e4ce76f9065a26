/**
 * Closed-loop load client, run in its own Node process so that the client's
 * work does not share the event loop of the in-process API server.
 *
 *   node bench/children/load-client.mjs '<json>'
 *
 * JSON: { mode: 'http', url, headers, body, concurrency, requests, warmup }
 *    or { mode: 'getitem', endpoint, table, key, consistentRead, concurrency, requests, warmup }
 *    or { mode: 'query', endpoint, input, concurrency, requests, warmup } (input: a marshalled QueryCommand input)
 *
 * `concurrency` workers each send their next request when the previous one
 * answers, until `requests` have completed (after `warmup` untimed ones).
 * Prints one JSON line: latency percentiles (ms), counts, non-2xx, errors.
 *
 * With `rate` (requests per second) and `seconds` instead (open loop, http
 * mode): one request every 1/rate s for `seconds`, at most `concurrency` in
 * flight (a request due while that many are in flight is not sent). Prints
 * { sent, statuses: {status: count}, windows: {epoch second: count} }.
 *
 * Plain JavaScript on purpose: no TypeScript loader in this process.
 */
import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';

const spec = JSON.parse(process.argv[2]);

let send;
if (spec.mode === 'http') {
  send = async () => {
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    await response.arrayBuffer();
    return response.status;
  };
} else if (spec.mode === 'getitem') {
  const client = new DynamoDBClient({ endpoint: spec.endpoint, region: process.env.AWS_REGION ?? 'us-east-1', maxAttempts: 1 });
  const command = new GetItemCommand({ TableName: spec.table, Key: spec.key, ConsistentRead: spec.consistentRead ?? true });
  send = async () => {
    await client.send(command);
    return 200;
  };
} else if (spec.mode === 'query') {
  const client = new DynamoDBClient({ endpoint: spec.endpoint, region: process.env.AWS_REGION ?? 'us-east-1', maxAttempts: 1 });
  const command = new QueryCommand(spec.input);
  send = async () => {
    await client.send(command);
    return 200;
  };
} else {
  throw new Error(`Unknown mode ${spec.mode}`);
}

async function phase(total, record) {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      const t = performance.now();
      try {
        const status = await send();
        record(performance.now() - t, status, undefined);
      } catch (error) {
        record(performance.now() - t, 0, error);
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
}

if (spec.rate) {
  const statuses = {};
  const windows = {};
  let inFlight = 0;
  let sent = 0;
  const pending = [];
  const start = performance.now();
  const total = Math.round(spec.rate * spec.seconds);
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / spec.rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inFlight >= spec.concurrency) continue;
    inFlight++;
    sent++;
    const second = Math.floor(Date.now() / 1000);
    windows[second] = (windows[second] ?? 0) + 1;
    pending.push(
      send()
        .then((status) => (statuses[status] = (statuses[status] ?? 0) + 1))
        .catch(() => (statuses.error = (statuses.error ?? 0) + 1))
        .finally(() => inFlight--),
    );
  }
  await Promise.all(pending);
  console.log(JSON.stringify({ sent, statuses, windows, wallMs: performance.now() - start }));
  process.exit(0);
}

await phase(spec.warmup ?? 0, () => undefined);
const latencies = [];
let non2xx = 0;
let errors = 0;
let firstError;
const started = performance.now();
await phase(spec.requests, (ms, status, error) => {
  latencies.push(ms);
  if (error) {
    errors++;
    firstError ??= String(error?.message ?? error);
  } else if (status < 200 || status > 299) non2xx++;
});
const wallMs = performance.now() - started;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))];
console.log(
  JSON.stringify({
    count: latencies.length,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    mean: latencies.reduce((s, v) => s + v, 0) / latencies.length,
    min: latencies[0],
    max: latencies.at(-1),
    non2xx,
    errors,
    firstError,
    wallMs,
    requestsPerSecond: (latencies.length / wallMs) * 1000,
  }),
);
