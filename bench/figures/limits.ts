/**
 * Figures of the limits per organization (issue #30, docs/limits.md):
 *
 * - another organization's warm p50 (describe, over HTTP) while one
 *   organization floods at 10× its limit, against its quiet p50 in the same
 *   run (≤ 1.5×); the flood is bounded (a fixed rate, a fixed time, at most
 *   64 requests in flight) and runs in this process, beside the server;
 * - the share of the flood beyond the limit answered 429 `rate_limited`
 *   (≥ 99 %);
 * - the CPU of one refusal, the describe handler invoked in-process as Lambda
 *   does, against authentication alone (`authenticate` and the key check of
 *   lib/http/auth.ts, warm cache): ≤ 1.2×;
 * - the limiter's DynamoDB cost per request: the write units of its calls
 *   (lease writes and the usage months written with them) per describe over
 *   half a window of one organization at the default limit (≤ 1 WCU), the
 *   most of any one request, and the cost per million requests;
 * - the worst create on hostile uploaded files (one 50 MB line, 12,000 lines
 *   of 4,097 bytes, 50 MB of random bytes): a 400, in ≤ 1 s of CPU per 10 MB.
 *
 * The round trips of get and describe with the limiter on are the
 * `round-trips` module's (budget 1: the counter goes in the first wave).
 */
import { randomBytes } from 'node:crypto';
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { post, postCounted, PATHS } from '../lib/api';
import { benchOrganization } from '../lib/fixtures';
import { inProcessOperation } from '../lib/in-process';
import { runRateLoad } from '../lib/children';
import { asStandardLambdaEnvironment } from '../../infra/local/lambda-context';
import { round, summarize } from '../lib/stats';
import { apiKeys, limits, organizations } from '../../lib/root';
import { ApiKeyCache, authenticate } from '../../lib/http/auth';
import { describeLimitsOperation } from '../../lib/organizations/schema';
import { MAX_LINE_BYTES } from '../../lib/account-lists/account-list';
import { config } from '../../lib/config';

