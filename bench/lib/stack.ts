/**
 * The benchmark's own local stack: {@link startLocalStack} (the one `npm start`
 * and the tests use), in memory, with the API on a free port, started after
 * the instrumentation below is on the shared clients.
 *
 *
 * Instrumentation, added from outside the product code:
 * - every HTTP request the server handles runs in an AsyncLocalStorage
 *   {@link Scope}; a request carrying `x-bench-id` keeps its scope for the
 *   bench to read after the response (a workflow's calls land in the scope of
 *   the StartExecution request that started it);
 * - a middleware on the shared DynamoDB and S3 clients (lib/aws.ts; the
 *   document client shares the low-level client's stack) records every round
 *   trip (each attempt, so retries count) with its command, what it touched,
 *   its duration and the consumed capacity DynamoDB returned;
 * - an optional stub answers API-key lookups in-process (pipeline figure).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { startLocalApi, startLocalStack } from '../../infra/local/stack';
import type { LocalStepFunctions } from '../../infra/local/step-functions';
import { API_ROUTES } from '../../infra/routes';
import { WORKFLOW_TASKS } from '../../infra/workflow';
import { CpuLedger, patchLocalStepFunctions, s3ServerRequest, watchHttp, type ExecutionMeter, type S3ServerRequest } from './meter';

/** One SDK round trip. */
export interface CallRecord {
  service: 'dynamodb' | 's3';
  /** SDK command name without `Command`, e.g. `BatchGetItem`. */
  command: string;
  /** What it touched: `auth`, `warehouse`, `accountHistory`, `campaign` (DynamoDB) or an S3 key family. */
  kind: string;
  /** Start, `performance.now()` ms. */
  at: number;
  ms: number;
  /** Consumed capacity units DynamoDB reported (ReturnConsumedCapacity, requested by the bench when the code did not). */
  capacity?: number;
  /** Of `capacity`: read request units and write request units (on-demand billing). */
  rru?: number;
  wru?: number;
  /** Items or keys in a batch request. */
  items?: number;
  /** The marshalled request of a Query, or of every DynamoDB call in a scope that records inputs (to replay it bare as a floor). */
  input?: Record<string, unknown>;
  /** Name of the error the call failed with, if it did (a replay expects the same). */
  error?: string;
  /** Bytes of the response body (its Content-Length), when the service sent one. */
  bytes?: number;
  /** The whole SDK call around this round trip (marshalling, serialization, signing, retries): start and duration, ms. */
  sdkAt?: number;
  sdkMs?: number;
}

/** The calls made while serving one HTTP request (and what it started). */
export class Scope {
  readonly calls: CallRecord[] = [];
  /** When the server received the request and finished the response (`performance.now()` ms). */
  startedAt = performance.now();
  finishedAt: number | undefined;
  /** Step Functions API requests this request's code sent (`AWSStepFunctions.StartExecution`, …). */
  readonly stepFunctionsCalls: string[] = [];
  /** CPU-seconds of this process attributed to the request's handler (processor sharing, bench/lib/meter.ts). */
  cpuSeconds: number | undefined;
  /** When true, every DynamoDB call's marshalled input is kept in its record (not only a Query's). */
  recordInputs = false;
  constructor(readonly label: string) {}
}

/**
 * The calls grouped into sequential round trips: calls whose time on the wire
 * overlaps belong to one wave (sent in parallel), so a request's latency pays
 * one round trip per wave.
 */
export function waves(calls: readonly CallRecord[]): CallRecord[][] {
  const sorted = [...calls].sort((a, b) => a.at - b.at);
  const groups: CallRecord[][] = [];
  let end = -Infinity;
  for (const call of sorted) {
    if (call.at < end && groups.length) groups.at(-1)!.push(call);
    else groups.push([call]);
    end = Math.max(end, call.at + call.ms);
  }
  return groups;
}

/** Milliseconds during which at least one of the calls was in flight (union of their intervals). */
export function busyMs(calls: readonly CallRecord[]): number {
  const intervals = calls.map((c) => [c.at, c.at + c.ms] as const).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [from, to] of intervals) {
    if (to <= end) continue;
    total += to - Math.max(from, end);
    end = to;
  }
  return total;
}

