/**
 * Data folders for the stacks a test spawns (`npm start` with `DATA_DIR` or
 * `--data-dir`, `startLocalStack({ dataDir })`): a new empty folder on a
 * memory-backed file system when the machine has one (`/dev/shm`), else in
 * the system's temporary folder.
 *
 * Why: with a data folder DynamoDB Local keeps its table in an SQLite file
 * and syncs it to disk on every write. A first start writes the demo
 * warehouse (3,000 accounts, each with its contacts and identifier index
 * entries): on a disk shared with other jobs that took over 8 min at load
 * 20 (issue #37), against 50 s in memory at the same load. What the tests
 * prove does not change: the folder's files outlive a `kill -9` of the
 * stack, and the next start reads them back, on either file system.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { STACK_FILE } from '../../infra/local/data-folder';
import { DYNAMODB_PID_FILE } from '../../infra/local/emulators';
import { alive, SPAWNED_READY_MS, SPAWNED_RUN_MS, untilStackReady, type SpawnedOutput } from './spawned';

/** The variable naming the run's folder for the demo data template (test/support/global-setup.ts, {@link fillWithDemoData}). */
export const SEEDED_TEMPLATE_ENV = 'TEST_DEMO_DATA_TEMPLATE';

/** Where data folders go: `/dev/shm` if it is writable, else the system's temporary folder. */
function parentFolder(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * Makes a new, empty folder named `<prefix>XXXXXX` for a spawned stack's data; the caller removes it.
 * @returns its absolute path.
 */
export function stackDataFolder(prefix: string): string {
  return mkdtempSync(path.join(parentFolder(), prefix));
}

/** Variables of a test worker that name its own table and bucket: unset for a stack on a {@link fillWithDemoData} folder. */
const WORKER_NAMES = [
  'DYNAMODB_ENDPOINT',
  'S3_ENDPOINT',
  'SFN_ENDPOINT',
  'TABLE_NAME',
  'BUCKET_NAME',
  'CURSOR_SECRET',
  'STATE_MACHINE_ARN',
  'DATA_DIR',
];

/**
 * `env` without this worker's local-stack variables (its emulators' endpoints, its own table and bucket, its data
 * folder): a spawned `npm start` then uses the default table and bucket names, the ones of a {@link fillWithDemoData}
 * folder. With other names it would find no demo organization there and seed one again (correct, only slower).
 */
export function stackEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of WORKER_NAMES) delete copy[name];
  return copy;
}

/** Files of a stopped stack's folder that belong to that stack alone: never copied (a start writes its own). */
const PER_STACK_FILES = new Set([STACK_FILE, DYNAMODB_PID_FILE, 'endpoints.json', 'cursor-secret']);

/**
 * Fills `dataDir` (new or empty) with what a first `npm start` leaves in a data folder once stopped: the demo
 * organization, its keys and the demo warehouse (infra/local/seed.ts), in its DynamoDB Local file and bucket folder.
 * The stack started on it next finds the demo data and does not write it again: a restart, as on any developer's
 * second `npm start`.
 *
 * Why: a first start writes the demo warehouse (3,000 accounts, their contacts and about 38,000 identifier-index
 * entries), most of a spawned stack's start (issue #37). Tests that prove something of a running or restarted
 * stack (a crash, a webhook's redelivery, the folder's claim) do not need to watch that write, so the run writes it
 * once: the first caller runs a real `npm start` on a template folder of the run (test/support/global-setup.ts), stops
 * it with SIGTERM, and every caller gets a copy. `test/quickstart.test.ts` still starts on an empty folder.
 * Spawn the stack with {@link stackEnvironment}'s names. Without the run's template folder (a file run outside
 * vitest.config.ts) nothing is copied and the stack seeds as usual.
 */
export async function fillWithDemoData(dataDir: string): Promise<void> {
  const template = process.env[SEEDED_TEMPLATE_ENV];
  if (!template) return;
  const done = path.join(template, 'done');
  const failed = path.join(template, 'failed');
  let building = false;
  try {
    mkdirSync(path.join(template, 'building'));
    building = true;
  } catch {
    // Another worker builds it.
  }
  if (building) {
    try {
      await buildTemplate(path.join(template, 'data'));
      writeFileSync(done, '');
    } catch (error) {
      writeFileSync(failed, String(error instanceof Error ? error.stack : error));
      throw error;
    }
  } else {
    const until = Date.now() + SPAWNED_READY_MS + SPAWNED_RUN_MS;
    while (!existsSync(done)) {
      if (existsSync(failed)) throw new Error(`the demo data folder of this run failed to build:\n${readFileSync(failed, 'utf8')}`);
      if (Date.now() > until) throw new Error(`the demo data folder of this run was not built within ${(until - Date.now()) / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  mkdirSync(dataDir, { recursive: true });
  cpSync(path.join(template, 'data'), dataDir, {
    recursive: true,
    filter: (source) => !PER_STACK_FILES.has(path.basename(source)),
  });
}

/** Runs `npm start` on an empty `dataDir` until it is ready, then stops it with SIGTERM (its own shutdown). */
async function buildTemplate(dataDir: string): Promise<void> {
  const child = spawn('npm', ['start', '--', '--data-dir', dataDir], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    detached: true,
    env: { ...stackEnvironment(), PORT: '0', npm_config_loglevel: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output: SpawnedOutput = { text: '' };
  try {
    output = await untilStackReady(child);
    const jvm = Number(readFileSync(path.join(dataDir, 'dynamodb', DYNAMODB_PID_FILE), 'utf8'));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // Stopped as its own shutdown does: its DynamoDB Local gone (the file complete), its PID file and claim removed.
    const until = Date.now() + SPAWNED_RUN_MS;
    while (alive(jvm) || existsSync(path.join(dataDir, 'dynamodb', DYNAMODB_PID_FILE)) || existsSync(path.join(dataDir, STACK_FILE))) {
      if (Date.now() > until) throw new Error(`npm start did not stop cleanly:\n${output.text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
}
