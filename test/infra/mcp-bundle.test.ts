/**
 * The MCP function's bundle as the stack deploys it (issue #42 budget:
 * ≤ 540 KB, 1 KB = 1,000 bytes of index.mjs): it carries the MCP SDK's
 * server, its tools (mcp/tools.json) and the Lambda client that invokes
 * their functions, and none of what it used to run in its own process (the
 * OpenAPI builder, the operations' handlers, the DynamoDB/S3/Step Functions
 * clients) nor Ajv (lib/lambda/no-ajv.ts). Built in a fresh process, it
 * answers `tools/list` with the generated tools.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, type BuiltBundle } from '../../bench/lib/bundle';
import { MCP_KB } from '../../bench/figures/bundles';
import { SUPPORT_FUNCTIONS } from '../../infra/routes';
import { MCP_TOOLS } from '../../mcp/tools';
import { TOOL_FUNCTIONS_VARIABLE } from '../../mcp/lambda-caller';

const run = promisify(execFile);

describe('the MCP function bundle', () => {
  let bundle: BuiltBundle;
  beforeAll(async () => {
    bundle = await buildBundle('Mcp', { entry: SUPPORT_FUNCTIONS.mcp.entry }, mkdtempSync(path.join(tmpdir(), 'mcp-bundle-')));
  });

  it(`is at most ${MCP_KB} KB, without the OpenAPI builder, the handlers' clients or Ajv`, () => {
    expect(bundle.bytes).toBeLessThanOrEqual(MCP_KB * 1_000);
    const packages = bundle.byPackage.map(([name]) => name);
    for (const absent of ['ajv', 'ajv-formats', 'zod-openapi', '@aws-sdk/client-dynamodb', '@aws-sdk/client-s3', '@aws-sdk/client-sfn'])
      expect(packages, absent).not.toContain(absent);
    expect(packages).toContain('@aws-sdk/client-lambda');
  });

  it('answers tools/list with the generated tools, in a fresh process', async () => {
    const event = {
      version: '2.0',
      rawPath: '/mcp',
      headers: { host: 'api.example.com', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      requestContext: { apiId: 'abc123', domainName: 'api.example.com', http: { method: 'POST', path: '/mcp', sourceIp: '203.0.113.9' } },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      isBase64Encoded: false,
    };
    const script = `const { handler } = await import(${JSON.stringify(`file://${bundle.file}`)}); console.log(JSON.stringify(await handler(${JSON.stringify(event)}, {})));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', [TOOL_FUNCTIONS_VARIABLE]: '{}' },
      cwd: path.dirname(bundle.file),
    });
    const answer = JSON.parse(stdout.trim().split('\n').at(-1)!) as { statusCode: number; body: string };
    expect(answer.statusCode).toBe(200);
    expect((JSON.parse(answer.body) as { result: { tools: unknown } }).result.tools).toEqual(MCP_TOOLS.tools);
  });
});
