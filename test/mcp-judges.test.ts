/**
 * The MCP server judged by tools we did not write (docs/agents.md):
 * the MCP Inspector CLI lists and calls the tools over Streamable HTTP, and
 * the official conformance suite (`@modelcontextprotocol/conformance`) runs
 * the server scenarios that apply to any server. The others need a server
 * built for them and do not apply here: `tools-call-*` call test tools of the
 * suite's reference server (`test_simple_text`, `test_image_content`, …);
 * `logging-set-level`, `completion-complete`, `resources-*`, `prompts-*` and
 * `tools-call-with-logging` need capabilities this server does not offer;
 * `tools-call-sampling`, `tools-call-elicitation`, the elicitation SEPs and
 * `server-sse-*` need a server that sends requests or streams during a call,
 * which a stateless server answering JSON does not (the stdio bridge asks the
 * user instead; test/mcp-stdio.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { newOrganization, useApi } from './support/api';
import { apiKeys, organizations } from '../lib/root';
import { toolName } from '../lib/contract/mcp';
import { MCP_ROUTES } from '../infra/routes';
import { SPAWNED_RUN_MS, spawnedTestTimeout } from './support/spawned';

const api = useApi();
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

/** The conformance scenarios that apply to any MCP server. */
export const APPLICABLE_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;

describe('MCP judges', () => {
  it(
    'the MCP Inspector CLI lists the tools and calls describe_organization and list_events ($defs in both its schemas) with a test key',
    { timeout: spawnedTestTimeout({ starts: 0, runs: 3 }) },
    async () => {
      const { organizationId } = await newOrganization();
      const key = await apiKeys().create((await organizations().testTwin(organizationId)).id);
      const common = ['--cli', `${api()}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${key}`];
      // inspector-cli 1.0.3 finds its own package.json by testing `../package.json` against the working directory
      // (then imports it relative to itself): run it from a folder whose parent has one.
      const cwd = path.join(ROOT, 'test');
      const listed = await run(bin('mcp-inspector-cli'), [...common, '--method', 'tools/list'], { cwd, timeout: SPAWNED_RUN_MS });
      const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      expect(names).toEqual(MCP_ROUTES.map((route) => toolName(route.operation.operationId)));
      const called = await run(bin('mcp-inspector-cli'), [...common, '--method', 'tools/call', '--tool-name', 'describe_organization'], {
        cwd,
        timeout: SPAWNED_RUN_MS,
      });
      const result = JSON.parse(called.stdout) as {
        isError?: boolean;
        structuredContent: { organization: { id: string }; credits: { smb: number } };
      };
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent.organization.id).toBe(organizationId);
      expect(result.structuredContent.credits.smb).toBe(1_000_000);
      // A tool whose schemas share subschemas under $defs: the CLI converts the arguments by the input schema and its
      // SDK client compiles the output schema from tools/list and checks the answer against it.
      const feed = await run(
        bin('mcp-inspector-cli'),
        [
          ...common,
          '--method',
          'tools/call',
          '--tool-name',
          'list_events',
          '--tool-arg',
          'limit=5',
          'filters={"type":["campaign.enriched"]}',
        ],
        { cwd, timeout: SPAWNED_RUN_MS },
      );
      const events = JSON.parse(feed.stdout) as { isError?: boolean; structuredContent: { events: unknown[]; nextCursor: null } };
      expect(events.isError ?? false, feed.stdout).toBe(false);
      expect(events.structuredContent).toEqual({ events: [], nextCursor: null });
    },
  );

  it.each(APPLICABLE_SCENARIOS)(
    'conformance scenario %s passes',
    { timeout: spawnedTestTimeout({ starts: 0, runs: 1 }) },
    async (scenario) => {
      const outputDir = mkdtempSync(path.join(tmpdir(), 'mcp-conformance-'));
      const answer = await run(bin('conformance'), ['server', '--url', `${api()}/mcp`, '--scenario', scenario, '--output-dir', outputDir], {
        cwd: ROOT,
        timeout: SPAWNED_RUN_MS,
      }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '', failed: true }));
      const checks = readdirSync(outputDir, { recursive: true })
        .map(String)
        .filter((file) => file.endsWith('checks.json'))
        .flatMap(
          (file) => JSON.parse(readFileSync(path.join(outputDir, file), 'utf8')) as { id: string; status: string; errorMessage?: string }[],
        );
      expect(checks.length, answer.stdout + answer.stderr).toBeGreaterThan(0);
      expect(
        checks.filter((check) => check.status === 'FAILURE'),
        answer.stdout,
      ).toEqual([]);
      expect('failed' in answer, answer.stdout + answer.stderr).toBe(false);
    },
  );
});
