/**
 * The MCP server over Streamable HTTP (POST /mcp, stateless) with the
 * official SDK client, against the local stack: tools/list is the
 * operations' contract, every tool call runs its operation (test mode),
 * errors carry the API error, and the discovery documents agree with it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { request } from 'node:http';
import { newOrganization, useApi } from './support/api';
import { activeAccounts, importAccounts, uniquePrefix, useTestWarehouses } from './enrichment/support';
import { apiKeys, organizations } from '../lib/root';
import {
  annotationsRead,
  MAX_TOOL_DESCRIPTION_CHARS,
  operationSchemas,
  toolAnnotations,
  toolName,
  TOOLS_LIST_HEADROOM_BYTES,
} from '../lib/contract/mcp';
import { MCP_ROUTES } from '../infra/routes';
import { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';

const api = useApi();
const useTestWarehouse = useTestWarehouses();

/** POSTs tools/list to /mcp with raw headers (fetch may not set Host); resolves with the status. */
function rawPost(headers: Record<string, string>): Promise<number> {
  const url = new URL('/mcp', api());
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An SDK client connected to the stack's /mcp with a key (or none). */
async function connect(apiKey?: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', api()), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** A live organization's test key (its twin: test credits, the built-in warehouse). */
async function testKey(options: Parameters<typeof newOrganization>[0] = {}) {
  const live = await newOrganization(options);
  const twin = await organizations().testTwin(live.organizationId);
  return { ...live, twinId: twin.id, testKey: await apiKeys().create(twin.id) };
}

const tool = async (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;

const data = <T = any>(result: CallToolResult): T => {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as T;
};

/** Net credits of a campaign on the organization's ledger (charges minus refunds), read through the tool. */
async function ledgerOf(client: Client, campaignId: string) {
  const entries = data<{ entries: { kind: string; amount: number; campaignId: string | null }[] }>(
    await tool(client, 'list_ledger', { limit: 100 }),
  ).entries.filter((entry) => entry.campaignId === campaignId);
  const charged = -entries.filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amount, 0); // charges are negative amounts
  const refunded = entries.filter((entry) => entry.kind === 'refund').reduce((sum, entry) => sum + entry.amount, 0);
  return { entries, charged, refunded };
}

/** A live organization with 100 credits, its client, and a draft of `count` fresh active warehouse accounts. */
async function liveDraft(count: number, name: string) {
  const accounts = activeAccounts(uniquePrefix(), count);
  await importAccounts(accounts);
  const { apiKey } = await newOrganization({ smbCredits: 100 });
  const client = await connect(apiKey);
  const campaign = data(await tool(client, 'create_campaign', { name, accountIds: accounts.map((account) => account.accountId) }));
  return { apiKey, client, campaign };
}

async function waitForStatus(client: Client, campaignId: string, status: string) {
  for (let i = 0; i < 600; i++) {
    const campaign = data(await tool(client, 'get_campaign', { campaignId }));
    if (campaign.status === status) return campaign;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`campaign ${campaignId} never became ${status}`);
}

describe('MCP over Streamable HTTP', () => {
  it('tools/list: one tool per customer operation, named after it, with the schemas of the OpenAPI document, honest annotations, short descriptions', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_ROUTES.map((route) => toolName(route.operation.operationId)));
    expect(tools.map((t) => t.name)).toContain('list_campaign_accounts');
    const served = (await (await fetch(`${api()}/openapi.json`)).json()) as Parameters<typeof operationSchemas>[0];
    for (const { operation } of MCP_ROUTES) {
      const annotations = toolAnnotations(operation);
      const listed = tools.find((t) => t.name === toolName(operation.operationId)) as Tool;
      const published = operationSchemas(served, operation);
      expect(listed.inputSchema, operation.operationId).toEqual(published.input);
      expect(listed.outputSchema, operation.operationId).toEqual(published.output);
      expect(annotationsRead(listed.annotations!)).toEqual(annotations);
      expect(listed.description!.length).toBeLessThanOrEqual(MAX_TOOL_DESCRIPTION_CHARS);
    }
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    // Every operation whose name says it reads, or whose scope is a read scope (export writes a file), is read-only,
    // and nothing else is.
    expect(readOnly.sort()).toEqual(
      MCP_ROUTES.filter(
        (route) =>
          /^(get|list|describe|quote)_/.test(toolName(route.operation.operationId)) ||
          (route.operation.scope.endsWith(':read') && route.operation.operationId !== 'exportCampaign'),
      )
        .map((route) => toolName(route.operation.operationId))
        .sort(),
    );
    expect(
      tools
        .filter((t) => t.annotations?.destructiveHint)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['cancel_campaign', 'create_erasure', 'delete_suppression', 'enrich_campaign', 'revoke_key', 'rotate_key']);
    // Idempotent writes: a repeat with the same arguments has no effect of its own (not export_campaign: a new file and
    // URL, and one more of the exports per hour; not rotate_key: a new secret, ending the one in its overlap).
    expect(
      tools
        .filter((t) => !t.annotations?.readOnlyHint && t.annotations?.idempotentHint)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['cancel_campaign', 'create_suppressions', 'delete_suppression', 'revoke_key', 'update_campaign']);
    // The tools/list answer's size (budget 64 KB).
    const answer = await fetch(`${api()}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(answer.status).toBe(200);
    expect(Buffer.byteLength(await answer.text())).toBeLessThanOrEqual(TOOLS_LIST_HEADROOM_BYTES);
  });

  it('the SDK client checks answers against the listed output schemas ($defs and $ref included)', async () => {
    const { testKey: key } = await testKey();
    const client = await connect(key);
    // listTools compiles every output schema (the SDK's Ajv validator); callTool then validates each answer with it.
    const { tools } = await client.listTools();
    const withDefs = tools.filter((listed) => JSON.stringify(listed.outputSchema ?? {}).includes('"$ref":"#/$defs/'));
    expect(withDefs.map((listed) => listed.name)).toEqual(expect.arrayContaining(['get_campaign', 'list_events', 'create_campaign']));
    const campaign = data(await tool(client, 'create_campaign', { name: 'Schema check', accountIds: ['test_found_defs_1'] }));
    expect(data(await tool(client, 'get_campaign', { campaignId: campaign.id }))).toMatchObject({ id: campaign.id, status: 'draft' });
    expect(data(await tool(client, 'list_campaigns', { filters: { status: ['draft'] }, limit: 5 })).campaigns.length).toBeGreaterThan(0);
    expect(data(await tool(client, 'list_events', { limit: 5 })).events).toBeInstanceOf(Array);
  });

  it('test mode: create → quote → enrich bound to the quote (charged exactly it) → progress → accounts → export; a replayed launch charges once', async () => {
    const { testKey: key } = await testKey();
    const client = await connect(key);
    const accountIds = [...Array.from({ length: 5 }, (_, i) => `test_found_mcp_${i}`), 'test_closed_mcp', 'test_nocontacts_mcp'];
    const campaign = data(await tool(client, 'create_campaign', { name: 'Agent campaign', accountIds }));
    expect(campaign.status).toBe('draft');
    const quote = data(await tool(client, 'quote_campaign', { campaignId: campaign.id }));
    expect(quote).toMatchObject({ outcome: 'launchable', accounts: { requested: 7, eligible: 6 }, credits: { required: 6 } });

    const launched = await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: quote.credits.required });
    expect(data(launched)).toMatchObject({ id: campaign.id, status: 'enriching' });
    // The same tools/call again (a client's retry): the running campaign, or campaign_not_enrichable once the
    // test run has finished; either way no second charge (the ledger below).
    const replayed = await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: quote.credits.required });
    expect(replayed.isError ? replayed.structuredContent : { id: (replayed.structuredContent as { id: string }).id }).toMatchObject(
      replayed.isError ? { code: 'campaign_not_enrichable', details: { status: 'enriched' } } : { id: campaign.id },
    );

    const enriched = await waitForStatus(client, campaign.id, 'enriched');
    expect(enriched.accounts).toMatchObject({ requested: 7, eligible: 6 });
    const ledger = await ledgerOf(client, campaign.id);
    expect(ledger.entries.filter((entry) => entry.kind === 'charge')).toHaveLength(1);
    expect(ledger.charged).toBe(quote.credits.required);
    expect(ledger.refunded).toBe(1); // the account without contacts

    const results = data(await tool(client, 'list_campaign_results', { campaignId: campaign.id }));
    expect(JSON.stringify(results)).toContain('test_found_mcp_0');
    const accounts = data(await tool(client, 'list_campaign_accounts', { campaignId: campaign.id, filters: { outcome: 'found' } }));
    expect(accounts.accounts ?? accounts.items).toHaveLength(5);
    const exported = data(await tool(client, 'export_campaign', { campaignId: campaign.id }));
    const csv = await (await fetch(exported.url)).text();
    expect(csv.split('\n').filter((line) => line.includes('test_found_mcp_')).length).toBeGreaterThan(0);
  });

  it('a launch bound to a charge the evaluation no longer makes charges nothing and answers charge_changed', async () => {
    const { testKey: key } = await testKey();
    const client = await connect(key);
    const campaign = data(await tool(client, 'create_campaign', { name: 'Changed', accountIds: ['test_found_a', 'test_found_b'] }));
    const refused = await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: CHARGE_CHANGED_CODE, details: { accepted: 1, charge: 2 } });
    expect(data(await tool(client, 'get_campaign', { campaignId: campaign.id })).status).toBe('draft');
    expect((await ledgerOf(client, campaign.id)).entries).toEqual([]);
  });

  it('cancel_campaign during a run refunds the charge exactly', async () => {
    const { client, campaign } = await liveDraft(4, 'Held');
    const held = useTestWarehouse({ holdAccounts: true });
    const launched = data(await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: 4 }));
    expect(launched.status).toBe('enriching');
    await held.called('getAccounts');
    const canceled = data(await tool(client, 'cancel_campaign', { campaignId: campaign.id }));
    expect(canceled).toMatchObject({ status: 'draft', lastEnrichment: { status: 'canceled', refunded: true } });
    const ledger = await ledgerOf(client, campaign.id);
    expect(ledger.charged).toBe(4);
    expect(ledger.refunded).toBe(4);
    expect(data(await tool(client, 'describe_organization', {})).credits.smb).toBe(100);
  });

  it('tasks: enrich_campaign as a task reports processed of eligible until enriched, then answers the campaign; any request reads it (stateless)', async () => {
    const { apiKey, client, campaign } = await liveDraft(3, 'Task');
    const held = useTestWarehouse({ holdAccounts: true });
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'enrich_campaign',
          arguments: { campaignId: campaign.id },
          task: { ttl: 60_000 },
          _meta: { [ACCEPTED_CHARGE_META]: 3 },
        },
      },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({ status: 'working', statusMessage: 'Enriching: 0 of 3 eligible accounts processed' });
    expect(created.task.taskId.startsWith(`${campaign.id}/att_`)).toBe(true);
    await held.called('getAccounts');
    // Another connection (another server instance: nothing is kept in a process) reads the same task.
    const other = await connect(apiKey);
    expect(await other.experimental.tasks.getTask(created.task.taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'Enriching: 0 of 3 eligible accounts processed',
    });
    held.release();
    let task = await other.experimental.tasks.getTask(created.task.taskId);
    for (let i = 0; i < 600 && task.status === 'working'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      task = await other.experimental.tasks.getTask(created.task.taskId);
    }
    expect(task).toMatchObject({ status: 'completed', statusMessage: 'Enriched: 3 of 3 eligible accounts processed' });
    const result = (await other.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(data(result)).toMatchObject({ id: campaign.id, status: 'enriched' });
    expect((await ledgerOf(client, campaign.id)).charged).toBe(3);
    // A key of another organization cannot read it.
    const stranger = await connect((await newOrganization()).apiKey);
    await expect(stranger.experimental.tasks.getTask(created.task.taskId)).rejects.toThrow(/Task not found/);
  });

  it('tasks: cancelling the task mid-run cancels the campaign and refunds the charge exactly; a refused launch is a failed task charging nothing', async () => {
    const { client, campaign } = await liveDraft(4, 'Task cancel');
    const refused = await client.request(
      {
        method: 'tools/call',
        params: { name: 'enrich_campaign', arguments: { campaignId: campaign.id }, task: {}, _meta: { [ACCEPTED_CHARGE_META]: 1 } },
      },
      CreateTaskResultSchema,
    );
    expect(refused.task.status).toBe('failed');
    expect((await client.experimental.tasks.getTaskResult(refused.task.taskId, CallToolResultSchema)) as CallToolResult).toMatchObject({
      isError: true,
      structuredContent: { code: CHARGE_CHANGED_CODE, details: { accepted: 1, charge: 4 } },
    });
    expect((await ledgerOf(client, campaign.id)).entries).toEqual([]);

    const held = useTestWarehouse({ holdAccounts: true });
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'enrich_campaign', arguments: { campaignId: campaign.id }, task: {}, _meta: { [ACCEPTED_CHARGE_META]: 4 } },
      },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    await held.called('getAccounts');
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled).toMatchObject({ status: 'cancelled', statusMessage: 'Canceled: the charge was refunded' });
    expect(
      data((await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as CallToolResult),
    ).toMatchObject({
      status: 'draft',
      lastEnrichment: { status: 'canceled', refunded: true },
    });
    const ledger = await ledgerOf(client, campaign.id);
    expect(ledger.charged).toBe(4);
    expect(ledger.refunded).toBe(4);
    expect(data(await tool(client, 'describe_organization', {})).credits.smb).toBe(100);
  });

  it('errors are isError results carrying the API error; bad arguments name the field; no key is invalid_api_key', async () => {
    const { testKey: key } = await testKey();
    const client = await connect(key);
    const missing = await tool(client, 'get_campaign', { campaignId: 'camp_7Hq2kXv9LmN3pR5sT8wYz' });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ code: 'not_found', message: expect.any(String), details: expect.anything() });
    const bad = await tool(client, 'list_campaigns', { limit: 0 });
    expect(bad.structuredContent).toMatchObject({ code: 'invalid_request' });
    expect(JSON.stringify((bad.structuredContent as { details: unknown }).details)).toContain('limit');
    const anonymous = await connect();
    expect((await tool(anonymous, 'describe_organization', {})).structuredContent).toMatchObject({ code: 'invalid_api_key' });
  });

  it('a key without campaigns:launch cannot launch: enrich_campaign answers insufficient_scope and charges nothing', async () => {
    const { organizationId } = await newOrganization();
    const twin = await organizations().testTwin(organizationId);
    const readOnly = await apiKeys().create(twin.id, { scopes: ['org:read', 'campaigns:read', 'campaigns:write', 'ledger:read'] });
    const client = await connect(readOnly);
    const campaign = data(await tool(client, 'create_campaign', { name: 'Read only', accountIds: ['test_found_ro'] }));
    const refused = await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'insufficient_scope', details: { required: 'campaigns:launch' } });
    expect(data(await tool(client, 'get_campaign', { campaignId: campaign.id })).status).toBe('draft');
    expect((await ledgerOf(client, campaign.id)).entries).toEqual([]);
  });

  it('a rate-limited call answers rate_limited with retryAfterSeconds', async () => {
    const { apiKey } = await newOrganization({ limits: { requests: 2, windowSeconds: 3600 } });
    const client = await connect(apiKey);
    const results: CallToolResult[] = [];
    for (let i = 0; i < 3; i++) results.push(await tool(client, 'describe_organization', {}));
    const limited = results.find((result) => result.isError);
    expect(limited?.structuredContent).toMatchObject({
      code: 'rate_limited',
      details: { policy: 'requests', limit: 2 },
      retryAfterSeconds: expect.any(Number),
    });
    expect((limited!.structuredContent as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('refuses a request addressed to another host name (DNS rebinding) or from another origin', async () => {
    expect(await rawPost({ host: 'attacker.example' })).toBe(403);
    expect(await rawPost({ origin: 'https://attacker.example' })).toBe(403);
    expect(await rawPost({})).toBe(200);
  });
});

describe('discovery', () => {
  it('the server card lists exactly the tools tools/list answers', async () => {
    const card = (await (await fetch(`${api()}/.well-known/mcp/server-card.json`)).json()) as {
      tools: unknown;
      remotes: { url: string }[];
    };
    const { tools } = await (await connect()).listTools();
    expect(card.tools).toEqual(tools);
    expect(card.remotes[0]!.url).toBe(`${api()}/mcp`);
  });

  it('every link of /llms.txt and of the api-catalog answers 200', async () => {
    const llms = await fetch(`${api()}/llms.txt`);
    expect(llms.status).toBe(200);
    const text = await llms.text();
    const catalogAnswer = await fetch(`${api()}/.well-known/api-catalog`);
    expect(catalogAnswer.status).toBe(200);
    expect(catalogAnswer.headers.get('content-type')).toContain('application/linkset+json');
    const catalog = (await catalogAnswer.json()) as { linkset: Record<string, { href: string }[] | string>[] };
    const links = [
      ...[...text.matchAll(/\]\((http[^)]+)\)/g)].map((match) => match[1]!),
      ...catalog.linkset.flatMap((set) =>
        Object.values(set).flatMap((value) => (Array.isArray(value) ? value.map((link) => link.href) : [])),
      ),
    ];
    expect(links.length).toBeGreaterThanOrEqual(8);
    expect(catalog.linkset[0]).toMatchObject({
      'service-desc': [{ href: `${api()}/openapi.json` }],
      'service-doc': [{ href: `${api()}/docs` }],
      status: [{ href: `${api()}/health` }],
    });
    for (const link of new Set(links)) expect((await fetch(link)).status, link).toBe(200);
  });
});