/** The running bench stack. */
export interface BenchStack {
  apiUrl: string;
  dynamodbEndpoint: string;
  s3Endpoint: string;
  tableName: string;
  bucketName: string;
  stepFunctions: LocalStepFunctions;
  server: Server;
  /** Scope of the request sent with `x-bench-id: id` (removed once taken). */
  takeScope(id: string): Scope | undefined;
  /** Scopes of StartExecution requests, oldest first (each holds its workflow's calls). */
  workflowScopes: Scope[];
  /** Account enrichment records written so far (workflow RecordEnrichment progress). */
  recordedAccounts(): number;
  /** When true, GetItem of an API key is answered in-process with `stubApiKey` (no round trip). */
  stubApiKeys(stub: { organizationId: string } | undefined): void;
  /** PID of the DynamoDB Local JVM (for CPU accounting). */
  dynamodbPid: number | undefined;
  /** CPU-seconds per handler invocation (API routes by function ID, workflow tasks by function ID). */
  ledger: CpuLedger;
  /** Local Step Functions executions, metered (transitions, task invocations). */
  executions: { of(campaignId: string): ExecutionMeter[]; hold(campaignId: string): () => void };
  /** PID of s3rver's Node process (for CPU accounting). */
  s3Pid: number | undefined;
  /** Every request s3rver served (from this process or a child), in order, as its process reported them so far. */
  s3Requests: S3ServerRequest[];
  /** Resolves once every request s3rver served so far is in `s3Requests`. */
  s3RequestsReported(): Promise<void>;
  /** Runs `fn` with a scope of its own (calls made outside any HTTP request); `recordInputs`: keep every DynamoDB call's marshalled input. */
  inScope<T>(label: string, fn: () => Promise<T>, options?: { recordInputs?: boolean }): Promise<{ result: T; scope: Scope }>;
  stop(): Promise<void>;
}

const als = new AsyncLocalStorage<Scope>();

type Marshalled = { S?: string } | string | undefined;
const str = (value: Marshalled): string | undefined => (typeof value === 'string' ? value : value?.S);

/** Classifies a DynamoDB request by its first key. */
function dynamoKind(input: Record<string, any>): { kind: string; items?: number } {
  let pk: string | undefined;
  let sk: string | undefined;
  let items: number | undefined;
  let batchWrite = false;
  if (input.RequestItems) {
    const [first] = Object.values(input.RequestItems as Record<string, any>);
    if (Array.isArray(first)) {
      batchWrite = true;
      items = first.length;
      const item = first[0]?.PutRequest?.Item ?? first[0]?.DeleteRequest?.Key;
      pk = str(item?.pk);
      sk = str(item?.sk);
    } else {
      items = first?.Keys?.length;
      pk = str(first?.Keys?.[0]?.pk);
      sk = str(first?.Keys?.[0]?.sk);
    }
  } else if (input.Key) {
    pk = str(input.Key.pk);
    sk = str(input.Key.sk);
  } else if (input.Item) {
    pk = str(input.Item.pk);
    sk = str(input.Item.sk);
  } else if (input.ExpressionAttributeValues?.[':pk']) {
    pk = str(input.ExpressionAttributeValues[':pk']);
  } else if (input.TransactItems) {
    items = input.TransactItems.length;
    // Named by the first item that is not the request's audit entry (docs/audit.md: it rides in the change's transaction).
    const ops = (input.TransactItems as any[]).map((item) => item.Put ?? item.Update ?? item.ConditionCheck ?? item.Delete);
    const pks = ops.map((op) => str(op?.Item?.pk ?? op?.Key?.pk));
    pk = pks.find((key) => key !== undefined && !key.endsWith('#AUDIT')) ?? pks[0];
  }
  if (!pk) return { kind: 'other', items };
  if (pk.startsWith('APIKEY#')) return { kind: 'auth', items };
  // The request-rate limiter (docs/limits.md): its counter, and its policy read (the org item's limit attributes, projected).
  if (pk.includes('#LIMIT#')) return { kind: 'limiter', items };
  if (sk === 'ORG' && Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>).includes('limitRequests'))
    return { kind: 'limiter', items };
  if (pk.startsWith('WAREHOUSE#')) return { kind: 'warehouse', items };
  // The audit log (docs/audit.md): an answer's entry written on its own (a refusal, a replay, a repeat that changed nothing).
  if (pk.endsWith('#AUDIT')) return { kind: 'audit', items };
  // Suppressions and erasures (docs/privacy.md): a delivery policy's read of the compact sets, an erasure's records.
  if (pk.startsWith('PRIVACY#')) return { kind: 'privacy', items };
  if (pk.includes('#ACCOUNT#'))
    return { kind: batchWrite && sk === 'ENRICHED' ? 'accountHistory:recordEnrichment' : 'accountHistory', items };
  // History shards (issue #29): a completion's rewrite of one shard is a PutItem.
  if (pk.includes('#HBUCKET#') || pk.includes('#HISTORY#')) return { kind: input.Item ? 'accountHistory:write' : 'accountHistory', items };
  if (input.IndexName) return { kind: `list:${String(input.IndexName)}`, items };
  if (pk.startsWith('ORG#') && sk === 'ORG') return { kind: 'organization', items };
  if (sk === 'OUTCOMES') return { kind: 'outcomes', items };
  // The copy index (lib/privacy/copies.ts), written by FindContacts with each result part.
  if (pk.startsWith('COPIES#')) return { kind: 'copyIndex', items };
  // The results' sequence (lib/results/sequence.ts): a batch made readable takes its seqs.
  if (pk.includes('#RESULTS#') || sk?.startsWith('RESULTS#')) return { kind: 'sequence', items };
  return { kind: 'campaign', items };
}

