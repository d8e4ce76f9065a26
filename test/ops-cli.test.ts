/**
 * The operator CLI (README.md#operator-cli), run as an operator runs it: a child
 * process of `bin/ops.mjs` (and once through `npx ops`, the bin entry),
 * against the test run's DynamoDB Local and s3rver (the environment of
 * test/support/global-setup.ts, passed through: TABLE_NAME, endpoints,
 * credentials). "Writes nothing" is proven by reading the table afterwards.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { customAlphabet } from 'nanoid';
import { afterAll, describe, expect, it } from 'vitest';
import { accountHistory, apiKeys, embeddedWarehouse, ledger, organizations } from '../lib/root';
import { COMMANDS } from '../infra/ops/commands';
import { runOps } from '../infra/ops/program';
import { newOrganization } from './support/api';
import { opsInProcess } from './support/ops';
import { SPAWNED_RUN_MS, spawnedTestTimeout } from './support/spawned';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'ops.mjs');
/** Per-run prefix: the warehouse is global to the file's table (test/support/own-table.ts). */
const P = customAlphabet('abcdefghijkmnopqrstuvwxyz23456789', 10)();
const dir = mkdtempSync(path.join(tmpdir(), 'ops-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args`; `env` replaces variables of this process's environment (undefined removes one). */
function ops(
  args: string[],
  env: Record<string, string | undefined> = {},
  command: [string, string[]] = [process.execPath, [BIN]],
): Promise<Run> {
  const childEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name];
  return new Promise((resolve) => {
    execFile(
      command[0],
      [...command[1], ...args],
      { cwd: ROOT, env: childEnv, timeout: SPAWNED_RUN_MS, maxBuffer: 10 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A successful run: exit 0, nothing but one JSON object (one line) on stdout. */
function json(run: Run): any {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0]!);
}

/** A failed run: this exit code, nothing on stdout, a message on stderr. */
function failed(run: Run, code: number, message: RegExp): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
}

/** A warehouse import line. */
const accountLine = (accountId: string, contacts = 2) =>
  JSON.stringify({
    accountId,
    name: `Account ${accountId}`,
    domain: `${accountId}.example`,
    status: 'active',
    industry: 'Software',
    employeeCount: 50,
    country: 'US',
    contacts: Array.from({ length: contacts }, (_, i) => ({
      contactId: `${accountId}-c${i}`,
      firstName: 'Ada',
      email: `c${i}@${accountId}.example`,
      mobilePhone: '+15551234567',
    })),
  });

/** Writes a file of this run's temporary folder. */
function file(name: string, text: string): string {
  const filePath = path.join(dir, name);
  writeFileSync(filePath, text);
  return filePath;
}

const exists = async (...accountIds: string[]) => (await embeddedWarehouse().getAccounts(accountIds)).map((a) => a.accountId);

describe('help and usage errors', () => {
  it('npx ops --help (the bin entry) exits 0 with the usage on stdout and no npm banner', async () => {
    const run = await ops(['--help'], { npm_config_loglevel: 'error' }, ['npx', ['--no-install', 'ops']]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.startsWith('Usage: ops <command> [options]')).toBe(true);
    for (const command of COMMANDS) expect(run.stdout).toContain(command.name);
    expect(run.stdout).toMatch(/Exit codes:/);
  });

  it('COMMAND --help exits 0 and lists its options, for every command', async () => {
    // Every command's help through the program in this process (the same program the binary runs: test/support/ops.ts),
    // and one through the binary, whose output must be the same bytes: one process, not one per command.
    const runs = await Promise.all(COMMANDS.map((command) => opsInProcess([command.name, '--help'])));
    const spawned = await ops(['org:credits', '--help']);
    expect(spawned).toEqual(runs[COMMANDS.findIndex((c) => c.name === 'org:credits')]);
    COMMANDS.forEach(({ name }, i) => {
      const run = runs[i]!;
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stdout.startsWith(`Usage: ops ${name} `), name).toBe(true);
      expect(run.stdout, name).toContain('--table <name>');
      expect(run.stderr, name).toBe('');
      // An example of the command itself, after its options.
      expect(run.stdout, name).toMatch(new RegExp(`\\nExamples:\\n  npx ops ${name}( |$)`, 'm'));
    });
    expect(runs[COMMANDS.findIndex((c) => c.name === 'org:credits')]!.stdout).toMatch(/--org <id>[\s\S]*--add <n>/);
  });

  it('help COMMAND is the same as COMMAND --help', async () => {
    const [viaHelp, viaFlag] = await Promise.all([ops(['help', 'warehouse:import']), ops(['warehouse:import', '--help'])]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(viaHelp.stdout).toContain('--dry-run');
  });

  it('an unknown option exits 2 with a message on stderr, and writes nothing', async () => {
    const id = `${P}-unknown-opt`;
    const run = await ops(['warehouse:import', file('unknown-option.jsonl', `${accountLine(id)}\n`), '--dryrun']);
    failed(run, 2, /unknown option '--dryrun'/);
    expect(run.stderr).toMatch(/--dry-run/); // the suggestion
    expect(await exists(id)).toEqual([]);
  });

  it('an unknown command, a missing required option and a malformed value exit 2', async () => {
    const [unknown, missing, malformed, none] = await Promise.all([
      ops(['org:delete', '--org', 'x']),
      ops(['org:credits', '--add', '5']),
      ops(['org:create', '--name', 'x', '--smb-credits', 'ten']),
      ops([]),
    ]);
    failed(unknown, 2, /unknown command 'org:delete'/);
    failed(missing, 2, /required option '--org <id>' not specified/);
    failed(malformed, 2, /'--smb-credits <n>' argument 'ten' is invalid/);
    failed(none, 2, /Usage: ops/);
  });

  it('--version prints the version (package.json) and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(await ops([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('a file that cannot be read is one readable line (exit 2), no raw ENOENT, no stack trace', async () => {
    const missing = path.join(dir, 'missing.jsonl');
    const [warehouse, crm] = await Promise.all([
      ops(['warehouse:import', '--dry-run', missing]),
      ops(['crm:import', '--org', 'org_x', dir]),
    ]);
    failed(warehouse, 2, new RegExp(`^error: cannot read ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no such file\n$`));
    failed(crm, 2, /^error: cannot read .*: it is a folder, not a file\n$/);
    for (const run of [warehouse, crm]) expect(run.stderr).not.toMatch(/ENOENT|EISDIR|\n\s+at /);
  });

  it('exits 1 with a message when there is no stack to work on', async () => {
    const run = await ops(['key:create', '--org', 'org_x'], { TABLE_NAME: undefined, DATA_DIR: path.join(dir, 'no-stack') });
    failed(run, 1, /No running local stack found/);
  });
});

describe('organizations, credits and keys', () => {
  it('org:create prints the organization and a working key; org:credits adds and takes away; key:revoke revokes', async () => {
    const created = json(await ops(['org:create', '--name', 'CLI Org', '--smb-credits', '100', '--max-enriching', '7']));
    expect(created).toEqual({ organizationId: expect.stringMatching(/^org_/), apiKey: expect.stringMatching(/^cek_/) });
    expect(await organizations().get(created.organizationId)).toMatchObject({ name: 'CLI Org', smbCredits: 100, maxEnrichingAccounts: 7 });

    expect(json(await ops(['org:credits', '--org', created.organizationId, '--add', '-30']))).toEqual({
      organizationId: created.organizationId,
      smb: 70,
      adjustmentId: expect.stringMatching(/^adj_/),
    });
    expect(json(await ops(['org:credits', '--org', created.organizationId, '--add=5']))).toEqual({
      organizationId: created.organizationId,
      smb: 75,
      adjustmentId: expect.stringMatching(/^adj_/),
    });
    expect(json(await ops(['key:revoke', '--key', created.apiKey, '--yes']))).toEqual({ revoked: true });
    failed(
      await ops(['key:revoke', '--key', created.apiKey.replace(/.$/, (c: string) => (c === 'a' ? 'b' : 'a')), '--yes']),
      1,
      /No such API key/,
    );
  });
});

describe('commands that cannot be undone: key:revoke and campaign:cancel ask first', () => {
  const unrevoked = async (apiKey: string) => (await apiKeys().find(apiKey))?.revokedAt === undefined;

  it('without --yes and without a terminal they exit 2 saying what they would do and to add --yes, and do nothing', async () => {
    const { apiKey } = await newOrganization();
    const [revoke, cancel] = await Promise.all([
      ops(['key:revoke', '--key', apiKey]),
      ops(['campaign:cancel', '--campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz']),
    ]);
    failed(
      revoke,
      2,
      /^error: key:revoke cannot be undone and there is no terminal to ask on: Revoke the API key cek_\S+…\? .* Add --yes to confirm\.\n$/,
    );
    failed(
      cancel,
      2,
      /^error: campaign:cancel cannot be undone and there is no terminal to ask on: Cancel the enrichment of camp_7Hq2kXv9LmN3pR5sT8wYz\? .* Add --yes to confirm\.\n$/,
    );
    expect(revoke.stderr).not.toContain(apiKey);
    expect(await unrevoked(apiKey)).toBe(true);
  });

  it('on a terminal they ask, and run only on "y"', async () => {
    const { apiKey } = await newOrganization();
    const asked: string[] = [];
    const output = (answer: string) => ({
      out: () => undefined,
      err: (text: string) => void asked.push(text),
      ask: async (question: string) => (asked.push(question), answer === 'y'),
    });
    expect(await runOps(['key:revoke', '--key', apiKey], COMMANDS, output('n'))).toBe(2);
    expect(asked).toEqual([expect.stringMatching(/^Revoke the API key cek_/), 'error: key:revoke: not confirmed; nothing was done.\n']);
    expect(await unrevoked(apiKey)).toBe(true);
    expect(await runOps(['key:revoke', '--key', apiKey], COMMANDS, output('y'))).toBe(0);
    expect(await unrevoked(apiKey)).toBe(false);
  });

  it('--help of each shows --yes', async () => {
    for (const name of ['key:revoke', 'campaign:cancel']) expect((await ops([name, '--help'])).stdout, name).toMatch(/-y, --yes/);
  });

  it(
    'org:credits retried with one --id adjusts once; the same ID with another amount is refused (issue #31)',
    { timeout: spawnedTestTimeout({ starts: 0, runs: 3 }) },
    async () => {
      const created = {
        organizationId: (
          await organizations().create({ name: 'Adjusted', smbCredits: 75, researchAgentCredits: 0, maxEnrichingAccounts: 10 })
        ).organization.id,
      };
      const adjust = ['org:credits', '--org', created.organizationId, '--add', '500', '--note', 'top-up', '--id', 'ticket-4711'];
      const [first, again] = await Promise.all([ops(adjust), ops(adjust)]);
      expect([json(first), json(again)]).toEqual(
        [0, 1].map(() => ({ organizationId: created.organizationId, smb: 575, adjustmentId: 'ticket-4711' })),
      );
      // Two processes at once above; the later calls through the same program in this process (test/support/ops.ts).
      expect(json(await opsInProcess(adjust))).toEqual({ organizationId: created.organizationId, smb: 575, adjustmentId: 'ticket-4711' });
      failed(
        await opsInProcess(['org:credits', '--org', created.organizationId, '--add', '1000', '--id', 'ticket-4711']),
        1,
        /already applied as \+500 credits/,
      );
      failed(
        await opsInProcess(['org:credits', '--org', created.organizationId, '--add', '1', '--id', 'has space']),
        1,
        /--id: 1\.\.128 visible ASCII/,
      );
      expect((await ledger().entriesOf(created.organizationId)).filter((e) => e.note === 'top-up').map((e) => e.amount)).toEqual([500]);
      expect(await ledger().audit(created.organizationId)).toMatchObject({ balance: 575, ledgerSum: 575 });
    },
  );

  it('org:limits reads the limits, overrides them (none removes an override) and refuses a malformed value or an unknown organization', async () => {
    const { organizationId } = json(await opsInProcess(['org:create', '--name', 'Limited', '--smb-credits', '10']));
    // The binary reads them once; the sequence after it runs through the same program in this process (test/support/ops.ts).
    const defaults = json(await ops(['org:limits', '--org', organizationId]));
    expect(defaults).toMatchObject({
      requests: { limit: 200, windowSeconds: 10 },
      exportsPerHour: 60,
      uploadsPerHour: 60,
      monthlySpend: { limit: null, spent: 0 },
      lowBalanceThreshold: null,
    });
    const set = json(
      await opsInProcess([
        'org:limits',
        '--org',
        organizationId,
        '--requests',
        '50',
        '--window-seconds',
        '5',
        '--exports-per-hour',
        '3',
        '--uploads-per-hour',
        '4',
        '--monthly-spend',
        '900',
        '--low-balance',
        '100',
      ]),
    );
    expect(set).toMatchObject({
      requests: { limit: 50, windowSeconds: 5 },
      exportsPerHour: 3,
      uploadsPerHour: 4,
      monthlySpend: { limit: 900, spent: 0 },
      lowBalanceThreshold: 100,
    });
    expect(
      json(await opsInProcess(['org:limits', '--org', organizationId, '--monthly-spend', 'none', '--low-balance', 'NONE'])),
    ).toMatchObject({
      requests: { limit: 50 },
      monthlySpend: { limit: null },
      lowBalanceThreshold: null,
    });
    failed(await opsInProcess(['org:limits', '--org', organizationId, '--requests', '0']), 2, /--requests/);
    failed(await opsInProcess(['org:limits', '--org', organizationId, '--monthly-spend', 'lots']), 2, /--monthly-spend/);
    failed(await opsInProcess(['org:limits', '--org', 'org_4fJ8kQ2mN7pR9sT3vW5xY', '--requests', '5']), 1, /organization/);
  });
});

describe('warehouse:import', () => {
  it('imports every line and prints the counts', async () => {
    const ids = [1, 2, 3].map((i) => `${P}-ok-${i}`);
    const run = await ops([
      'warehouse:import',
      file('ok.jsonl', `${accountLine(ids[0]!, 1)}\n\n${accountLine(ids[1]!, 0)}\r\n${accountLine(ids[2]!, 3)}\n`),
    ]);
    expect(json(run)).toEqual({ accounts: 3, contacts: 4 });
    const stored = await embeddedWarehouse().getAccounts(ids);
    expect(stored.map((a) => [a.accountId, a.contacts.length])).toEqual([
      [ids[0], 1],
      [ids[1], 0],
      [ids[2], 3],
    ]);
    // Nothing drawn on a stderr that is not a terminal.
    expect(run.stderr).toBe('');
  });

  it('a bad line 15,000 of 20,000 writes nothing, exits 3 and names line 15,000', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => accountLine(`${P}-big-${i + 1}`, 1));
    lines[14_999] = JSON.stringify({ accountId: `${P}-big-15000`, status: 'open', contacts: [] });
    const run = await ops(['warehouse:import', file('bad-15000.jsonl', `${lines.join('\n')}\n`)]);
    failed(run, 3, /bad-15000\.jsonl: line 15000: status: Invalid option: expected one of "active"\|"closed"\|"inactive"/);
    // Not the first chunks, not anything: line 1, the line before the bad one, the last line.
    expect(await exists(`${P}-big-1`, `${P}-big-1000`, `${P}-big-14999`, `${P}-big-20000`)).toEqual([]);
  });

  it('names every bad line, up to 20, then counts the rest; writes nothing (exit 3)', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => accountLine(`${P}-many-${i + 1}`, 1));
    // 25 bad lines: every even line from 2 to 50.
    for (let i = 1; i < 50; i += 2)
      lines[i] = i % 4 === 1 ? '{"accountId":' : JSON.stringify({ accountId: `${P}-many-${i + 1}`, status: 'open', contacts: [] });
    const run = await ops(['warehouse:import', file('many-bad.jsonl', `${lines.join('\n')}\n`)]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toBe('');
    const named = [...run.stderr.matchAll(/^  line (\d+): (.*)$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(named.map(([line]) => line)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * (i + 1)));
    expect(named[0]).toEqual([2, 'not valid JSON']);
    expect(named[1]![1]).toMatch(/^status: Invalid option/);
    expect(run.stderr).toMatch(/many-bad\.jsonl: 25 bad lines, nothing written:\n/);
    expect(run.stderr).toMatch(/\n  … and 5 more\n$/);
    expect(await exists(`${P}-many-1`, `${P}-many-60`)).toEqual([]);
  });

  it('names a line that is not JSON', async () => {
    const run = await ops(['warehouse:import', file('not-json.jsonl', `${accountLine(`${P}-nj-1`)}\n{"accountId": \n`)]);
    failed(run, 3, /line 2: not valid JSON/);
    expect(await exists(`${P}-nj-1`)).toEqual([]);
  });

  it('--dry-run validates and counts 20,000 lines and writes nothing', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => accountLine(`${P}-dry-${i + 1}`, i % 3));
    const contacts = lines.reduce((sum, _line, i) => sum + (i % 3), 0);
    const run = await ops(['warehouse:import', '--dry-run', file('dry.jsonl', `${lines.join('\n')}\n`)]);
    expect(json(run)).toEqual({ accounts: 20_000, contacts, dryRun: true });
    expect(await exists(`${P}-dry-1`, `${P}-dry-20000`)).toEqual([]);
  });
});

