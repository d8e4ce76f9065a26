/**
 * Figures of the MCP server (issue #42; docs/agents.md), in one run:
 * - a warm `tools/call` of `get_campaign` over Streamable HTTP against the
 *   local stack's `/mcp` (each tool call runs the operation's handler in the
 *   server's process, mcp/in-process.ts), against the same operation over
 *   HTTP (`POST /v1/campaigns/get`), same campaign, same key, interleaved
 *   one for one so the machine's load falls on both alike: median over
 *   median ≤ 1.3;
 * - the bytes of the `tools/list` answer (≤ 64 KB) and the longest tool
 *   description (≤ 1,000 characters);
 * - the bytes of the MCP function's bundle as the stack deploys it (≤ 540 KB).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { post, PATHS } from '../lib/api';
import { smallFixture } from '../lib/fixtures';
import { median, percentileOfSorted, round } from '../lib/stats';
import { buildBundle } from '../lib/bundle';
import { MCP_KB } from './bundles';
import { SUPPORT_FUNCTIONS } from '../../infra/routes';
import { MAX_TOOL_DESCRIPTION_CHARS, MCP_PATH, TOOLS_LIST_BUDGET_BYTES, TOOLS_LIST_HEADROOM_BYTES } from '../../lib/contract/mcp';
import { TOOL_NAMES } from '../../client/mcp-protocol';

/** Issue #42 budgets. */
const WARM_RATIO = 1.3;

export async function runMcp(results: Results, stack: BenchStack, options: { calls: number; outDir: string }): Promise<void> {
  const group = 'MCP server';
  const { apiKey, campaignId } = await smallFixture(stack, 'mcp');
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(MCP_PATH, stack.apiUrl), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  try {
    const viaMcp = async () => {
      const started = performance.now();
      const result = (await client.callTool({ name: TOOL_NAMES.get, arguments: { campaignId } })) as CallToolResult;
      if (result.isError) throw new Error(`get_campaign failed: ${JSON.stringify(result.structuredContent)}`);
      return performance.now() - started;
    };
    const viaHttp = async () => {
      const reply = await post(stack, PATHS.get, apiKey, { campaignId });
      if (reply.status !== 200) throw new Error(`get answered ${reply.status}`);
      return reply.ms;
    };
    for (let i = 0; i < 20; i++) await Promise.all([viaMcp(), viaHttp()]);
    const mcp: number[] = [];
    const http: number[] = [];
    for (let i = 0; i < options.calls; i++) {
      // Alternate which goes first, so neither always runs on a machine the other just warmed.
      if (i % 2 === 0) {
        mcp.push(await viaMcp());
        http.push(await viaHttp());
      } else {
        http.push(await viaHttp());
        mcp.push(await viaMcp());
      }
    }
    const p95 = (values: number[]) =>
      percentileOfSorted(
        [...values].sort((a, b) => a - b),
        95,
      );
    const ratio = median(mcp) / median(http);
    results.add({
      group,
      name: 'warm tool call of get_campaign over Streamable HTTP, in-process, over the same operation over HTTP',
      value: round(ratio, 2),
      unit: '×',
      budget: { op: '<=', limit: WARM_RATIO, text: `≤ ${WARM_RATIO} × HTTP, same run` },
      floor: { value: round(median(http), 2), unit: 'ms', what: 'POST /v1/campaigns/get, median, same run' },
      extra: {
        'MCP median ms': round(median(mcp), 2),
        'MCP p95 ms': round(p95(mcp), 2),
        'HTTP median ms': round(median(http), 2),
        'HTTP p95 ms': round(p95(http), 2),
        calls: options.calls,
      },
    });

    const answer = await fetch(new URL(MCP_PATH, stack.apiUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const text = await answer.text();
    const tools = (JSON.parse(text) as { result: { tools: Tool[] } }).result.tools;
    results.add({
      group,
      name: 'tools/list answer',
      value: Buffer.byteLength(text),
      unit: 'bytes',
      budget: { op: '<=', limit: TOOLS_LIST_BUDGET_BYTES, text: `≤ 64 KB (${TOOLS_LIST_BUDGET_BYTES.toLocaleString('en-US')} bytes)` },
      extra: {
        tools: tools.length,
        'headroom kept (58 KB)': `${(TOOLS_LIST_HEADROOM_BYTES - Buffer.byteLength(text)).toLocaleString('en-US')} bytes below ${TOOLS_LIST_HEADROOM_BYTES.toLocaleString('en-US')}`,
      },
    });
    const longest = tools.reduce((max, tool) => ((tool.description ?? '').length > (max.description ?? '').length ? tool : max));
    results.add({
      group,
      name: `longest tool description (${longest.name})`,
      value: (longest.description ?? '').length,
      unit: 'characters',
      budget: { op: '<=', limit: MAX_TOOL_DESCRIPTION_CHARS, text: `≤ ${MAX_TOOL_DESCRIPTION_CHARS} characters` },
    });
  } finally {
    await client.close();
  }

  const outDir = path.join(options.outDir, 'mcp-bundle');
  mkdirSync(outDir, { recursive: true });
  const bundle = await buildBundle(SUPPORT_FUNCTIONS.mcp.functionId, { entry: SUPPORT_FUNCTIONS.mcp.entry }, outDir);
  results.add({
    group,
    name: 'bundle of the MCP function',
    value: round(bundle.bytes / 1_000, 1),
    unit: 'KB',
    budget: { op: '<=', limit: MCP_KB, text: `≤ ${MCP_KB} KB (1 KB = 1,000 bytes)` },
    extra: {
      bytes: bundle.bytes,
      gzip: `${round(bundle.gzipBytes / 1_000, 1)} KB`,
      'largest packages (KB)': bundle.byPackage
        .slice(0, 5)
        .map(([name, bytes]) => `${name} ${Math.round(bytes / 1_000)}`)
        .join(', '),
    },
  });
  results.note(
    group,
    'The MCP call runs on the local stack (its /mcp runs each tool call through the operation’s handler in the same process: mcp/in-process.ts); ' +
      'the deployed function invokes the operation’s function instead (mcp/lambda-caller.ts), one Lambda invoke more, which this figure does not include.',
  );
}
