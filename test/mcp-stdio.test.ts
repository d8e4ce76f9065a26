/**
 * The MCP server over stdio (`npx campaign-enrichment-mcp`, client/mcp.ts)
 * with the official SDK client, against the local stack in test mode: the
 * same tools as /mcp, and enrich_campaign asks before it spends (decline:
 * nothing charged, campaign draft; accept: launched, charged the quoted
 * amount; a repeated call charges nothing more).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { newOrganization, useApi } from './support/api';
import { apiKeys, organizations } from '../lib/root';

const api = useApi();
const ROOT = path.resolve(import.meta.dirname, '..');
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** Starts `campaign-enrichment-mcp` with a key; the client answers each confirmation with the next of `answers`. */
async function stdioClient(apiKey: string, answers: ElicitResult['action'][] = []) {
  const asked: string[] = [];
  const client = new Client(
    { name: 'stdio-test', version: '1.0.0' },
    { capabilities: answers.length > 0 ? { elicitation: { form: {} } } : {} },
  );
  if (answers.length > 0) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: answers.shift() ?? 'cancel' };
    });
  }
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin', 'campaign-enrichment-mcp.mjs')],
      env: { ...(process.env as Record<string, string>), CAMPAIGN_ENRICHMENT_API_KEY: apiKey, CAMPAIGN_ENRICHMENT_API_URL: api() },
      stderr: 'inherit',
    }),
  );
  clients.push(client);
  return { client, asked };
}

const tool = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const data = <T = any>(result: CallToolResult): T => {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as T;
};

async function testKey() {
  const live = await newOrganization();
  const twin = await organizations().testTwin(live.organizationId);
  return apiKeys().create(twin.id);
}

describe('MCP over stdio', () => {
  it('lists the same tools as /mcp', async () => {
    const key = await testKey();
    const { client } = await stdioClient(key);
    const http = new Client({ name: 'http', version: '1.0.0' });
    await http.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', api()), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    clients.push(http);
    expect((await client.listTools()).tools).toEqual((await http.listTools()).tools);
  });

  it('enrich_campaign asks "Charge N credits of your B?": decline charges nothing, accept launches charging the quote, a repeat charges nothing more; then results and export', async () => {
    const key = await testKey();
    const { client, asked } = await stdioClient(key, ['decline', 'accept']);
    const accountIds = [...Array.from({ length: 3 }, (_, i) => `test_found_stdio_${i}`), 'test_crm_stdio'];
    const campaign = data(await tool(client, 'create_campaign', { name: 'Stdio agent', accountIds }));
    const quote = data(await tool(client, 'quote_campaign', { campaignId: campaign.id }));
    expect(quote.credits.required).toBe(3);
    const before = data(await tool(client, 'describe_organization', {})).credits.smb;

    const declined = await tool(client, 'enrich_campaign', { campaignId: campaign.id });
    expect(data(declined)).toMatchObject({ id: campaign.id, status: 'draft', credits: { charged: 0 } });
    expect(asked[0]).toBe(
      `Charge 3 credits of your ${before.toLocaleString('en-US')}? Campaign ${campaign.id}: 3 eligible accounts of 4 (1 skipped, not charged). Accounts found without contacts are refunded.`,
    );
    expect(data(await tool(client, 'describe_organization', {})).credits.smb).toBe(before);

    const accepted = await tool(client, 'enrich_campaign', { campaignId: campaign.id });
    expect(data(accepted)).toMatchObject({ id: campaign.id, status: 'enriching', credits: { charged: 3 } });
    expect(asked).toHaveLength(2);
    // Repeated: the running campaign, or (once a test run has finished) campaign_not_enrichable; either way no question, no charge.
    const repeated = await tool(client, 'enrich_campaign', { campaignId: campaign.id });
    expect(repeated.isError ? repeated.structuredContent : { id: (repeated.structuredContent as { id: string }).id }).toMatchObject(
      repeated.isError ? { code: 'campaign_not_enrichable', details: { status: 'enriched' } } : { id: campaign.id },
    );
    expect(asked).toHaveLength(2);

    let status = 'enriching';
    for (let i = 0; i < 600 && status !== 'enriched'; i++) {
      status = data(await tool(client, 'get_campaign', { campaignId: campaign.id })).status;
      if (status !== 'enriched') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('enriched');
    expect(data(await tool(client, 'describe_organization', {})).credits.smb).toBe(before - 3);
    const ledger = data(await tool(client, 'list_ledger', {})).entries.filter(
      (entry: { campaignId: string | null }) => entry.campaignId === campaign.id,
    );
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ kind: 'charge', amount: -3 });
    const outcomes = data(await tool(client, 'list_campaign_accounts', { campaignId: campaign.id }));
    expect(JSON.stringify(outcomes)).toContain('crm_excluded');
    const exported = data(await tool(client, 'export_campaign', { campaignId: campaign.id }));
    expect((await fetch(exported.url)).status).toBe(200);
  });
});