/** Classifies an S3 request by its key. */
function s3Kind(input: Record<string, any>): string {
  const key = String(input.Key ?? input.Prefix ?? '');
  if (key.startsWith('exports/')) return 'export';
  if (key.includes('/results/')) return 'results';
  if (key.includes('/evaluations/')) return 'outcomes';
  if (key.endsWith('eligible.txt')) return 'eligibleList';
  if (key.includes('/batches/')) return 'batchAccounts';
  if (key.startsWith('recency/')) return 'recency';
  if (key.startsWith('crm/')) return 'crm';
  if (key.startsWith('uploads/')) return 'upload';
  if (key.endsWith('accounts.txt')) return 'accountList';
  return 'other';
}

/** Content-Length of an HTTP response of the SDK, when present. */
function contentLength(response: unknown): number | undefined {
  const value = (response as { headers?: Record<string, string> } | undefined)?.headers?.['content-length'];
  return value === undefined ? undefined : Number(value);
}

/**
 * JSON.stringify replacer: binary values as the wire carries them (base64), not as Node's JSON of a
 * Buffer (`{"type":"Buffer","data":[…]}`, ~4 characters a byte) or of a Uint8Array (`{"0":…}`).
 */
function binaryAsOnTheWire(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  const json = value as { type?: unknown; data?: unknown } | null;
  if (json && typeof json === 'object' && json.type === 'Buffer' && Array.isArray(json.data))
    return Buffer.from(json.data as number[]).toString('base64');
  return value;
}

const sum = (values: Array<{ CapacityUnits?: number } | undefined>) => values.reduce((s, v) => s + (v?.CapacityUnits ?? 0), 0);

/** DynamoDB commands that accept ReturnConsumedCapacity. */
const CAPACITY_COMMANDS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'TransactGetItemsCommand',
  // The document client's names, should its commands show them.
  'GetCommand',
  'BatchGetCommand',
  'PutCommand',
  'UpdateCommand',
  'DeleteCommand',
  'BatchWriteCommand',
  'TransactWriteCommand',
  'TransactGetCommand',
]);
const READ_COMMANDS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems', 'Get', 'BatchGet', 'TransactGet']);

/**
 * Read and write request units of one response's ConsumedCapacity: the
 * Read/WriteCapacityUnits DynamoDB splits out when it does, else all of
 * CapacityUnits by the command's class (reads: GetItem, BatchGetItem, Query,
 * Scan, TransactGetItems; everything else writes).
 */
function splitCapacity(
  command: string,
  list: ReadonlyArray<{ CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number } | undefined>,
) {
  let rru = 0;
  let wru = 0;
  for (const c of list) {
    if (!c) continue;
    if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
      rru += c.ReadCapacityUnits ?? 0;
      wru += c.WriteCapacityUnits ?? 0;
    } else if (READ_COMMANDS.has(command)) rru += c.CapacityUnits ?? 0;
    else wru += c.CapacityUnits ?? 0;
  }
  return { rru, wru };
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function processCpuSeconds(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of /proc/pid/stat (1-based), in clock ticks (100 Hz on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Wall time and CPU seconds of this process, of DynamoDB Local (`java`) and of s3rver's process (`s3`), to attribute a phase's time. */
export interface CpuSnapshot {
  wall: number;
  node: number;
  java: number;
  s3: number;
}

export function cpuSnapshot(stack: Pick<BenchStack, 'dynamodbPid' | 's3Pid'>): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    wall: performance.now() / 1000,
    node: (usage.user + usage.system) / 1e6,
    java: processCpuSeconds(stack.dynamodbPid),
    s3: processCpuSeconds(stack.s3Pid),
  };
}

