/**
 * The local stack, started one way everywhere (README.md#set-up): `npm start`,
 * the test harness, the bench and the soak all call {@link startLocalStack}.
 *
 * It starts DynamoDB Local and s3rver, each in a process of its own
 * (infra/local/emulators.ts; persisted in a data folder, or in memory and a
 * temporary folder), points this process's environment at them
 * (lib/config.ts, lib/aws.ts read it), creates the table and the bucket, and
 * — unless `api: false` — serves the API with the local Step Functions
 * endpoint on one port ({@link startLocalApi}).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { freePort, startDynamoDbLocal, startS3Local, type RunningEmulator, type S3ServedRequest } from './emulators';
import { applyLocalEnvironment, type LocalEndpoints } from './environment';
import type { LocalStepFunctions } from './step-functions';
import type { WebhookPoller } from './webhooks';
import type { Readiness } from './readiness';
import type { ListeningServer } from './server';
import { retryTransient, type RetryOptions } from './retry';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Folder whose `dynamodb/` and `s3/` keep the data across restarts; omitted: in-memory DynamoDB and a temporary S3 folder, removed by `stop()`. */
  dataDir?: string;
  /** Table name. @default 'campaign-enrichment' */
  tableName?: string;
  /** Bucket name. @default 'campaign-enrichment-local' */
  bucketName?: string;
  /** Secret that signs cursors. @default 32 random bytes */
  cursorSecret?: string;
  /** The API server: its port (0 or omitted: a free one), or `false` for the emulators only (the test harness starts one API per test worker). */
  api?: { port?: number; host?: string } | false;
  /**
   * Run the enrichment reconciler (lib/enrichment/reconcile.ts) at start and
   * then every this many seconds, as the schedule does in AWS (needs the API,
   * which hosts the local Step Functions endpoint). Omitted: not run.
   */
  reconcileEverySeconds?: number;
  /** Runs the webhook delivery loop with the API (default true; see {@link startLocalApi}). */
  webhooks?: boolean;
  /**
   * A starting stack's readiness (`npm start`, README.md#set-up): the API port
   * listens before anything else starts, `GET /health` answers 503 with the
   * steps still starting, and this stack marks its own steps done (backing
   * services, migrations, API, the reconciler's first pass); the caller marks the rest.
   */
  readiness?: Readiness;
  /** How the first calls to the emulators (table and bucket) are retried when they fail for a moment (infra/local/retry.ts). */
  startRetry?: RetryOptions;
  /**
   * Called with the SDK clients before the stack's first call through them
   * (tests add a middleware there to inject an emulator fault at start).
   */
  onClients?: (clients: { dynamodb: DynamoDBClient; s3: S3Client }) => void;
  /** Called once per request the S3 endpoint serves, from its process (the bench counts them, bench/lib/meter.ts); omitted: none are reported. */
  onS3Request?: (request: S3ServedRequest) => void;
}

/** The API served by {@link startLocalApi}. */
export interface LocalApi {
  url: string;
  server: Server;
  stepFunctions: LocalStepFunctions;
  /** Serves the demo organization's key at `GET /local/demo-key`, and its test key at `GET /local/test-key` (loopback only; `npm start`). */
  serveDemoApiKey(apiKey: string, testApiKey?: string): void;
  /** The webhook delivery loop, when started. */
  webhooks?: WebhookPoller;
  close(): Promise<void>;
}

/** A running local stack. */
export interface LocalStack {
  endpoints: LocalEndpoints;
  /** Present unless started with `api: false`. */
  api?: LocalApi;
  /** DynamoDB Local's process ID (CPU accounting in the bench). */
  dynamodbPid: number | undefined;
  /** s3rver's process ID (CPU accounting in the bench). */
  s3Pid: number | undefined;
  /** Resolves once every request the S3 endpoint served so far has reached `onS3Request` (at once without it). */
  s3RequestsReported(): Promise<void>;
  /** Stops the API, the workflows and the emulators, and removes temporary data. */
  stop(): Promise<void>;
}

/**
 * Serves the API handlers and the local Step Functions endpoint on one port,
 * in this process, against the environment already pointed at the emulators.
 * @param options.healthCheck - answers `GET /health` (default: table and bucket reachable).
 * @param options.webhooks - also runs the webhook delivery loop (infra/local/webhooks.ts), every
 *   `intervalMs`; off by default so test files that do not deliver webhooks run no loop.
 * @param options.checkDeclaredErrors - the tests' stack: an operation that answers an error code its document does not
 *   list is answered as a 500 naming it (docs/errors.md; infra/local/server.ts `undeclaredErrorAnswer`).
 */
