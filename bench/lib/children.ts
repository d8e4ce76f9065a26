/**
 * Child processes of the bench: the load client and autocannon, on the same
 * Node 24 binary as the bench (`process.execPath`), with the bench's
 * environment (so they reach the same local endpoints).
 */
import { execFile, fork } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import type { LatencySummary } from './stats';

const run = promisify(execFile);
const CHILDREN = path.resolve(import.meta.dirname, '../children');
const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/** What the load client prints: the latency summary plus error counts. */
export interface LoadResult extends LatencySummary {
  non2xx: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  requestsPerSecond: number;
}

/** Load against an API path over HTTP. */
export interface HttpLoad {
  mode: 'http';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Load of bare GetItem calls against DynamoDB Local. */
export interface GetItemLoad {
  mode: 'getitem';
  endpoint: string;
  table: string;
  key: Record<string, { S: string }>;
  consistentRead?: boolean;
}

/** Load of one bare Query (a marshalled QueryCommand input) against DynamoDB Local. */
export interface QueryLoad {
  mode: 'query';
  endpoint: string;
  input: Record<string, unknown>;
}

/** What the open-loop load client prints: requests sent, answers by status, requests sent per epoch second. */
export interface RateLoadResult {
  sent: number;
  statuses: Record<string, number>;
  windows: Record<string, number>;
  wallMs: number;
}

/** Runs the load client open loop (bench/children/load-client.mjs `rate`): `rate` requests/s for `seconds`, at most `concurrency` in flight. */
export async function runRateLoad(load: HttpLoad & { rate: number; seconds: number; concurrency: number }): Promise<RateLoadResult> {
  const { stdout } = await run(process.execPath, [path.join(CHILDREN, 'load-client.mjs'), JSON.stringify(load)], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as RateLoadResult;
}

/** Runs the closed-loop load client (bench/children/load-client.mjs). */
export async function runLoadClient(
  load: (HttpLoad | GetItemLoad | QueryLoad) & { concurrency: number; requests: number; warmup: number },
): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [path.join(CHILDREN, 'load-client.mjs'), JSON.stringify(load)], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadResult;
  if (result.errors > 0) throw new Error(`Load client: ${result.errors} transport errors, first: ${result.firstError}`);
  return result;
}

/** The parts of autocannon's JSON result the bench reads. */
export interface AutocannonResult {
  latency: { p50: number; p90: number; p99: number; average: number; max: number };
  requests: { average: number; total: number; sent: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
}

/** Runs the autocannon CLI (node_modules/autocannon) with JSON output. */
export async function runAutocannon(options: {
  url: string;
  connections: number;
  seconds: number;
  headers: Record<string, string>;
  body: string;
}): Promise<AutocannonResult> {
  const cli = path.join(PROJECT_ROOT, 'node_modules/autocannon/autocannon.js');
  const args = [
    cli,
    '--json',
    '--no-progress',
    '-c',
    String(options.connections),
    '-d',
    String(options.seconds),
    '-m',
    'POST',
    '-b',
    options.body,
  ];
  for (const [name, value] of Object.entries(options.headers)) args.push('-H', `${name}=${value}`);
  args.push(options.url);
  const { stdout } = await run(process.execPath, args, { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as AutocannonResult;
}

/** What bench/children/export-lambda.mjs prints: the handler's answer, its CPU (ms) and memory (MiB). */
export interface ExportLambdaOutcome {
  importMs: number;
  handlerMs: number;
  statusCode: number;
  body: string;
  rssAfterImportMiB: number;
  peakSampledMiB: number;
  peakRssMiB: number;
  atPeakMiB: { heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  cpuMs: number;
  rssTimelineMiB?: number[];
  /** Each second's largest [rss, heapUsed, external, arrayBuffers] of the 50 ms samples (MiB). */
  memoryTimelineMiB?: [number, number, number, number][];
  /** Bytes of a streamed answer, read to its end (absent for a plain answer). */
  bodyBytes?: number;
}

/**
 * Invokes the CampaignsExport bundle once in its own Node process, as Lambda
 * runs it, with the API Gateway event of `POST /v1/campaigns/export
 * {campaignId}` authorized by `apiKey` ({@link runLambdaOnce}).
 * @param options.profile - write a CPU profile (`--cpu-prof`) to this folder and file name.
 * @returns the child's figures and its stdout/stderr (the handler's log).
 */
export async function runExportLambda(options: {
  bundle: string;
  apiKey: string;
  campaignId: string;
  profile?: { dir: string; name: string };
  env?: Record<string, string>;
}): Promise<{ outcome: ExportLambdaOutcome; stdout: string; stderr: string }> {
  const { exportCampaignOperation } = await import('../../lib/exports/schema');
  return runLambdaOnce({
    ...options,
    functionId: 'CampaignsExport',
    path: exportCampaignOperation.path,
    body: { campaignId: options.campaignId },
  });
}

/**
 * Invokes an API function's bundle once in its own Node process
 * (bench/children/export-lambda.mjs), as Lambda runs it, with the API
 * Gateway event of `POST <path>` with `body` and `headers`, authorized by
 * `apiKey`: the environment outside the local Lambda emulation plus the
 * function's deployed `NODE_OPTIONS` (infra/memory.ts) and `env`. A streaming
 * function finds the Lambda runtime's response streaming (`awslambda`, emulated
 * by the child) and writes its answer into a response stream to its end, as in
 * AWS; the child reports the body's bytes (`bodyBytes`) instead of the body.
 * @returns the child's figures and its stdout/stderr (the handler's log).
 */
export async function runLambdaOnce(options: {
  bundle: string;
  apiKey: string;
  functionId: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  profile?: { dir: string; name: string };
  env?: Record<string, string>;
  /** Timed warm invocations against bare part reads instead of one invocation ({@link runLambdaBlocks}). */
  blocks?: { runs: number; size: number; partKey: string; profile?: string };
}): Promise<{ outcome: ExportLambdaOutcome; stdout: string; stderr: string }> {
  const { environmentOutsideLambda } = await import('../../infra/local/lambda-context');
  const event = await lambdaEvent(options);
  const { nodeOptionsOf } = await import('../../infra/memory');
  const nodeOptions = nodeOptionsOf(options.functionId);
  const profilerArgs = options.profile
    ? ['--cpu-prof', '--cpu-prof-dir', options.profile.dir, '--cpu-prof-name', options.profile.name]
    : [];
  const child = await run(
    process.execPath,
    [
      ...profilerArgs,
      ...(options.blocks ? ['--expose-gc'] : []),
      path.join(CHILDREN, 'export-lambda.mjs'),
      JSON.stringify({
        bundle: options.bundle,
        event,
        functionName: options.functionId,
        ...(options.blocks ? { blocks: options.blocks } : {}),
      }),
    ],
    {
      env: { ...environmentOutsideLambda(), ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), ...options.env },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return {
    outcome: JSON.parse(child.stdout.trim().split('\n').at(-1)!) as ExportLambdaOutcome,
    stdout: child.stdout,
    stderr: child.stderr,
  };
}

/** CPU per call of one block (ms), its system share, and the major collections that fell in it. */
export interface ChildBlock {
  cpuMs: number;
  /** The kernel's share of {@link cpuMs} (ms per call): the sockets' syscalls, page faults. */
  sysMs: number;
  majors: number;
}

/** What bench/children/export-lambda.mjs prints in its `blocks` mode. */
export interface LambdaBlocksOutcome {
  importMs: number;
  /** One entry per measured round (the warm-up left out): a block of invocations and a block of bare reads. */
  rounds: { page: ChildBlock; bare: ChildBlock }[];
  /** Bytes of the last invocation's answer body. */
  answerBytes: number;
}

/**
 * Times warm invocations of an API function's bundle in its own Node process,
 * as a warm Lambda container answers them, against bare reads of the result
 * part `blocks.partKey` through the bundle's `readPart` export in that same
 * process (bench/children/export-lambda.mjs `blocks` mode): `blocks.runs`
 * rounds of a block of `blocks.size` of each, alternating, each block after a
 * full garbage collection, after a warm-up round.
 */
export async function runLambdaBlocks(options: {
  bundle: string;
  apiKey: string;
  functionId: string;
  path: string;
  body: unknown;
  /** `profile`: each block profiled into `<profile>-page-N.cpuprofile` / `<profile>-bare-N.cpuprofile` (then not a timing to report). */
  blocks: { runs: number; size: number; partKey: string; profile?: string };
}): Promise<{ outcome: LambdaBlocksOutcome; stderr: string }> {
  const { stdout, stderr } = await runLambdaOnce(options);
  return { outcome: JSON.parse(stdout.trim().split('\n').at(-1)!) as LambdaBlocksOutcome, stderr };
}

/**
 * The API Gateway v2 event of `POST <path>` with `body` (JSON) and `headers`,
 * authorized by `apiKey`, as the local API hands it to `functionId`.
 */
async function lambdaEvent(options: {
  apiKey: string;
  functionId: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}): Promise<unknown> {
  const { apiGatewayEvent } = await import('../../infra/local/event');
  return apiGatewayEvent({
    method: 'POST',
    url: options.path,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      'content-type': 'application/json',
      host: '127.0.0.1',
      'user-agent': 'bench',
      ...options.headers,
    },
    body: Buffer.from(JSON.stringify(options.body)),
    requestId: `bench-${options.functionId}`,
  });
}

/** One invocation's answer from {@link startLambdaWorker}: the handler's CPU in its own process (ms) and its response. */
export interface WorkerInvocation {
  /** The worker process's CPU (all threads) during the invocation, ms. */
  cpuMs: number;
  /** The main thread's alone (no V8 helper threads: concurrent GC marking, optimizing compilation), ms. */
  mainThreadCpuMs: number;
  /** V8's mark-compact collections during the invocation (`v8.GCProfiler` in the worker). */
  majorCollections: number;
  /** The young generation's size (V8's new space, KB) before the invocation: V8 shrinks it in a process that idles. */
  youngGenerationKB: number;
  statusCode: number;
  body: string;
}

/** A warm container of one API function in a process of its own ({@link startLambdaWorker}). */
export interface LambdaWorker {
  /** Invokes the handler with `POST <path>` of `body` by `apiKey`, after a full collection in the worker; its CPU there. */
  invoke(apiKey: string, body: unknown): Promise<WorkerInvocation>;
  /** Ends the worker process. */
  close(): void;
}

/**
 * Starts a warm Lambda container of one API function's bundle in a Node
 * process of its own (bench/children/lambda-worker.mjs, forked with IPC and
 * `--expose-gc`), with the environment outside the local Lambda emulation
 * plus the function's deployed `NODE_OPTIONS` (infra/memory.ts): each
 * {@link LambdaWorker.invoke} is one warm invocation, timed by that process's
 * `process.cpuUsage` after a full garbage collection, so none of the bench
 * process's heap, local stack or garbage is in the figure.
 * @throws if the worker exits before it is ready.
 */
export async function startLambdaWorker(options: { bundle: string; functionId: string; path: string }): Promise<LambdaWorker> {
  const { environmentOutsideLambda } = await import('../../infra/local/lambda-context');
  const { nodeOptionsOf } = await import('../../infra/memory');
  const nodeOptions = nodeOptionsOf(options.functionId);
  const child = fork(
    path.join(CHILDREN, 'lambda-worker.mjs'),
    [JSON.stringify({ bundle: options.bundle, functionName: options.functionId })],
    {
      execArgv: ['--expose-gc'],
      env: { ...environmentOutsideLambda(), ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const pending = new Map<number, { resolve: (answer: WorkerInvocation) => void; reject: (error: Error) => void }>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`The ${options.functionId} worker exited (${code}) before it was ready`)));
    child.on('message', (message: { ready?: true; id?: number; error?: string } & Partial<WorkerInvocation>) => {
      if (message.ready) return resolve();
      const waiter = pending.get(message.id!);
      pending.delete(message.id!);
      if (message.error !== undefined) waiter?.reject(new Error(`${options.functionId} worker: ${message.error}`));
      else
        waiter?.resolve({
          cpuMs: message.cpuMs!,
          mainThreadCpuMs: message.mainThreadCpuMs!,
          majorCollections: message.majorCollections!,
          youngGenerationKB: message.youngGenerationKB!,
          statusCode: message.statusCode!,
          body: message.body!,
        });
    });
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`The ${options.functionId} worker exited (${code}) mid-invocation`));
    pending.clear();
  });
  return {
    invoke: async (apiKey, body) => {
      const event = await lambdaEvent({ apiKey, functionId: options.functionId, path: options.path, body });
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, event });
      });
    },
    close: () => {
      child.removeAllListeners('exit');
      child.kill();
    },
  };
}
