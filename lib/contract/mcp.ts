/**
 * What agents see of the API (docs/agents.md): the MCP tools, one per
 * customer operation, and the discovery documents (`/.well-known/api-catalog`,
 * `/llms.txt`, the MCP server card), all built from the OpenAPI document
 * (lib/contract/openapi.ts), so a tool's schemas are its operation's.
 *
 * A new customer operation gets its tool by one line in {@link MCP_TOOL_OPERATIONS}.
 */
import type { Operation } from '../http/operation';
import {
  createKeyOperation,
  describeLimitsOperation,
  describeOrganizationOperation,
  listKeysOperation,
  revokeKeyOperation,
  rotateKeyOperation,
} from '../organizations/schema';
import {
  createCampaignOperation,
  enrichCampaignOperation,
  getCampaignOperation,
  listCampaignsOperation,
  updateCampaignOperation,
} from '../campaigns/schema';
import { cancelCampaignOperation, campaignAccountsOperation, quoteCampaignOperation } from '../enrichment/schema';
import { campaignResultsOperation, exportCampaignOperation } from '../exports/schema';
import { listLedgerOperation } from '../credits/schema';
import { buildOpenApiDocument, SUPPORT } from './openapi';

/** MCP tool annotations (MCP specification, "Tool annotations"): hints a client shows its user. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Reads: change nothing. */
const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Writes that only add or change a campaign's own fields. */
const WRITE = (idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: idempotent,
  openWorldHint: false,
});
/** Writes that spend or give back credits, start or stop work, or end a key. */
const SPEND = (idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: idempotent,
  openWorldHint: false,
});

/**
 * The customer operations agents get a tool for, each with its annotations
 * (one line each). Not here, and why: `createUpload` (the agent would have
 * to PUT a file to a presigned URL; create takes up to 100,000 IDs inline)
 * and the webhook operations (an agent has no endpoint to receive them).
 */
export const MCP_TOOL_OPERATIONS: readonly { operation: Operation; annotations: ToolAnnotations }[] = [
  { operation: describeOrganizationOperation, annotations: READ },
  { operation: describeLimitsOperation, annotations: READ },
  { operation: createCampaignOperation, annotations: WRITE(false) },
  // The same update twice leaves the campaign as the first left it.
  { operation: updateCampaignOperation, annotations: WRITE(true) },
  { operation: quoteCampaignOperation, annotations: READ },
  // A second call on the launched campaign charges nothing, but after a cancel it would launch (and charge) again.
  { operation: enrichCampaignOperation, annotations: SPEND(false) },
  // A cancel repeated answers the canceled campaign again (docs/idempotency.md).
  { operation: cancelCampaignOperation, annotations: SPEND(true) },
  { operation: getCampaignOperation, annotations: READ },
  { operation: listCampaignsOperation, annotations: READ },
  { operation: campaignAccountsOperation, annotations: READ },
  // Writes a CSV file and counts toward the exports per hour: not read-only, but repeating it changes no data.
  { operation: exportCampaignOperation, annotations: WRITE(true) },
  { operation: campaignResultsOperation, annotations: READ },
  { operation: listLedgerOperation, annotations: READ },
  // Keys: a new key or secret each time; a revoke ends a key for good (repeating it changes nothing more).
  { operation: createKeyOperation, annotations: WRITE(false) },
  { operation: listKeysOperation, annotations: READ },
  { operation: rotateKeyOperation, annotations: WRITE(false) },
  { operation: revokeKeyOperation, annotations: SPEND(true) },
];

/** Longest description of a tool, in characters (issue #42 budget). */
export const MAX_TOOL_DESCRIPTION_CHARS = 1_000;

/** The tool name of an operation: its operationId in snake_case (`listCampaignAccounts` → `list_campaign_accounts`). */
export const toolName = (operationId: string): string => operationId.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** One MCP tool as `tools/list` answers it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: ToolAnnotations & { title: string };
}

/** An MCP tool and the operation it calls. */
export interface McpToolBinding {
  tool: McpTool;
  operation: Operation;
}

type JsonSchema = { type: 'object'; [key: string]: unknown };

/** A JSON value with every `$ref` into the document's components replaced by its target. */
function inlineRefs(node: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, components));
  if (!node || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as Record<string, unknown>;
  if (typeof $ref === 'string') {
    const name = $ref.replace('#/components/schemas/', '');
    return inlineRefs({ ...(components[name] as object), ...rest }, components);
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inlineRefs(value, components)]));
}