export async function startLocalApi(
  options: {
    port?: number;
    host?: string;
    healthCheck?: () => Promise<void>;
    webhooks?: boolean | { intervalMs?: number };
    readiness?: Readiness;
    listening?: ListeningServer;
    checkDeclaredErrors?: boolean;
  } = {},
): Promise<LocalApi> {
  const port = options.listening ? Number(new URL(options.listening.url).port) : options.port || (await freePort());
  const { LOCAL_STATE_MACHINE_ARN, createLocalStepFunctions } = await import('./step-functions');
  process.env.SFN_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.STATE_MACHINE_ARN = LOCAL_STATE_MACHINE_ARN;
  // Modules that build AWS clients load only once the environment points at the emulators.
  const { startApiServer } = await import('./server');
  // No erasure queue here: erasures/create's jobs run in this process, after the answer (docs/privacy.md "The erasure job").
  (await import('../../lib/root')).runErasuresInProcess();
  const stepFunctions = await createLocalStepFunctions();
  const api = await startApiServer({
    port,
    host: options.host,
    stepFunctions,
    healthCheck: options.healthCheck ?? (await backingServicesCheck()),
    ...(options.readiness ? { readiness: options.readiness } : {}),
    ...(options.listening ? { listening: options.listening } : {}),
    ...(options.checkDeclaredErrors ? { declaredErrors: await declaredErrorCodes() } : {}),
  });
  const webhooks = options.webhooks
    ? (await import('./webhooks')).startWebhookPoller(options.webhooks === true ? {} : options.webhooks)
    : undefined;
  return {
    url: api.url,
    server: api.server,
    stepFunctions,
    serveDemoApiKey: api.serveDemoApiKey,
    ...(webhooks ? { webhooks } : {}),
    async close() {
      await webhooks?.stop();
      stepFunctions.abortAll();
      api.server.closeAllConnections();
      await api.close();
    },
  };
}

/**
 * Runs the enrichment reconciler now and every `seconds` (one pass at a
 * time); a pass that fails is logged and the next one tries again.
 * @returns a function that stops the schedule and waits for a running pass.
 */
