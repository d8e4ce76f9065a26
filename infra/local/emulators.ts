/**
 * The local emulators behind `npm start` and the tests (decisions §9):
 * DynamoDB Local (the AWS jar shipped in `amplify-dynamodb-simulator`, run
 * with the machine's `java`) and s3rver for S3. Both listen on loopback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import S3rver from 's3rver';

const require = createRequire(import.meta.url);

/** A running emulator: its endpoint URL and how to stop it. */
export interface RunningEmulator {
  endpoint: string;
  /** The emulator's process, when it runs in one of its own (DynamoDB Local). */
  pid?: number;
  stop(): Promise<void>;
}

/** Credentials the local endpoints accept (s3rver checks signatures against these). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

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

/**
 * Starts DynamoDB Local.
 * @param options.dataDir - folder of the database file; omitted means in memory.
 * @param options.port - TCP port; a free one when omitted.
 */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number } = {}): Promise<RunningEmulator> {
  const emulatorDir = path.join(path.dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
  const port = options.port ?? (await freePort());
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    'java',
    [`-Djava.library.path=${path.join(emulatorDir, 'DynamoDBLocal_lib')}`, '-Xmx2g', '-jar', path.join(emulatorDir, 'DynamoDBLocal.jar'), '-sharedDb', '-port', String(port), ...storage],
    { cwd: emulatorDir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForHttp(endpoint, child, 60_000);
  return {
    endpoint,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Starts s3rver, the local S3 endpoint.
 * @param options.dataDir - folder of the objects; a temporary one when omitted.
 * @param options.buckets - buckets created at start.
 */
export async function startS3Local(options: { dataDir: string; port?: number; buckets: string[] }): Promise<RunningEmulator> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const server = new S3rver({
    port,
    address: '127.0.0.1',
    directory: options.dataDir,
    silent: true,
    vhostBuckets: false,
    configureBuckets: options.buckets.map((name) => ({ name, configs: [] })),
  });
  await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => server.close() };
}
