/**
 * The local stack's emulators as one unit (issue #19): DynamoDB Local never
 * outlives the process that started it, `kill -9` included, and a leftover
 * one from an older crash is ended at the next start, so the new one never
 * meets "database is locked". s3rver runs in a process of its own (as S3 is
 * another service on AWS) that ends with the stack too.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DYNAMODB_PID_FILE,
  freePort,
  LOCAL_CREDENTIALS,
  startDynamoDbLocal,
  startS3Local,
  type S3ServedRequest,
} from '../infra/local/emulators';
import { alive } from './support/spawned';
import { stackDataFolder } from './support/data-folder';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, '..');
const dirs: string[] = [];
const tempDir = () => {
  const dir = stackDataFolder('cea-emulators-');
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return condition();
}

const client = (endpoint: string) => new DynamoDBClient({ endpoint, region: 'local', credentials: LOCAL_CREDENTIALS });
const createTable = (endpoint: string, name: string) =>
  client(endpoint).send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );

/** Starts `script` (a module under test/support) with `dataDir`; resolves with the pid and endpoint it prints once ready. */
async function spawnReady(script: string, dataDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support', script), dataDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('READY '));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`the child exited with ${code} before it was ready: ${out}`)));
  });
  const [, pid, endpoint] = ready.split(' ');
  return { child, pid: Number(pid), endpoint: endpoint! };
}

describe('DynamoDB Local as part of the stack', () => {
  it('ends when the process that started it is killed with kill -9', async () => {
    const dataDir = tempDir();
    const { child, pid: jvmPid } = await spawnReady('dynamodb-child.ts', dataDir);
    expect(readFileSync(path.join(dataDir, DYNAMODB_PID_FILE), 'utf8').trim()).toBe(String(jvmPid));
    expect(alive(jvmPid)).toBe(true);

    child.kill('SIGKILL');
    expect(await until(() => !alive(jvmPid), 20_000), `DynamoDB Local (pid ${jvmPid}) outlived its parent`).toBe(true);
  });

  it('ends a leftover DynamoDB Local on the same data folder at the next start, and the new one writes', async () => {
    const dataDir = tempDir();
    // An orphan as an older crash left it: a bare JVM on the folder, its PID in the folder's PID file.
    const emulatorDir = path.join(path.dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
    const port = await freePort();
    const orphan = spawn(
      'java',
      [
        `-Djava.library.path=${path.join(emulatorDir, 'DynamoDBLocal_lib')}`,
        '-jar',
        path.join(emulatorDir, 'DynamoDBLocal.jar'),
        '-sharedDb',
        '-port',
        String(port),
        '-dbPath',
        dataDir,
      ],
      {
        cwd: emulatorDir,
        stdio: 'ignore',
        detached: true,
      },
    );
    orphan.unref();
    const orphanPid = orphan.pid!;
    try {
      writeFileSync(path.join(dataDir, DYNAMODB_PID_FILE), `${orphanPid}\n`);
      const orphanEndpoint = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100; i++) {
        try {
          await createTable(orphanEndpoint, 'held-by-the-orphan');
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }

      const fresh = await startDynamoDbLocal({ dataDir });
      try {
        expect(await until(() => !alive(orphanPid), 10_000)).toBe(true);
        expect(readFileSync(path.join(dataDir, DYNAMODB_PID_FILE), 'utf8').trim()).toBe(String(fresh.pid));
        await createTable(fresh.endpoint, 'written-after-the-restart');
        const { TableNames } = await client(fresh.endpoint).send(new ListTablesCommand({}));
        expect(TableNames).toEqual(expect.arrayContaining(['held-by-the-orphan', 'written-after-the-restart']));
      } finally {
        await fresh.stop();
      }
      expect(await until(() => !alive(fresh.pid!), 10_000)).toBe(true);
    } finally {
      if (alive(orphanPid)) process.kill(orphanPid, 'SIGKILL');
    }
  });
});

describe('s3rver as part of the stack', () => {
  it('runs in a process of its own, reports each request it served when asked, and has exited when stop() resolves', async () => {
    const served: S3ServedRequest[] = [];
    const s3Local = await startS3Local({ dataDir: tempDir(), buckets: ['reports'], onRequest: (request) => served.push(request) });
    const pid = s3Local.pid!;
    try {
      expect(pid).not.toBe(process.pid);
      expect(alive(pid)).toBe(true);
      const s3 = new S3Client({ endpoint: s3Local.endpoint, region: 'local', forcePathStyle: true, credentials: LOCAL_CREDENTIALS });
      await s3.send(new PutObjectCommand({ Bucket: 'reports', Key: 'five', Body: 'bytes' }));
      await (await s3.send(new GetObjectCommand({ Bucket: 'reports', Key: 'five' }))).Body!.transformToString();
      await s3Local.requestsReported();
      expect(served.map(({ method, url, bytesIn, bytesOut }) => ({ method, path: url.split('?')[0], bytesIn, bytesOut }))).toEqual([
        { method: 'PUT', path: '/reports/five', bytesIn: 5, bytesOut: 0 },
        { method: 'GET', path: '/reports/five', bytesIn: 0, bytesOut: 5 },
      ]);
    } finally {
      await s3Local.stop();
    }
    expect(alive(pid), `s3rver (pid ${pid}) outlived stop()`).toBe(false);
  });

  it('ends when the process that started it is killed with kill -9', async () => {
    const { child, pid, endpoint } = await spawnReady('s3-child.ts', tempDir());
    expect(alive(pid)).toBe(true);
    expect((await fetch(`${endpoint}/held`)).status).toBe(200);

    child.kill('SIGKILL');
    expect(await until(() => !alive(pid), 20_000), `s3rver (pid ${pid}) outlived its parent`).toBe(true);
  });
});
