/**
 * Diagnostic (session 54, issue #43): the bytes one history read allocates, `getFacts` of a 1,000-account list (500
 * accounts of the history, 500 fresh) against a laid-out history of HISTORY accounts (default 100,000; GROUPS distinct
 * enrichment days, default 10), in this process, with DynamoDB answered by a request handler that replays precomputed
 * answers (so the handler allocates next to nothing and the figure is the SDK calls', the answers' parse and
 * lib/history/store.ts's). Bytes: heap used + array buffers after − before one read, with a young generation large
 * enough that no collection runs during it (a read with one is skipped), median of 9; CPU: mean of 50 reads.
 * With PROFILE=1, a sampling heap profile of 20 reads: KB per read by function (bundle it first for readable lines:
 * `npx esbuild bench/diag/history-read-alloc.ts --bundle --platform=node --format=esm --outfile=bench/tmp/alloc.mjs
 * --banner:js="import { createRequire } from 'module'; const require = createRequire(import.meta.url);"`).
 *
 *   node --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 --import tsx bench/diag/history-read-alloc.ts
 *
 * bench/README.md "The history CPU figures" gives the figures.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PerformanceObserver } from 'node:perf_hooks';
import * as keys from '../../lib/db/keys';
import { addressOf, bucketOf, createAccountHistoryReader, encodeBucket, fingerprintOf } from '../../lib/history/store';

const HISTORY = Number(process.env.HISTORY ?? 100_000);
const LIST = 1000;
const org = 'org-alloc';
const N = Math.max(1, Math.ceil(HISTORY / 65));
const now = Date.now();
const perBucket = new Map<number, Map<string, number>>();
for (let i = 0; i < HISTORY; i++) {
  const f = fingerprintOf(`acct-${i}`);
  const b = bucketOf(addressOf(f), N).bucket;
  let m = perBucket.get(b);
  if (!m) perBucket.set(b, (m = new Map()));
  m.set(f, (now - (i % Number(process.env.GROUPS ?? 10)) * 86_400_000) * 2);
}
const items = new Map<string, string>();
for (const [b, m] of perBucket) {
  const key = keys.accountHistoryBucket(org, b);
  items.set(
    key.pk,
    JSON.stringify({
      pk: { S: key.pk },
      entries: { B: encodeBucket(m, bucketOf(b, N).depth).toString('base64') },
      depth: { N: String(bucketOf(b, N).depth) },
    }),
  );
}
const cache = new Map<string, Buffer>();
const handler = {
  handle: async (request: { body: string }) => {
    let body = cache.get(request.body);
    if (!body) {
      const req = JSON.parse(request.body);
      const table = Object.keys(req.RequestItems)[0]!;
      const found = req.RequestItems[table].Keys.map((k: { pk: { S: string } }) => items.get(k.pk.S)).filter(Boolean);
      body = Buffer.from(`{"Responses":{"${table}":[${found.join(',')}]},"UnprocessedKeys":{}}`);
      cache.set(request.body, body);
    }
    return { response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body } };
  },
  updateHttpClientConfig() {},
  httpHandlerConfigs: () => ({}),
};
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://localhost:1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    requestHandler: handler as never,
  }),
);
const reader = createAccountHistoryReader({ client, tableName: 't', accountLists: { get: async () => [] } });
const list = [...Array.from({ length: 500 }, (_, i) => `acct-${i * 7}`), ...Array.from({ length: 500 }, (_, i) => `fresh-${i}`)];
let gcs = 0;
new PerformanceObserver((l) => (gcs += l.getEntries().length)).observe({ entryTypes: ['gc'] });
const run = () => reader.getFacts(org, list, { buckets: N, recency: true, enrichedAfter: now - 50 * 86_400_000, pending: [] });
let facts = 0;
for (let i = 0; i < 30; i++) facts = (await run()).size;
const samples: number[] = [];
for (let i = 0; i < 9; i++) {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 5));
  const g0 = gcs;
  const m0 = process.memoryUsage();
  await run();
  const m1 = process.memoryUsage();
  if (gcs !== g0) {
    console.log('gc during run, skipped');
    continue;
  }
  samples.push(m1.heapUsed - m0.heapUsed + (m1.arrayBuffers - m0.arrayBuffers));
}
samples.sort((a, b) => a - b);
const cpu0 = process.cpuUsage();
for (let i = 0; i < 50; i++) await run();
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    history: HISTORY,
    buckets: N,
    facts,
    allocKB: samples.map((s) => Math.round(s / 1024)),
    perAccountB: Math.round(samples[samples.length >> 1]! / LIST),
    cpuMsPerRead: +((cpu.user + cpu.system) / 1000 / 50).toFixed(2),
  }),
);
if (process.env.PROFILE) {
  const { Session } = await import('node:inspector/promises');
  const s = new Session();
  s.connect();
  await s.post('HeapProfiler.enable');
  await s.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  for (let i = 0; i < 20; i++) await run();
  const { profile } = (await s.post('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const walk = (n: Node, stack: Set<string>): number => {
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/wt-hist\//, '').replace(/.*node_modules\//, 'nm/')}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + n.selfSize);
    let total = n.selfSize;
    const inner = new Set(stack);
    inner.add(key);
    for (const c of n.children) total += walk(c, inner);
    if (!stack.has(key)) incl.set(key, (incl.get(key) ?? 0) + total);
    return total;
  };
  const all = walk(profile.head, new Set());
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([n, v]) => `${(v / 20 / 1024).toFixed(0).padStart(6)} KB  ${n}`)
      .join('\n');
  console.log(`total/run ${(all / 20 / 1024).toFixed(0)} KB\n-- self\n${top(self, 25)}\n-- inclusive\n${top(incl, 40)}`);
}
