/**
 * The README's quickstart, verbatim (README.md#set-up; issue "the first hour"):
 * the first ```sh block under "## Quickstart" is run with bash from a
 * directory outside the repository, against a real `npm start` child
 * process on a free port with its data folder in a temporary directory. It
 * must finish, download the export, and leave the repository as it was; with
 * a wrong key it must stop at its first request, with a non-zero exit.
 *
 * The same `npm start` is watched from its spawn for readiness (README.md#set-up):
 * `/health` answers 503 with what is still starting until it answers 200,
 * and at that first 200 the demo key is served and endpoints.json (the
 * operator CLI's way to the stack) is written.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READINESS_STEPS } from '../infra/local/readiness';
import { SPAWNED_READY_MS, SPAWNED_RUN_MS, untilStackReady, type SpawnedOutput } from './support/spawned';
import { stackDataFolder } from './support/data-folder';

const ROOT = path.resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = SPAWNED_READY_MS;
const SCRIPT_TIMEOUT_MS = SPAWNED_RUN_MS;

/** The first ```sh block after the "## Quickstart" heading of README.md, as written. */
function quickstartScript(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Quickstart\n'));
  const block = /\n```sh\n([\s\S]*?)\n```\n/.exec(section);
  if (!block) throw new Error('README.md has no ```sh block under "## Quickstart"');
  return `${block[1]}\n`;
}

/** A TCP port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** What git sees in the work tree (tracked changes and untracked files, ignored ones aside). */
function gitStatus(): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );
}

/** Files under a folder (relative paths with sizes and times), to compare before and after. */
function listing(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      const { size, mtimeMs } = statSync(file);
      return `${path.relative(dir, file)} ${size} ${mtimeMs}`;
    })
    .sort();
}

const base = stackDataFolder('quickstart-');
const dataDir = path.join(base, 'data');
const workDir = path.join(base, 'work');
const scratchRoot = path.join(base, 'tmp');
let stack: ChildProcess | undefined;
let stackOutput: SpawnedOutput = { text: '' };
let apiUrl = '';
let statusBefore = '';
let localBefore: string[] = [];
/** Every answer of `/health` from the spawn to the first 200, and what a user needs at that 200. */
const health: { answers: { status: number; body: any }[]; demoKey?: { status: number; text: string }; endpointsFile?: boolean } = {
  answers: [],
};