/**
 * A tool's JSON Schema made compact, meaning unchanged: the document's
 * examples dropped, the date-time `pattern` beside `format: date-time`
 * dropped (the format says it), and each subschema of
 * {@link SHARED_SUBSCHEMA_MIN_CHARS} characters or more that occurs twice or
 * more (the campaign's variants by status repeat their fields) written once
 * under `$defs` and referenced. Keeps `tools/list` inside its 64 KB.
 * @param options.descriptions - keep the fields' descriptions (inputs: the agent fills them); output
 *   schemas drop them (they validate the answer; the fields are described in the API reference).
 */
export function compactSchema(
  schema: Record<string, unknown>,
  { descriptions = true }: { descriptions?: boolean } = {},
): Record<string, unknown> {
  const trimmed = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(trimmed);
    if (!node || typeof node !== 'object') return node;
    const entries = Object.entries(node as Record<string, unknown>).filter(
      ([key, value]) =>
        key !== 'example' &&
        key !== 'examples' &&
        !(key === 'pattern' && (node as { format?: unknown }).format === 'date-time') &&
        // A property named `description` is a field, not the keyword.
        (descriptions || key !== 'description' || typeof value !== 'string'),
    );
    return Object.fromEntries(entries.map(([key, value]) => [key, trimmed(value)]));
  };
  const root = trimmed(schema) as Record<string, unknown>;
  const counts = new Map<string, number>();
  const count = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (!Array.isArray(node)) {
      const text = JSON.stringify(node);
      if (text.length >= SHARED_SUBSCHEMA_MIN_CHARS) counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    for (const value of Object.values(node)) count(value);
  };
  for (const value of Object.values(root)) count(value);
  const defs: Record<string, unknown> = {};
  const names = new Map<string, string>();
  const shared = (node: unknown): unknown => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map(shared);
    const text = JSON.stringify(node);
    if ((counts.get(text) ?? 0) >= 2) {
      let name = names.get(text);
      if (!name) {
        name = `s${names.size + 1}`;
        names.set(text, name);
        defs[name] = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, shared(value)]));
      }
      return { $ref: `#/$defs/${name}` };
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, shared(value)]));
  };
  const compacted = Object.fromEntries(Object.entries(root).map(([key, value]) => [key, shared(value)]));
  return names.size > 0 ? { ...compacted, $defs: defs } : compacted;
}

/** Smallest subschema, in characters of JSON, that {@link compactSchema} writes once when repeated. */
export const SHARED_SUBSCHEMA_MIN_CHARS = 50;

/** An operation's description cut to {@link MAX_TOOL_DESCRIPTION_CHARS} at a sentence end. */
function toolDescription(summary: string, description: string): string {
  const full = `${summary}. ${description}`;
  if (full.length <= MAX_TOOL_DESCRIPTION_CHARS) return full;
  const cut = full.slice(0, MAX_TOOL_DESCRIPTION_CHARS - 1);
  const end = cut.lastIndexOf('. ');
  return end > 0 ? cut.slice(0, end + 1) : `${cut}…`;
}

/**
 * The schemas of an operation as the OpenAPI document publishes them, with
 * the components inlined, made compact ({@link compactSchema}): the JSON
 * request body and the success's `data`.
 * @throws Error when the document lacks the operation (a programming error).
 */
export function operationSchemas(
  document: ReturnType<typeof buildOpenApiDocument>,
  operation: Operation,
): { input: JsonSchema; output: JsonSchema; summary: string; description: string } {
  const post = (document.paths as Record<string, any>)?.[operation.path]?.post;
  if (!post) throw new Error(`${operation.operationId}: not in the OpenAPI document`);
  const components = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const input = inlineRefs(post.requestBody.content['application/json'].schema, components) as Record<string, unknown>;
  const envelope = inlineRefs(post.responses['200'].content['application/json'].schema, components) as {
    properties: { data: Record<string, unknown> };
  };
  return {
    // MCP wants an object at the top: a oneOf of objects (create) is one.
    input: compactSchema({ type: 'object', ...input }) as JsonSchema,
    output: compactSchema({ type: 'object', ...envelope.properties.data }, { descriptions: false }) as JsonSchema,
    summary: String(post.summary),
    description: String(post.description),
  };
}

/** The MCP tools of {@link MCP_TOOL_OPERATIONS}, built from the OpenAPI document, with the operation each calls. */
export function buildMcpTools(): McpToolBinding[] {
  const document = buildOpenApiDocument(MCP_TOOL_OPERATIONS.map((entry) => entry.operation));
  return MCP_TOOL_OPERATIONS.map(({ operation, annotations }) => {
    const schemas = operationSchemas(document, operation);
    const name = toolName(operation.operationId);
    return {
      operation,
      tool: {
        name,
        title: schemas.summary,
        description: toolDescription(schemas.summary, schemas.description),
        inputSchema: schemas.input,
        outputSchema: schemas.output,
        annotations: { title: schemas.summary, ...annotations },
      },
    };
  });
}

