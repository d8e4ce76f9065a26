/**
 * The local emulators behind `npm start` and the tests (README.md#set-up):
 * DynamoDB Local (the AWS jar shipped in `amplify-dynamodb-simulator`, run
 * with the machine's `java`) and s3rver for S3. s3rver listens on loopback
 * only; DynamoDB Local has no bind address option (`-help` offers `-port`
 * only), so it listens on every interface (README.md#set-up) and is started
 * with its telemetry off.
 *
 * Each runs in a process of its own, tied to this process: it ends when
 * this process ends (even by `kill -9`). DynamoDB Local runs in a JVM, and a
 * persisted one records its PID in its data folder so a leftover is ended at
 * the next start; s3rver runs in a forked Node process
 * (infra/local/s3rver-child.mjs) that exits when its IPC channel closes.
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** A running emulator: its endpoint URL and how to stop it. */
export interface RunningEmulator {
  endpoint: string;
  /** The emulator's process (DynamoDB Local's JVM, s3rver's Node child). */
  pid?: number;
  stop(): Promise<void>;
}

export { LOCAL_CREDENTIALS } from './credentials';

/** Asks the OS for a free loopback TCP port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`The process behind ${url} exited with code ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${url}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

/** The PID file a persisted DynamoDB Local leaves in its data folder while it runs. */
export const DYNAMODB_PID_FILE = 'dynamodb-local.pid';

/**
 * Runs the JVM under a small `sh` guard tied to this process: the guard
 * prints the JVM's PID, then waits on its stdin (a pipe from this process).
 * When this process ends in any way, `kill -9` included, the pipe closes and
 * the guard stops the JVM, so DynamoDB Local never outlives the stack.
 */
const GUARD_SCRIPT = `exec 3<&0
"$@" </dev/null >/dev/null &
jvm=$!
echo "$jvm"
( read -r _ <&3; kill -TERM "$jvm" 2>/dev/null; sleep 5; kill -KILL "$jvm" 2>/dev/null ) &
guard=$!
wait "$jvm"
code=$?
kill "$guard" 2>/dev/null
exit "$code"`;

/** Whether `pid` is a live DynamoDB Local JVM (its command line names the jar). */
function isDynamoDbLocal(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' }).includes('DynamoDBLocal.jar');
  } catch {
    return false;
  }
}

/**
 * Ends a DynamoDB Local left running on `dataDir` by a stack that crashed
 * before it could stop it (its PID file says which), so the new one does not
 * meet "database is locked"; then removes the stale PID file.
 */
export async function clearStaleDynamoDbLocal(dataDir: string): Promise<number | undefined> {
  const file = path.join(dataDir, DYNAMODB_PID_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  let killed: number | undefined;
  if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isDynamoDbLocal(pid)) {
    process.kill(pid, 'SIGKILL');
    killed = pid;
    for (let waited = 0; waited < 10_000 && isDynamoDbLocal(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(file, { force: true });
  return killed;
}

/**
 * Starts DynamoDB Local, guarded so that it ends with this process (see
 * {@link GUARD_SCRIPT}); with a data folder it records its PID there and a
 * leftover instance from a crashed run is ended first.
 * @param options.dataDir - folder of the database file; omitted means in memory.
 * @param options.port - TCP port; a free one when omitted.
 */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number } = {}): Promise<RunningEmulator> {
  const emulatorDir = path.join(path.dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
  const port = options.port ?? (await freePort());
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    const killed = await clearStaleDynamoDbLocal(options.dataDir);
    if (killed) console.log(`Ended a DynamoDB Local (pid ${killed}) left running on ${options.dataDir} by a previous run`);
  }
  const child = spawn(
    'sh',
    [
      '-c',
      GUARD_SCRIPT,
      'dynamodb-local',
      'java',
      `-Djava.library.path=${path.join(emulatorDir, 'DynamoDBLocal_lib')}`,
      '-Xmx2g',
      '-jar',
      path.join(emulatorDir, 'DynamoDBLocal.jar'),
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
      ...storage,
    ],
    { cwd: emulatorDir, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const jvmPid = await new Promise<number | undefined>((resolve) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(Number(text.split('\n')[0]) || undefined);
    });
    child.once('exit', () => resolve(undefined));
  });
  const pidFile = options.dataDir && jvmPid ? path.join(options.dataDir, DYNAMODB_PID_FILE) : undefined;
  if (pidFile) writeFileSync(pidFile, `${jvmPid}\n`);
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForHttp(endpoint, child, 60_000);
  return {
    endpoint,
    pid: jvmPid,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          if (pidFile) rmSync(pidFile, { force: true });
          resolve();
        };
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', done);
        if (jvmPid) {
          try {
            process.kill(jvmPid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
        child.stdin?.end();
      }),
  };
}

/** One request the local S3 endpoint served, as its HTTP server saw it (see {@link startS3Local}'s `onRequest`). */
export interface S3ServedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  /** Bytes of the request body (its Content-Length; 0 when absent). */
  bytesIn: number;
  /** Bytes of the response body (its Content-Length; 0 when absent). */
  bytesOut: number;
  /** When the response finished, epoch milliseconds (`performance.timeOrigin + performance.now()` of the s3rver process). */
  at: number;
}

/** The running s3rver (see {@link startS3Local}). */
export interface S3Emulator extends RunningEmulator {
  /** Resolves once every request served so far has been passed to `onRequest` (at once without it). */
  requestsReported(): Promise<void>;
}

/** The module the s3rver child runs (plain JavaScript: no loader needed under tsx or vitest). */
const S3RVER_CHILD = path.join(import.meta.dirname, 's3rver-child.mjs');

/**
 * Starts s3rver, the local S3 endpoint, in a Node process of its own (as S3
 * is another service on AWS), forked from infra/local/s3rver-child.mjs and
 * tied to this process by its IPC channel: when this process ends in any way,
 * `kill -9` included, the channel closes and the child exits.
 * @param options.dataDir - folder of the objects.
 * @param options.port - TCP port; a free one when omitted.
 * @param options.buckets - buckets created at start.
 * @param options.onRequest - called once per request served (the bench counts them, bench/lib/meter.ts); omitted: the child sends none.
 * @throws Error when the child exits before it listens (its stderr in the message).
 */
export async function startS3Local(options: {
  dataDir: string;
  port?: number;
  buckets: string[];
  onRequest?: (request: S3ServedRequest) => void;
}): Promise<S3Emulator> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const child = fork(
    S3RVER_CHILD,
    [JSON.stringify({ port, directory: options.dataDir, buckets: options.buckets, reportRequests: Boolean(options.onRequest) })],
    // No loader flags of this process (tsx's): the child is plain JavaScript.
    { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  child.stderr!.pipe(process.stderr);
  const { onRequest } = options;
  if (onRequest)
    child.on('message', (message: { type: string; requests?: [string, string, number, number, number][] }) => {
      if (message.type !== 'requests') return;
      for (const [method, url, bytesIn, bytesOut, at] of message.requests!) onRequest({ method, url, bytesIn, bytesOut, at });
    });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== 'listening') return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`s3rver exited with ${code ?? signal} before it listened on port ${port}${stderr ? `:\n${stderr}` : ''}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: child.pid,
    requestsReported: () =>
      new Promise<void>((resolve) => {
        if (!onRequest || !child.connected) return resolve();
        const onFlushed = (message: { type: string }) => {
          if (message.type !== 'flushed') return;
          child.off('message', onFlushed);
          resolve();
        };
        child.on('message', onFlushed);
        child.send({ type: 'flush' });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}