async function startReconciling(seconds: number): Promise<() => Promise<void>> {
  const { reconcileEnrichments } = await import('../../lib/enrichment/reconcile');
  const { reconcileDependencies } = await import('../../lib/root');
  const { logger } = await import('../../lib/observability');
  let running: Promise<unknown> = Promise.resolve();
  // The pass at start needs no grace period: every launch of the previous run died with its
  // process and none of this one has begun, so a missing execution is lost for sure (restarted at once).
  let graceSeconds: number | undefined = 0;
  const pass = () =>
    (running = reconcileEnrichments({ ...reconcileDependencies(), ...(graceSeconds === undefined ? {} : { graceSeconds }) }).then(
      (report) => {
        if (report.repairs.length > 0) console.log(`Reconciler: ${report.repairs.map((r) => `${r.action} ${r.campaignId}`).join(', ')}`);
      },
      (error: unknown) => logger.error('Reconciler pass failed', { error }),
    ));
  await pass();
  graceSeconds = undefined;
  const timer = setInterval(() => void running.then(pass), seconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** `GET /health`: the table and the bucket answer (ListTables, not DescribeTable, which counts every item on DynamoDB Local). */
async function backingServicesCheck(): Promise<() => Promise<void>> {
  const { dynamodb, s3 } = await import('../../lib/aws');
  const { HeadBucketCommand } = await import('@aws-sdk/client-s3');
  const { tableExists } = await import('./table');
  return async () => {
    if (!(await tableExists(dynamodb, process.env.TABLE_NAME!))) throw new Error(`Table ${process.env.TABLE_NAME} not found.`);
    await s3().send(new HeadBucketCommand({ Bucket: process.env.BUCKET_NAME }));
  };
}

/** Starts the emulators, the table, the bucket and (unless `api: false`) the API. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = options.tableName ?? 'campaign-enrichment';
  const bucketName = options.bucketName ?? 'campaign-enrichment-local';
  const temporaryS3 = options.dataDir ? undefined : mkdtempSync(path.join(tmpdir(), 'cea-s3-'));
  const emulators: RunningEmulator[] = [];
  let api: LocalApi | undefined;
  let early: ListeningServer | undefined;
  let stopReconciling: (() => Promise<void>) | undefined;
  const { readiness } = options;
  const stop = async () => {
    await stopReconciling?.();
    await api?.close();
    if (!api && early) await new Promise<void>((resolve) => early!.server.close(() => resolve()));
    await Promise.allSettled(emulators.map((emulator) => emulator.stop()));
    if (temporaryS3) for (const folder of [temporaryS3, `${temporaryS3}-keys`]) rmSync(folder, { recursive: true, force: true });
  };
  try {
    if (readiness && options.api !== false) {
      // The port answers from the first second: 503 with what is still starting, until the API takes it over.
      const { listenEarly } = await import('./server');
      early = await listenEarly({
        port: options.api?.port || (await freePort()),
        ...(options.api?.host ? { host: options.api.host } : {}),
        readiness,
      });
    }
    const [dynamodbLocal, s3Local] = await Promise.all([
      startDynamoDbLocal(options.dataDir ? { dataDir: path.join(options.dataDir, 'dynamodb') } : {}),
      startS3Local({
        dataDir: temporaryS3 ?? path.join(options.dataDir!, 's3'),
        buckets: [bucketName],
        ...(options.onS3Request ? { onRequest: options.onS3Request } : {}),
      }),
    ]);
    emulators.push(dynamodbLocal, s3Local);
    const endpoints: LocalEndpoints = {
      dynamodbEndpoint: dynamodbLocal.endpoint,
      s3Endpoint: s3Local.endpoint,
      tableName,
      bucketName,
      cursorSecret: options.cursorSecret ?? randomBytes(32).toString('hex'),
    };
    applyLocalEnvironment(endpoints);
    // The erasure receipts' signing key: in the data folder (kept across restarts), or beside the temporary S3 folder.
    process.env.PRIVACY_SIGNING_KEY_FILE ??= path.join(options.dataDir ?? `${temporaryS3!}-keys`, 'privacy-signing-key.json');
    const { dynamodb, s3 } = await import('../../lib/aws');
    const { ensureTable, ensureBucket } = await import('./table');
    options.onClients?.({ dynamodb, s3: s3() });
    // An emulator that just started can fail a call for a moment (DynamoDB Local's InternalFailure): retried, not fatal.
    const retry = {
      onRetry: (error: unknown, attempt: number, delayMs: number) =>
        console.log(`Start: ${(error as Error).name ?? 'error'} from an emulator (try ${attempt}), retrying in ${Math.round(delayMs)} ms`),
      ...options.startRetry,
    };
    await retryTransient(() => ensureTable(dynamodb, endpoints.tableName), retry);
    await retryTransient(() => ensureBucket(s3(), endpoints.bucketName), retry);
    readiness?.done('backing services');
    if (options.dataDir) {
      // Data written by earlier versions is brought up to date: every migration not yet recorded on this table, in order (lib/migrations).
      const { runMigrations } = await import('../../lib/migrations');
      const { ddb } = await import('../../lib/aws');
      const { accountHistory } = await import('../../lib/root');
      const migrated = await runMigrations({
        client: ddb,
        tableName,
        history: accountHistory(),
        s3: s3(),
        bucketName: endpoints.bucketName,
      });
      for (const { id, changed } of migrated.ran)
        if (Object.values(changed).some((n) => n > 0)) console.log(`Migration ${id}: ${JSON.stringify(changed)}`);
    }
    readiness?.done('migrations');
    if (options.api !== false) {
      api = await startLocalApi({
        port: options.api?.port,
        host: options.api?.host,
        webhooks: options.webhooks ?? true,
        ...(readiness ? { readiness } : {}),
        ...(early ? { listening: early } : {}),
      });
      readiness?.done('API');
      Object.assign(endpoints, { apiUrl: api.url, sfnEndpoint: process.env.SFN_ENDPOINT, stateMachineArn: process.env.STATE_MACHINE_ARN });
      if (options.reconcileEverySeconds) stopReconciling = await startReconciling(options.reconcileEverySeconds);
      readiness?.done('reconciler first pass');
      // Erasure jobs a crash left `pending` or `running` run again, from their saved progress (docs/privacy.md "The erasure job").
      const { resumeErasures } = await import('../../lib/root');
      const resumed = await resumeErasures();
      if (resumed > 0) console.log(`Erasure jobs resumed: ${resumed}`);
    }
    return {
      endpoints,
      ...(api ? { api } : {}),
      dynamodbPid: dynamodbLocal.pid,
      s3Pid: s3Local.pid,
      s3RequestsReported: () => s3Local.requestsReported(),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Per operation path, the error codes its document lists (lib/contract/openapi.ts `listedErrorCodes`). */
async function declaredErrorCodes(): Promise<Map<string, ReadonlySet<string>>> {
  const [{ API_ROUTES }, { documented, listedErrorCodes }] = await Promise.all([import('../routes'), import('../../lib/contract/openapi')]);
  return new Map(API_ROUTES.map(({ operation }) => [operation.path, new Set(listedErrorCodes(documented(operation)))]));
}