/** Polls `/health` until it answers 200, recording each answer; then what the stack serves at that moment. */
async function watchHealth(): Promise<void> {
  for (;;) {
    if (stack?.exitCode !== null) return;
    const answer = await fetch(`${apiUrl}/health`).then(
      async (res) => ({ status: res.status, body: await res.json() }),
      () => undefined, // not listening yet
    );
    if (answer) health.answers.push(answer);
    if (answer?.status === 200) {
      const demoKey = await fetch(`${apiUrl}/local/demo-key`);
      health.demoKey = { status: demoKey.status, text: await demoKey.text() };
      health.endpointsFile = existsSync(path.join(dataDir, 'endpoints.json'));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs the quickstart script with bash from the work folder; a run that does not end within `timeoutMs` is killed (code non-zero). */
function runQuickstart(env: Record<string, string>, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const scriptFile = path.join(base, 'quickstart.sh');
  writeFileSync(scriptFile, quickstartScript());
  return new Promise((resolve) => {
    execFile(
      'bash',
      [scriptFile],
      { cwd: workDir, env: { ...process.env, API: apiUrl, TMPDIR: scratchRoot, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Ends the `npm start` process group (npm, tsx, node, DynamoDB Local's java): SIGTERM, then SIGKILL. */
async function stopStack(): Promise<void> {
  const child = stack;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // The group is already gone.
    }
  };
  signalGroup('SIGTERM');
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') signalGroup('SIGKILL');
  // Whatever is left of the group (a child that ignored SIGTERM) goes too.
  signalGroup('SIGKILL');
}

beforeAll(async () => {
  statusBefore = await gitStatus();
  localBefore = listing(path.join(ROOT, '.local'));
  mkdirSync(workDir);
  mkdirSync(scratchRoot);
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  stack = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true, // its own process group, ended as a whole in afterAll
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, npm_config_loglevel: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watching = watchHealth();
  stackOutput = await untilStackReady(stack, 'npm start', START_TIMEOUT_MS);
  await watching;
}, START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await stopStack();
  rmSync(base, { recursive: true, force: true });
}, SPAWNED_RUN_MS);

describe('npm start and test mode (docs/test-mode.md)', () => {
  it('prints a test key beside the demo key and serves it at GET /local/test-key; it acts in test mode on the demo organization', async () => {
    const printed = /test key\s+(cek_test_\S+)/.exec(stackOutput.text)?.[1];
    expect(printed, stackOutput.text).toMatch(/^cek_test_[1-9A-HJ-NP-Za-km-z]{40}$/);
    expect((await (await fetch(`${apiUrl}/local/test-key`)).text()).trim()).toBe(printed);
    const live = await fetch(`${apiUrl}/v1/org/describe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(await (await fetch(`${apiUrl}/local/demo-key`)).text()).trim()}` },
    });
    const test = await fetch(`${apiUrl}/v1/org/describe`, { method: 'POST', headers: { authorization: `Bearer ${printed}` } });
    expect(test.headers.get('test-mode')).toBe('true');
    const [liveBody, testBody] = (await Promise.all([live.json(), test.json()])) as {
      data: { organization: unknown; credits: { smb: number } };
    }[];
    expect(testBody!.data.organization).toEqual(liveBody!.data.organization);
    expect(testBody!.data.credits.smb).toBe(1_000_000);
  });
});

describe('README quickstart', () => {
  it(
    'runs verbatim with bash from a directory outside the repository, downloads the export, and writes nothing into the repository',
    async () => {
      const run = await runQuickstart({}, SCRIPT_TIMEOUT_MS);
      expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nstack:\n${stackOutput.text}`).toBe(0);

      // The demo organization answered, the campaign was enriched.
      expect(run.stdout).toContain('"name":"Acme Demo"');
      expect(run.stdout).toMatch(/^status: enriched$/m);
      expect(run.stdout).not.toMatch(/"error":\{/);
      // One answer per line: every envelope the script printed is a line of its own.
      const answers = run.stdout.split('\n').filter((line) => line.includes('"data":'));
      expect(answers.length).toBeGreaterThanOrEqual(8);
      for (const line of answers) expect(() => JSON.parse(line), line).not.toThrow();

      // The files went to the scratch folder the script made, nowhere else.
      expect(readdirSync(workDir)).toEqual([]);
      const [scratch, ...others] = readdirSync(scratchRoot);
      expect(others).toEqual([]);
      const files = readdirSync(path.join(scratchRoot, scratch!)).sort();
      expect(files).toHaveLength(2);
      expect(files[0]).toBe('ids.csv');
      expect(files[1]).toMatch(/^q4-targets-\d{4}-\d{2}-\d{2}\.csv$/);

      // The export: the catalog header, rows, and E.164 phones written as they are (docs/csv.md).
      const csv = readFileSync(
        path.join(
          scratchRoot,
          scratch!,
          files.find((f) => f.startsWith('q4-targets'))!,
        ),
      );
      expect([...csv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      const [header, ...rows] = parse(csv, { bom: true, record_delimiter: '\r\n' }) as string[][];
      expect(header!.slice(0, 3)).toEqual(['account_id', 'account_name', 'account_domain']);
      expect(rows.length).toBeGreaterThan(0);
      const phones = rows.map((row) => row[header!.indexOf('mobile_phone')]!).filter((phone) => phone !== '');
      expect(phones.length).toBeGreaterThan(0);
      for (const phone of phones) expect(phone).toMatch(/^\+[1-9][0-9]{6,14}$/);

      // The repository is as it was: no new or changed file, and .local untouched (the stack used DATA_DIR).
      expect(await gitStatus()).toBe(statusBefore);
      expect(listing(path.join(ROOT, '.local'))).toEqual(localBefore);
      expect(existsSync(path.join(dataDir, 'demo.json'))).toBe(true);
    },
    SCRIPT_TIMEOUT_MS + 30_000,
  );

  it('stops at its first request with a wrong key: non-zero exit within seconds, the 401 answer and the failed line shown, nothing after it run', async () => {
    const scratchBefore = readdirSync(scratchRoot);
    // Killed (and so failed) if it has not stopped within 30 s: the old script ran on for minutes.
    const run = await runQuickstart({ KEY: `cek_${'0'.repeat(40)}` }, SPAWNED_RUN_MS);
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(JSON.parse(run.stdout.trim())).toMatchObject({
      data: null,
      error: { code: 'invalid_api_key', message: expect.stringContaining('not recognized') },
    });
    expect(run.stderr).toMatch(/^Stopped: line \d+ failed/m);
    expect(run.stdout).not.toMatch(/status:/);
    // Its scratch folder holds nothing: it stopped before the first file.
    const scratch = readdirSync(scratchRoot).filter((name) => !scratchBefore.includes(name));
    for (const folder of scratch) expect(readdirSync(path.join(scratchRoot, folder))).toEqual([]);
  });
});

describe('npm start readiness (README.md#set-up)', () => {
  it('answers /health 503 with what is still starting until it is ready, then 200 with the demo key served and endpoints.json written', () => {
    const [first] = health.answers;
    const last = health.answers.at(-1)!;
    // The port listens before the stack is ready: the first answer is a 503 naming what is still starting.
    expect(first).toMatchObject({ status: 503, body: { status: 'starting' } });
    expect(last).toEqual({ status: 200, body: { status: 'ok' } });
    for (const answer of health.answers.slice(0, -1)) {
      expect(answer.status).toBe(503);
      expect(answer.body.starting.length).toBeGreaterThan(0);
      for (const step of answer.body.starting) expect(READINESS_STEPS).toContain(step);
    }
    // What is starting only shrinks (a completed step never starts again).
    for (let i = 1; i < health.answers.length - 1; i++)
      for (const step of health.answers[i]!.body.starting) expect(health.answers[i - 1]!.body.starting).toContain(step);
    expect(health.demoKey?.status).toBe(200);
    expect(health.demoKey?.text.trim()).toBe(JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')).apiKey);
    expect(health.endpointsFile).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dataDir, 'endpoints.json'), 'utf8')).apiUrl).toBe(apiUrl);
  });
});
