/**
 * Redocly Respect runs the Arazzo workflow of docs/arazzo.json end to end
 * against the local stack with a test key (issue #37): presign an upload, PUT
 * the file to storage (a step of its own), create, quote, enrich, poll,
 * export. Respect also checks every answer against docs/openapi.json. The
 * planted-fault test proves Respect fails a workflow that breaks.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ARAZZO_SOURCE } from '../lib/contract/arazzo';
import { apiKeys, organizations } from '../lib/root';
import { newOrganization, useApi } from './support/api';
import { uniquePrefix } from './enrichment/support';
import { SPAWNED_RUN_MS } from './support/spawned';

const ROOT = path.resolve(import.meta.dirname, '..');
const api = useApi();
const run = promisify(execFile);

/** A test key of a fresh organization's twin (as `key:create --test` makes one). */
async function testKey(): Promise<string> {
  const live = await newOrganization({ name: `Respect ${uniquePrefix()}` });
  const twin = await organizations().testTwin(live.organizationId);
  return apiKeys().create(twin.id);
}

interface RespectStep {
  stepId: string;
  status: string;
}

/** Runs `redocly respect` on an Arazzo file; returns its exit code and each step's result (from --json-output). */
async function respect(arazzoFile: string, apiKey: string) {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'respect-')), 'result.json');
  const inputs = {
    apiKey,
    name: 'Respect run',
    idempotencyKey: `respect-${uniquePrefix()}`,
    accountIdsFile: 'account_id\ntest_found_1\ntest_found_2\ntest_nocontacts_3\n',
  };
  const args = [
    path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
    'respect',
    arazzoFile,
    '--input',
    JSON.stringify(inputs),
    '--server',
    `${ARAZZO_SOURCE}=${api()}`,
    '--json-output',
    out,
  ];
  let code = 0;
  let output = '';
  try {
    const result = await run(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 32 * 1024 * 1024,
    });
    output = result.stdout + result.stderr;
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    code = failed.code;
    output = failed.stdout + failed.stderr;
  }
  const report = JSON.parse(readFileSync(out, 'utf8'));
  const steps: RespectStep[] = Object.values(
    report.files as Record<string, { executedWorkflows: { executedSteps: { stepId: string; status: string }[] }[] }>,
  ).flatMap((file) =>
    file.executedWorkflows.flatMap((workflow) => workflow.executedSteps.map((step) => ({ stepId: step.stepId, status: step.status }))),
  );
  return { code, output, steps };
}

describe('Redocly Respect runs docs/arazzo.json against the local stack', () => {
  it(
    'end to end with a test key: every step passes, the PUT to storage a step of its own',
    async () => {
      const result = await respect(path.join(ROOT, 'docs/arazzo.json'), await testKey());
      expect(result.code, result.output).toBe(0);
      const arazzo = JSON.parse(readFileSync(path.join(ROOT, 'docs/arazzo.json'), 'utf8'));
      const stepIds = arazzo.workflows[0].steps.map((s: { stepId: string }) => s.stepId);
      expect(stepIds).toContain('uploadAccountList');
      // Every step ran and passed (the poll may have run more than once).
      expect([...new Set(result.steps.map((s) => s.stepId))]).toEqual(stepIds);
      expect(result.steps.filter((s) => s.status !== 'success' && s.stepId !== 'waitForEnrichment')).toEqual([]);
      expect(result.steps.at(-1)).toEqual({ stepId: 'exportCampaign', status: 'success' });
    },
    SPAWNED_RUN_MS,
  );

  it(
    'catches a planted fault: without the PUT step (the upload as prose, as before) the workflow fails at create',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'respect-fault-'));
      copyFileSync(path.join(ROOT, 'docs/openapi.json'), path.join(dir, 'openapi.json'));
      const arazzo = JSON.parse(readFileSync(path.join(ROOT, 'docs/arazzo.json'), 'utf8'));
      arazzo.workflows[0].steps = arazzo.workflows[0].steps.filter((s: { stepId: string }) => s.stepId !== 'uploadAccountList');
      writeFileSync(path.join(dir, 'arazzo.json'), JSON.stringify(arazzo));
      const result = await respect(path.join(dir, 'arazzo.json'), await testKey());
      expect(result.code).not.toBe(0);
      expect(
        result.steps.map((s) => [s.stepId, s.status]),
        result.output,
      ).toEqual([
        ['createUpload', 'success'],
        ['createCampaign', 'error'],
      ]);
    },
    SPAWNED_RUN_MS,
  );
});