describe('crm:import', () => {
  it('adds the IDs of a file with an "ID" header; --dry-run counts and writes nothing', async () => {
    const { organizationId } = await newOrganization();
    const ids = [`${P}-crm-1`, `${P}-crm-2`];
    const csv = file('crm.csv', `ID,name\n${ids[0]},A\n${ids[1]},B\n${ids[0]},A again\n`);

    expect(json(await ops(['crm:import', '--org', organizationId, '--dry-run', csv]))).toEqual({ added: 2, dryRun: true });
    expect((await accountHistory().getFacts(organizationId, ids, { recency: false })).size).toBe(0);

    expect(json(await ops(['crm:import', '--org', organizationId, csv]))).toEqual({ added: 2 });
    const facts = await accountHistory().getFacts(organizationId, ids, { recency: false });
    expect(ids.map((id) => facts.get(id)?.crmTarget)).toEqual([true, true]);
  });

  it('a bad ID anywhere writes nothing and names its line', async () => {
    const { organizationId } = await newOrganization();
    const good = Array.from({ length: 3_000 }, (_, i) => `${P}-crmbad-${i}`);
    const lines = [...good.slice(0, 2_500), `bad\u0007id`, ...good.slice(2_500)];
    const run = await ops(['crm:import', '--org', organizationId, file('crm-bad.txt', `${lines.join('\n')}\n`)]);
    failed(run, 3, /crm-bad\.txt: line 2501: account ID "bad\\u0007id": must not contain control characters/);
    expect((await accountHistory().getFacts(organizationId, [good[0]!, good[2_999]!], { recency: false })).size).toBe(0);
  });

  it('refuses an unknown organization (exit 1)', async () => {
    failed(
      await ops(['crm:import', '--org', 'org_unknownunknownunknow', file('crm-org.txt', 'a\n')]),
      1,
      /No organization org_unknownunknownunknow/,
    );
  });
});

