/// <reference types="node" />
/**
 * The Campaign Enrichment MCP server over
 * stdio, for agents that start local servers (Claude Desktop, Cursor; see
 * docs/agents.md). Reads `CAMPAIGN_ENRICHMENT_API_KEY` (a live or test key)
 * and `CAMPAIGN_ENRICHMENT_API_URL` (the API's base URL).
 *
 * It bridges to the API's own MCP endpoint (`POST /mcp`, Streamable HTTP):
 * `tools/list` and every tool call are the API's, so the tools, their
 * schemas, scopes and errors are exactly those of the HTTP MCP server. What
 * it adds is what a stateless HTTP server cannot do, the confirmation of a
 * spend: when the agent's client supports elicitation, `enrich_campaign`
 * quotes, asks the user "Charge N credits of your B?", and launches only on
 * accept, bound to the accepted charge (the API refuses a launch that would
 * charge another amount, and the user is asked again). A decline charges
 * nothing and answers the campaign, still `draft`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE as CHARGE_CHANGED, TOOL_NAMES } from './mcp-protocol.js';

/** How many times the user is asked when the charge keeps changing before the launch is given up. */
const MAX_CONFIRMATIONS = 3;

/** The figures of a quote the confirmation shows. */
interface Quote {
  campaignId: string;
  accounts: { requested: number; eligible: number; excluded: { total: number } };
  credits: { required: number; available: number };
  outcome: string;
}

const credits = (n: number) => n.toLocaleString('en-US');

/** The confirmation's text: "Charge N credits of your B?" and what they buy. */
export function confirmationMessage(quote: Quote): string {
  return `Charge ${credits(quote.credits.required)} credits of your ${credits(quote.credits.available)}? Campaign ${quote.campaignId}: ${credits(quote.accounts.eligible)} eligible accounts of ${credits(quote.accounts.requested)} (${credits(quote.accounts.excluded.total)} skipped, not charged). Accounts found without contacts are refunded.`;
}

/**
 * Builds the stdio server bridged to the API's MCP endpoint.
 * @param remote - a client connected to `POST /mcp` with the API key.
 */
export function createBridge(remote: Client): Server {
  const server = new Server({ name: 'campaign-enrichment', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => remote.listTools());

  const forward = async (params: CallToolRequest['params']) => (await remote.callTool(params)) as CallToolResult;

  /** enrich_campaign with the user's confirmation of the exact charge. */
  async function confirmedEnrich(params: CallToolRequest['params']): Promise<CallToolResult> {
    const campaignId = (params.arguments as { campaignId?: unknown } | undefined)?.campaignId;
    for (let asked = 0; asked < MAX_CONFIRMATIONS; asked++) {
      const quoted = await forward({ name: TOOL_NAMES.quote, arguments: { campaignId } });
      if (quoted.isError) {
        // Already launched (a repeated call): the API answers the running campaign, charging nothing more.
        const error = quoted.structuredContent as { code?: string; details?: { status?: string } } | undefined;
        if (error?.code === 'campaign_not_enrichable' && error.details?.status === 'enriching') return forward(params);
        return quoted;
      }
      const quote = quoted.structuredContent as unknown as Quote;
      // A refusal (no eligible account, credits, limits) charges nothing: the launch answers it as it is.
      if (quote.outcome !== 'launchable')
        return forward({ ...params, _meta: { ...params._meta, [ACCEPTED_CHARGE_META]: quote.credits.required } });
      const answer = await server.elicitInput({
        mode: 'form',
        message: confirmationMessage(quote),
        requestedSchema: { type: 'object', properties: {} },
      });
      if (answer.action !== 'accept') {
        const campaign = await forward({ name: TOOL_NAMES.get, arguments: { campaignId } });
        return {
          ...campaign,
          content: [
            {
              type: 'text',
              text: `Not launched: the user ${answer.action === 'decline' ? 'declined' : 'dismissed'} the charge of ${credits(quote.credits.required)} credits. Nothing was charged; the campaign stays draft.`,
            },
          ],
        };
      }
      const launched = await forward({ ...params, _meta: { ...params._meta, [ACCEPTED_CHARGE_META]: quote.credits.required } });
      if (!(launched.isError && (launched.structuredContent as { code?: string } | undefined)?.code === CHARGE_CHANGED)) return launched;
    }
    const text = `Not launched: the charge changed ${MAX_CONFIRMATIONS} times while asking; nothing was charged. Quote again later.`;
    return { isError: true, content: [{ type: 'text', text }], structuredContent: { code: CHARGE_CHANGED, message: text, details: null } };
  }

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === TOOL_NAMES.enrich && server.getClientCapabilities()?.elicitation) return confirmedEnrich(request.params);
    return forward(request.params);
  });
  return server;
}

/**
 * Starts the bridge on this process's stdin/stdout, connected to the API named by the environment.
 * Exits with code 2 and a message on stderr when a variable is missing.
 */
export async function runStdioBridge(): Promise<void> {
  const apiKey = process.env.CAMPAIGN_ENRICHMENT_API_KEY;
  const apiUrl = process.env.CAMPAIGN_ENRICHMENT_API_URL;
  if (!apiKey || !apiUrl) {
    process.stderr.write(
      'campaign-enrichment-mcp: set CAMPAIGN_ENRICHMENT_API_KEY (your API key; cek_test_… for test mode) and CAMPAIGN_ENRICHMENT_API_URL (e.g. http://127.0.0.1:3000).\n',
    );
    process.exit(2);
  }
  const remote = new Client({ name: 'campaign-enrichment-mcp', version: '1.0.0' });
  await remote.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', apiUrl), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  await createBridge(remote).connect(new StdioServerTransport());
}