/** On-demand write request units, US East (N. Virginia), dollars per million (as bench/lib/cost.ts prices them). */
const DOLLARS_PER_MILLION_WRU = 0.625;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh organization limited to `requests` per `windowSeconds` (the operator's override, before its first request). */
async function limitedOrganization(name: string, requests: number, windowSeconds: number) {
  const { organization, apiKey } = await organizations().create({
    name,
    smbCredits: 10,
    researchAgentCredits: 0,
    maxEnrichingAccounts: 10,
  });
  await limits().setLimits(organization.id, { requests, windowSeconds });
  return { organizationId: organization.id, apiKey };
}

/** CPU seconds (user + system) of this process while `fn` runs. */
async function cpuSecondsOf(fn: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

export async function runLimits(
  results: Results,
  stack: BenchStack,
  options: { floodSeconds: number; samples: number; cpuRuns: number; hostileBytes: number },
): Promise<void> {
  const group = 'limits per organization';

  // ------------------------------------------------------------------ flood
  const victim = await benchOrganization('Bench limits victim');
  const limit = 20;
  const flooder = await limitedOrganization('Bench limits flooder', limit, 1);
  const floodRate = 10 * limit; // requests per second: 10× the limit
  for (let i = 0; i < 20; i++) await post(stack, PATHS.describe, victim.apiKey, {}); // warm
  const quiet: number[] = [];
  for (let i = 0; i < options.samples; i++) quiet.push((await post(stack, PATHS.describe, victim.apiKey, {})).ms);

  // The flood comes from a child process (its client work is not this process's), open loop at 10× the limit.
  const flood = runRateLoad({
    mode: 'http',
    url: `${stack.apiUrl}${PATHS.describe}`,
    headers: { authorization: `Bearer ${flooder.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
    rate: floodRate,
    seconds: options.floodSeconds,
    concurrency: 64,
  });
  const loaded: number[] = [];
  const floodStarted = performance.now();
  await sleep(500); // the child is up and the flood under way
  while (performance.now() - floodStarted < options.floodSeconds * 1000 && loaded.length < options.samples) {
    loaded.push((await post(stack, PATHS.describe, victim.apiKey, {})).ms);
  }
  const flooded = await flood;
  const statuses = flooded.statuses;
  const sent = flooded.sent;
  const windows = Object.keys(flooded.windows);

  const quietP50 = summarize(quiet).p50;
  const loadedP50 = summarize(loaded).p50;
  results.add({
    group,
    name: "another organization's warm p50 (describe) while one floods at 10× its limit",
    value: round(loadedP50 / quietP50),
    unit: '× its quiet p50',
    budget: { op: '<=', limit: 1.5, text: '≤ 1.5× its quiet p50, same run' },
    extra: {
      'quiet p50 (ms)': round(quietP50),
      'during the flood p50 (ms)': round(loadedP50),
      'samples (quiet, flood)': `${quiet.length}, ${loaded.length}`,
      flood: `${floodRate} requests/s for ${options.floodSeconds} s against a limit of ${limit} per 1 s window; ${sent} sent`,
    },
  });

  const served = statuses['200'] ?? 0;
  // A 429 of the flooder's describe is the API's rate_limited (the local server has no stage throttle).
  const refused = statuses['429'] ?? 0;
  const allowed = limit * windows.length;
  const excess = Math.max(1, sent - allowed);
  results.add({
    group,
    name: 'share of the flood beyond the limit refused with 429 rate_limited',
    value: round((100 * refused) / excess, 1),
    unit: '%',
    budget: { op: '>=', limit: 99, text: '≥ 99 % of what exceeds the limit' },
    extra: {
      sent,
      'answered 200': served,
      'answered 429': refused,
      'other answers':
        Object.entries(statuses)
          .filter(([key]) => key !== '200' && key !== '429')
          .map(([key, n]) => `${key}: ${n}`)
          .join(', ') || 'none',
      'allowed (limit × windows touched)': `${limit} × ${windows.length} = ${allowed}`,
    },
    note: 'the requests of each 1 s window past its 20 are the excess; a served request beyond that would be a leak of the limit',
  });

  // ---------------------------------------------------------- CPU per refusal
  // The handler as Lambda runs it (one request per process at a time), as the latency module invokes it.
  await asStandardLambdaEnvironment(async () => {
    // The deployment's default limit, over a window longer than the module: a process counts the refusals it answers and
    // writes them (usage, docs/limits.md "How the rate is counted") once per lease's worth (5 % of the limit), as in
    // production. (A limit of 1 made that every refusal: two UpdateItems each, 2.3× the authentication in the last run.)
    const refusedLimit = config.rateLimitRequests;
    const refusedOrg = await limitedOrganization('Bench limits refused', refusedLimit, 3_600);
    const describe = await inProcessOperation(PATHS.describe, refusedOrg.apiKey, {});
    // The window's requests, then the refusals this process remembers.
    let admitted = 0;
    for (;;) {
      const answer = await describe.invoke().then(
        () => 200,
        (error: Error) => {
          if (!error.message.includes('answered 429')) throw error;
          return 429;
        },
      );
      if (answer === 429) break;
      if (++admitted > refusedLimit) throw new Error(`${admitted} requests admitted against a limit of ${refusedLimit}`);
    }
    const refusal = async () => {
      await describe
        .prepare()()
        .then(
          () => {
            throw new Error('expected a refusal');
          },
          (error: Error) => {
            if (!error.message.includes('answered 429')) throw error;
          },
        );
    };
    await refusal();
    const cache = new ApiKeyCache();
    const header = `Bearer ${refusedOrg.apiKey}`;
    const findApiKey = (keyHash: string) => apiKeys().findByHash(keyHash);
    const authenticationAlone = async () => {
      const check = await authenticate(header, findApiKey, cache);
      await check.ensure();
    };
    await authenticationAlone();
    const perCall = async (fn: () => Promise<void>) => {
      for (let i = 0; i < 20; i++) await fn(); // warm
      return (
        (await cpuSecondsOf(async () => {
          for (let i = 0; i < options.cpuRuns; i++) await fn();
        })) / options.cpuRuns
      );
    };
    // Interleaved halves, so drift of the machine's load falls on both.
    const refusalCpu: number[] = [];
    const authCpu: number[] = [];
    for (let half = 0; half < 4; half++) {
      authCpu.push(await perCall(authenticationAlone));
      refusalCpu.push(await perCall(refusal));
    }
    const refusalUs = summarize(refusalCpu).p50 * 1e6;
    const authUs = summarize(authCpu).p50 * 1e6;
    results.add({
      group,
      name: 'CPU of one refusal (429 rate_limited), in-process',
      value: round(refusalUs / authUs),
      unit: '× authentication alone',
      budget: { op: '<=', limit: 1.2, text: '≤ 1.2× the authentication alone' },
      extra: {
        'refusal (µs CPU)': round(refusalUs, 0),
        'authentication alone (µs CPU)': round(authUs, 0),
        runs: `${options.cpuRuns} × 4 each`,
      },
      note:
        `the describe handler as Lambda invokes it, for an organization at its limit (${refusedLimit} per hour, the deployment's default count) that this process already saw refused in the window ` +
        "(no read, no counter write; the refusals' usage counts written once per lease's worth, 5 % of the limit; the envelope, the RateLimit fields), against lib/http/auth.ts authenticate + the key check (one GetItem) with a warm key cache",
    });
  });

  // ------------------------------------------------------------ limiter cost
  // Per request at steady load (issue #43: the limiter's writes ride with the usage counts, so a request admitted from
  // a lease writes nothing and the one that takes the next lease carries the counts): a fresh organization at the
  // deployment's default limit sends half of it, one request after another, after a warm-up of its first lease.
  const steady = await limitedOrganization('Bench limits cost', config.rateLimitRequests, config.rateLimitWindowSeconds);
  const steadyRequests = Math.max(1, Math.floor(config.rateLimitRequests / 2));
  for (let i = 0; i < 5; i++) await post(stack, PATHS.describe, steady.apiKey, {}); // first lease, policy read
  const perRequest: number[] = [];
  const writeCalls = new Map<string, number>();
  for (let i = 0; i < steadyRequests; i++) {
    const counted = await postCounted(stack, PATHS.describe, steady.apiKey, {});
    if (counted.status !== 200) throw new Error(`describe answered ${counted.status} at half the limit`);
    const writes = counted.scope.calls.filter((c) => c.kind === 'limiter' && (c.wru ?? 0) > 0);
    perRequest.push(writes.reduce((total, c) => total + (c.wru ?? 0), 0));
    const shape = writes.map((c) => c.command).join(' ∥ ');
    if (shape) writeCalls.set(shape, (writeCalls.get(shape) ?? 0) + 1);
  }
  const wru = perRequest.reduce((a, b) => a + b, 0) / perRequest.length;
  const limitsRead = await postCounted(stack, describeLimitsOperation.path, victim.apiKey, {});
  results.add({
    group,
    name: 'DynamoDB cost of the limiter per request, one organization at half its limit',
    value: round(wru, 2),
    unit: 'WCU per request',
    budget: { op: '<=', limit: 1, text: '≤ 1 WCU per request (one write, as before the leases)' },
    extra: {
      requests: `${steadyRequests} describes over HTTP, one after another (the default limit: ${config.rateLimitRequests} per ${config.rateLimitWindowSeconds} s)`,
      'requests with a limiter write': perRequest.filter((n) => n > 0).length,
      'most write units of one request': Math.max(...perRequest),
      'writes of those requests': [...writeCalls].map(([shape, n]) => `${n} × ${shape}`).join('; ') || 'none',
      'dollars per million requests (on demand)': round(wru * DOLLARS_PER_MILLION_WRU, 3),
      'policy read': 'one GetItem of the organization item (projection, 0.5–1 RRU) per organization and container per minute',
      'POST /v1/org/limits answered': limitsRead.status,
    },
    note:
      'restated (bench/README.md "Budgets restated"): the figure was one describe\'s write units, 0 or 1 or 2 by where the request fell in ' +
      'the lease; now the mean over half a window of requests, the lease writes and the usage months written in their wave (one UpdateItem ' +
      "per key or campaign counted since the last, once a lease's worth or a minute) all counted from ConsumedCapacity",
  });

  results.note(
    group,
    "The request-rate counter's UpdateItem goes in the same wave as each request's first read (round trips unchanged: 1 for describe and get, " +
      'see "DynamoDB round trips"). In the warm-latency figures it is one of the request\'s "own calls" (UpdateItem ∥ GetItem): on DynamoDB Local ' +
      'the pair, replayed bare too, costs about twice one GetItem (one JVM serving both; in DynamoDB the counter is another partition), so ' +
      '"own calls / floor" roughly doubles while "p50 / own calls" (our code) stays where it was. A refusal this process already saw costs no ' +
      'DynamoDB call at all.',
  );

  // --------------------------------------------------------- hostile files
  const hostile = await benchOrganization('Bench limits hostile files');
  const upload = async (content: Buffer): Promise<string> => {
    const created = await post<{ uploadId: string; url: string }>(stack, '/v1/uploads/create', hostile.apiKey, {});
    if (created.status !== 200) throw new Error(`uploads/create answered ${created.status}`);
    const put = await fetch(created.data.url, { method: 'PUT', body: content });
    if (put.status !== 200) throw new Error(`the PUT answered ${put.status}`);
    return created.data.uploadId;
  };
  const bytes = options.hostileBytes;
  const longLine = Buffer.alloc(MAX_LINE_BYTES + 1, 'x');
  const files: { name: string; content: Buffer }[] = [
    { name: `one line of ${bytes / 1e6} MB`, content: Buffer.alloc(bytes, 'q') },
    {
      name: `${Math.floor(bytes / (MAX_LINE_BYTES + 2)).toLocaleString('en-US')} lines of 4,097 bytes`,
      content: Buffer.concat(
        Array.from({ length: Math.floor(bytes / (MAX_LINE_BYTES + 2)) }, () => Buffer.concat([longLine, Buffer.from('\n')])),
      ),
    },
    { name: `${bytes / 1e6} MB of random bytes`, content: randomBytes(bytes) },
  ];
  let worst = 0;
  const perFile: Record<string, string> = {};
  for (const file of files) {
    const uploadId = await upload(file.content);
    let status = 0;
    const cpu = await cpuSecondsOf(async () => {
      status = (await post(stack, PATHS.create, hostile.apiKey, { name: 'Hostile', accountIdsUploadId: uploadId })).status;
    });
    const perTenMb = cpu / (file.content.length / 10e6);
    worst = Math.max(worst, status === 400 ? perTenMb : Infinity);
    perFile[file.name] = `${status}, ${round(cpu, 3)} s CPU (${round(perTenMb, 3)} s per 10 MB)`;
  }
  results.add({
    group,
    name: 'worst create on hostile uploaded files',
    value: round(worst, 3),
    unit: 's CPU per 10 MB',
    budget: { op: '<=', limit: 1, text: '400 in ≤ 1 s CPU per 10 MB' },
    extra: perFile,
    note: 'CPU of this process (the API server is in it) while create answers; a file answered other than 400 counts as a miss',
  });
}