describe('campaign:import', () => {
  it('creates a campaign as another surface would, from a file with a header', async () => {
    const { organizationId } = await newOrganization();
    const run = await ops([
      'campaign:import',
      '--org',
      organizationId,
      '--via',
      'ui',
      '--status',
      'tam_only',
      '--name',
      'From the UI',
      file('camp.csv', 'account_id\na_1\na_2\na_1\n'),
    ]);
    const { campaignId } = json(run);
    expect(campaignId).toMatch(/^camp_/);
    const { campaigns } = await import('../lib/root');
    expect(await campaigns().get(organizationId, campaignId)).toMatchObject({
      status: 'tam_only',
      createdVia: 'ui',
      name: 'From the UI',
      accountsRequested: 2,
    });
  });

  it('refuses --via api (a choice it does not take) with exit 2', async () => {
    failed(
      await ops(['campaign:import', '--org', 'o', '--via', 'api', '--status', 'draft', '--name', 'n', 'f']),
      2,
      /Allowed choices are ui, data_cube/,
    );
  });
});

describe('key:create --scopes --name and key:list (docs/authentication.md)', () => {
  /** Runs a command in this process: its exit code and the JSON it printed. */
  const runIn = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runOps(args, COMMANDS, {
      out: (text: string) => void out.push(text),
      err: (text: string) => void err.push(text),
      ask: async () => false,
    });
    return { code, printed: out.join(''), stderr: err.join('') };
  };

  it('creates a key with only the scopes named, lists every key of the organization, and refuses an unknown scope', async () => {
    const { organizationId } = await newOrganization();
    const created = await runIn(['key:create', '--org', organizationId, '--scopes', 'org:read,campaigns:read', '--name', 'CRM sync']);
    expect(created.code, created.stderr).toBe(0);
    const { apiKey } = JSON.parse(created.printed) as { apiKey: string };
    expect((await apiKeys().find(apiKey))?.scopes).toEqual(['org:read', 'campaigns:read']);
    const listed = await runIn(['key:list', '--org', organizationId]);
    expect(listed.code, listed.stderr).toBe(0);
    const { keys } = JSON.parse(listed.printed) as { keys: { name: string; scopes: string[]; prefix: string }[] };
    expect(keys.map((k) => k.name).sort()).toEqual(['CRM sync', 'Operator key']);
    expect(keys.find((k) => k.name === 'CRM sync')).toMatchObject({ scopes: ['org:read', 'campaigns:read'], prefix: apiKey.slice(0, 12) });
    expect(listed.printed).not.toContain(apiKey);
    const refused = await runIn(['key:create', '--org', organizationId, '--scopes', 'org:read,org:write']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unknown scope "org:write"/);
    expect(JSON.parse((await runIn(['key:list', '--org', organizationId])).printed).keys).toHaveLength(2);
  });
});