/** Server name and version agents see (`initialize`, the server card). */
export const MCP_SERVER_INFO = { name: 'campaign-enrichment', title: 'Campaign Enrichment API', version: '1.0.0' } as const;

/** The path of the MCP endpoint (Streamable HTTP, stateless). */
export const MCP_PATH = '/mcp';
/** Where the MCP server card is served (the MCP server-card proposal's well-known path). */
export const SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';
/** The RFC 9727 API catalog. */
export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** The llms.txt index. */
export const LLMS_TXT_PATH = '/llms.txt';

/**
 * The MCP server card: who the server is, where it listens, how it
 * authenticates, and its tools exactly as `tools/list` answers them.
 */
export function buildServerCard(serverUrl: string, tools: readonly McpTool[] = buildMcpTools().map((binding) => binding.tool)) {
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json',
    version: '1.0',
    protocolVersion: '2025-11-25',
    serverInfo: MCP_SERVER_INFO,
    description:
      'Create campaigns from account lists, quote and launch paid enrichment (asks before it spends), follow progress, cancel with an exact refund, export results.',
    documentationUrl: `${serverUrl}/docs`,
    transport: { type: 'streamable-http', endpoint: MCP_PATH },
    remotes: [{ type: 'streamable-http', url: `${serverUrl}${MCP_PATH}` }],
    packages: [
      {
        registryType: 'npm',
        identifier: '@campaign-enrichment/client',
        transport: { type: 'stdio' },
        runtimeHint: 'npx',
        environmentVariables: [
          { name: 'CAMPAIGN_ENRICHMENT_API_KEY', isRequired: true, isSecret: true },
          { name: 'CAMPAIGN_ENRICHMENT_API_URL', isRequired: true },
        ],
      },
    ],
    authentication: {
      required: true,
      schemes: ['bearer'],
      description: 'An API key as bearer credential; a test key (cek_test_…) acts on the test twin.',
    },
    capabilities: { tools: { listChanged: false } },
    tools,
  };
}

/** The api-catalog (RFC 9727): a linkset naming the OpenAPI document, the reference page and the health check. */
export function buildApiCatalog(serverUrl: string) {
  return {
    linkset: [
      {
        anchor: `${serverUrl}/`,
        'service-desc': [{ href: `${serverUrl}/openapi.json`, type: 'application/openapi+json' }],
        'service-doc': [{ href: `${serverUrl}/docs`, type: 'text/html' }],
        status: [{ href: `${serverUrl}/health`, type: 'application/json' }],
        'service-meta': [{ href: `${serverUrl}${SERVER_CARD_PATH}`, type: 'application/json' }],
      },
    ],
  };
}

/** `/llms.txt` (llmstxt.org): what the API is, and links an agent follows. */
export function buildLlmsTxt(serverUrl: string, tools: readonly McpTool[] = buildMcpTools().map((binding) => binding.tool)): string {
  return [
    '# Campaign Enrichment API',
    '',
    '> A paid B2B JSON API: create campaigns from account (company) IDs, quote and launch enrichment (credits are charged per eligible account), poll progress, export contacts as CSV. Every operation is a POST with an API key as bearer.',
    '',
    'Agents connect through the MCP server (Streamable HTTP, stateless) or call the HTTP API directly. A test key (`cek_test_…`) acts on a test twin with a deterministic warehouse: nothing it does spends real credits.',
    '',
    '## Docs',
    '',
    `- [API reference](${serverUrl}/docs): every operation, its fields and its errors`,
    `- [OpenAPI document](${serverUrl}/openapi.json): the contract, generated from the server's schemas`,
    `- [MCP server card](${serverUrl}${SERVER_CARD_PATH}): the MCP endpoint (${serverUrl}${MCP_PATH}) and its tools`,
    `- [API catalog](${serverUrl}${API_CATALOG_PATH}): RFC 9727 linkset`,
    '',
    '## MCP tools',
    '',
    ...tools.map((tool) => `- ${tool.name}: ${tool.title}`),
    '',
    '## Optional',
    '',
    `- [Health](${serverUrl}/health)`,
    `- [Support](${serverUrl}${SUPPORT.guidePath}): ${SUPPORT.email}`,
    '',
  ].join('\n');
}
