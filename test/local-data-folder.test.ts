/**
 * One stack per data folder (README.md#set-up), against real `npm start`
 * children on one temporary data folder: a second start refuses, naming the
 * running stack's process and port, and leaves it serving with its
 * endpoints.json unchanged; once that stack is killed (`kill -9`, its record
 * left behind) the folder is reused. Every wait is on a readiness signal
 * (`GET /health` 200, the process's exit), never on a fixed sleep.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../infra/local/emulators';
import { STACK_FILE, type StackRecord } from '../infra/local/data-folder';
import { SPAWNED_READY_MS, SPAWNED_RUN_MS } from './support/spawned';
import { fillWithDemoData, stackDataFolder, stackEnvironment } from './support/data-folder';

const ROOT = path.resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = SPAWNED_READY_MS;
const dataDir = stackDataFolder('cea-data-folder-');
const children: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(port: number): Started {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true, // its own process group, ended as a whole
    env: { ...stackEnvironment(), PORT: String(port), DATA_DIR: dataDir, npm_config_loglevel: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Polls `/health` until it answers 200; fails if the process exits first. */
async function untilHealthy(started: Started, url: string): Promise<void> {
  let exited = false;
  void started.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`npm start exited before it was ready:\n${started.output()}`);
    const status = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group is already gone.
  }
}

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    killGroup(child, 'SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    killGroup(child, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
}, SPAWNED_RUN_MS);

describe('a data folder serves one stack at a time (README.md#set-up)', () => {
  it(
    'refuses a second start while the first runs, leaves the first serving, and reuses the folder once the first is gone',
    async () => {
      // A folder an earlier start seeded (the demo data), as a developer's is: the claim is what this test watches.
      await fillWithDemoData(dataDir);
      const firstPort = await freePort();
      const firstUrl = `http://127.0.0.1:${firstPort}`;
      const first = start(firstPort);
      await untilHealthy(first, firstUrl);
      const endpointsBefore = readFileSync(path.join(dataDir, 'endpoints.json'), 'utf8');
      const record = JSON.parse(readFileSync(path.join(dataDir, STACK_FILE), 'utf8')) as StackRecord;
      // The record names a process of the first stack (its process group) and its port.
      expect(execFileSync('ps', ['-o', 'pgid=', '-p', String(record.pid)], { encoding: 'utf8' }).trim()).toBe(String(first.child.pid));
      expect(record.port).toBe(firstPort);

      const second = start(await freePort());
      const code = await second.exited;
      expect(code).not.toBe(0);
      expect(second.output()).toContain(`pid ${record.pid}`);
      expect(second.output()).toContain(`http://127.0.0.1:${firstPort}`);

      // The first stack is untouched: still ready (its DynamoDB Local and bucket answer), same endpoints.json, same record.
      expect(first.child.exitCode).toBeNull();
      expect((await fetch(`${firstUrl}/health`)).status).toBe(200);
      expect(readFileSync(path.join(dataDir, 'endpoints.json'), 'utf8')).toBe(endpointsBefore);
      expect(JSON.parse(readFileSync(path.join(dataDir, STACK_FILE), 'utf8'))).toEqual(record);

      // A crash leaves the record behind; its process is gone, so the next start reuses the folder.
      killGroup(first.child, 'SIGKILL');
      await first.exited;
      expect(JSON.parse(readFileSync(path.join(dataDir, STACK_FILE), 'utf8')).pid).toBe(record.pid);
      const thirdPort = await freePort();
      const third = start(thirdPort);
      await untilHealthy(third, `http://127.0.0.1:${thirdPort}`);
      const reclaimed = JSON.parse(readFileSync(path.join(dataDir, STACK_FILE), 'utf8')) as StackRecord;
      expect(reclaimed.pid).not.toBe(record.pid);
      expect(reclaimed.port).toBe(thirdPort);
    },
    4 * START_TIMEOUT_MS, // a fourth start: the run's demo data folder, if this test builds it
  );
});