/** CPU used between two snapshots, as seconds and as cores busy on average. */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot) {
  const wall = b.wall - a.wall;
  return {
    wallSeconds: wall,
    nodeCpuSeconds: b.node - a.node,
    javaCpuSeconds: b.java - a.java,
    nodeCores: (b.node - a.node) / wall,
    javaCores: (b.java - a.java) / wall,
    s3CpuSeconds: b.s3 - a.s3,
    s3Cores: (b.s3 - a.s3) / wall,
  };
}

/** Starts the stack; the process environment points at it afterwards. */
export async function startBenchStack(): Promise<BenchStack> {
  // Every request logs a closing line at INFO; the load figures would print thousands. Too late when lib/observability.ts is loaded
  // already (this module's imports load it): bench/run.ts sets it before importing this module.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  // The same stack as `npm start` and the tests, in memory: no demo data.
  // Every request s3rver serves, reported by its process (it runs in one of its own, infra/local/emulators.ts).
  const s3Requests: S3ServerRequest[] = [];
  const local = await startLocalStack({
    tableName: 'campaign-enrichment-bench',
    bucketName: 'campaign-enrichment-bench',
    api: false,
    onS3Request: (request) => s3Requests.push(s3ServerRequest(request)),
  });
  const { tableName, bucketName, dynamodbEndpoint, s3Endpoint } = local.endpoints;
  // Loaded now that the environment points at the emulators.
  const { dynamodb, s3 } = await import('../../lib/aws');

  let recorded = 0;
  let stub: { organizationId: string } | undefined;

  const ledger = new CpuLedger();
  const taskIds = new Map<string, string>(Object.values(WORKFLOW_TASKS).map((t) => [t.state, t.functionId]));
  const routeIds = new Map<string, string>(API_ROUTES.map((r) => [r.operation.path, r.functionId]));
  const executions = await patchLocalStepFunctions(ledger, (state) => taskIds.get(state) ?? state);
  watchHttp({ onStepFunctions: (target) => als.getStore()?.stepFunctionsCalls.push(target) });

  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      // Capacity for the cost model: asked for on every request that can return it, unless the code asked already.
      const input = args.input as Record<string, unknown>;
      if (CAPACITY_COMMANDS.has(String(context.commandName))) input.ReturnConsumedCapacity ??= 'TOTAL';
      return next(args);
    },
    { step: 'initialize', priority: 'low', name: 'benchReturnConsumedCapacity' },
  );

  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, any>;
      if (stub && context.commandName === 'GetItemCommand' && str(input.Key?.pk)?.startsWith('APIKEY#')) {
        // In-process answer for the pipeline figure: no serialization, no network.
        return {
          output: { $metadata: {}, Item: { keyHash: 'stub', organizationId: stub.organizationId, createdAt: '2026-01-01T00:00:00.000Z' } },
          response: {},
        } as never;
      }
      // Times the whole SDK call; the round-trip recorder below leaves its record on the context.
      const sdkAt = performance.now();
      const bench = context as { benchRecord?: CallRecord };
      try {
        return await next(args);
      } finally {
        if (bench.benchRecord) Object.assign(bench.benchRecord, { sdkAt, sdkMs: performance.now() - sdkAt });
      }
    },
    { step: 'initialize', priority: 'high', name: 'benchApiKeyStubAndTimer' },
  );
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, any>;
      const { kind, items } = dynamoKind(input);
      if (kind === 'accountHistory:recordEnrichment' && items) recorded += items;
      const scope = als.getStore();
      const at = performance.now();
      const record: CallRecord = {
        service: 'dynamodb',
        command: String(context.commandName).replace(/Command$/, ''),
        kind,
        at,
        ms: 0,
        items,
      };
      if (record.command === 'Query' || scope?.recordInputs) record.input = structuredClone(input);
      scope?.calls.push(record);
      (context as { benchRecord?: CallRecord }).benchRecord = record;
      try {
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> })
          .ConsumedCapacity;
        if (consumed) {
          const list = Array.isArray(consumed) ? consumed : [consumed];
          record.capacity = sum(list);
          const units = splitCapacity(record.command, list);
          record.rru = units.rru;
          record.wru = units.wru;
        }
        // DynamoDB Local sends larger bodies chunked (no Content-Length): then the bytes the body counter below saw
        // (serializing the parsed output again to measure it cost this process ~6 % of its CPU during the workflow).
        record.bytes =
          contentLength(result.response) ??
          (context as { benchBodyBytes?: number }).benchBodyBytes ??
          Buffer.byteLength(JSON.stringify(result.output ?? {}, binaryAsOnTheWire));
        return result;
      } catch (error) {
        record.error = (error as Error).name;
        throw error;
      } finally {
        record.ms = performance.now() - at;
      }
    },
    { step: 'deserialize', priority: 'high', name: 'benchRoundTripRecorder' },
  );
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      // Inside the deserializer (same step, lower priority): a chunked body's bytes, counted as it reads them (no copy).
      const response = result.response as { headers?: Record<string, string>; body?: unknown };
      if (contentLength(response) === undefined && response.body instanceof Readable) {
        const counted = context as { benchBodyBytes?: number };
        counted.benchBodyBytes = 0;
        response.body = response.body.pipe(
          new Transform({
            transform(chunk: Buffer, _encoding, done) {
              counted.benchBodyBytes! += chunk.length;
              done(null, chunk);
            },
          }),
        );
      }
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'benchBodyByteCounter' },
  );
  s3().middlewareStack.add(
    (next, context) => async (args) => {
      const scope = als.getStore();
      const at = performance.now();
      let bytes: number | undefined;
      try {
        const result = await next(args);
        bytes = contentLength(result.response);
        return result;
      } finally {
        scope?.calls.push({
          service: 's3',
          command: String(context.commandName).replace(/Command$/, ''),
          kind: s3Kind(args.input as Record<string, any>),
          at,
          ms: performance.now() - at,
          ...(bytes === undefined ? {} : { bytes }),
        });
      }
    },
    { step: 'deserialize', priority: 'high', name: 'benchRoundTripRecorder' },
  );

  // The API starts after the instrumentation is on the shared clients.
  const api = await startLocalApi({ healthCheck: async () => undefined });
  const stepFunctions = api.stepFunctions;

  const scopes = new Map<string, Scope>();
  const workflowScopes: Scope[] = [];
  const listeners = api.server.listeners('request') as Array<(...args: unknown[]) => void>;
  api.server.removeAllListeners('request');
  api.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const target = req.headers['x-amz-target'];
    const scope = new Scope(target ? String(target) : `${req.method} ${req.url}`);
    const id = req.headers['x-bench-id'];
    if (typeof id === 'string') scopes.set(id, scope);
    if (target === 'AWSStepFunctions.StartExecution') workflowScopes.push(scope);
    const functionId = target ? undefined : routeIds.get(new URL(req.url ?? '/', 'http://x').pathname);
    const end = functionId ? ledger.begin(functionId) : undefined;
    res.once('finish', () => {
      scope.finishedAt = performance.now();
    });
    // 'close' also fires when the client hangs up before the answer (autocannon at its end): the invocation leaves the ledger either way.
    if (end) res.once('close', () => (scope.cpuSeconds = end().cpuSeconds));
    als.run(scope, () => {
      for (const listener of listeners) listener.call(api.server, req, res);
    });
  });
  api.server.keepAliveTimeout = 30_000;

  return {
    apiUrl: api.url,
    dynamodbEndpoint,
    s3Endpoint,
    tableName,
    bucketName,
    stepFunctions,
    server: api.server,
    workflowScopes,
    dynamodbPid: local.dynamodbPid,
    s3Pid: local.s3Pid,
    takeScope(id) {
      const scope = scopes.get(id);
      scopes.delete(id);
      return scope;
    },
    recordedAccounts: () => recorded,
    ledger,
    executions,
    s3Requests,
    s3RequestsReported: () => local.s3RequestsReported(),
    stubApiKeys(value) {
      stub = value;
    },
    async inScope(label, fn, options) {
      const scope = new Scope(label);
      scope.recordInputs = options?.recordInputs ?? false;
      const result = await als.run(scope, fn);
      return { result, scope };
    },
    async stop() {
      await api.close();
      await local.stop();
    },
  };
}
