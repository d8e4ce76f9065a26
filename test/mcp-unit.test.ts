/**
 * The MCP tools as data, without a stack: every customer operation of the
 * route list is a tool (or is excluded with its reason), mcp/tools.json is
 * what the code generates, the names the server and the stdio bridge call
 * are the tools', and `tools/list` keeps its budgets (≤ 64 KB, every
 * description ≤ 1,000 characters). The compaction of the schemas keeps
 * their meaning: a campaign answer of each status validates against the
 * compacted output schema.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, MCP_ROUTES } from '../infra/routes';
import {
  annotationsRead,
  buildMcpTools,
  compactPattern,
  compactSchema,
  isMcpTool,
  jsonOnlyText,
  listedAnnotations,
  MAX_TOOL_DESCRIPTION_CHARS,
  NOT_TOOLS,
  toolAnnotations,
  toolName,
  TOOLS_LIST_BUDGET_BYTES,
  TOOLS_LIST_HEADROOM_BYTES,
} from '../lib/contract/mcp';
import { MCP_TOOLS } from '../mcp/tools';
import { buildOpenApiDocument } from '../lib/contract/openapi';
import { TOOL_NAMES } from '../client/mcp-protocol';
import { campaignResultsOperation } from '../lib/exports/schema';
import { cancelCampaignOperation, quoteCampaignOperation } from '../lib/enrichment/schema';
import { enrichCampaignOperation, getCampaignOperation } from '../lib/campaigns/schema';

describe('MCP tools', () => {
  it('every customer operation of the route list has a tool, except those NOT_TOOLS names with a reason', () => {
    const names = MCP_TOOLS.tools.map((tool) => tool.name);
    for (const route of API_ROUTES) {
      const excluded =
        NOT_TOOLS.operations[route.operation.operationId as keyof typeof NOT_TOOLS.operations] ??
        NOT_TOOLS.scopes[route.operation.scope as keyof typeof NOT_TOOLS.scopes] ??
        (route.operation.streaming ? NOT_TOOLS.streaming : undefined);
      if (excluded) expect(excluded.length, route.operation.operationId).toBeGreaterThan(20);
      else expect(names, `${route.operation.operationId} has no tool`).toContain(toolName(route.operation.operationId));
      expect(isMcpTool(route.operation)).toBe(!excluded);
    }
    expect(names).toEqual(MCP_ROUTES.map((route) => toolName(route.operation.operationId)));
    for (const name of [
      'list_events',
      'create_suppressions',
      'list_suppressions',
      'delete_suppression',
      'create_erasure',
      'get_erasure',
      'list_erasures',
      'create_key',
      'list_keys',
      'revoke_key',
      'rotate_key',
    ])
      expect(names).toContain(name);
  });

  it('mcp/tools.json is what the code generates (npm run openapi:write)', () => {
    expect(MCP_TOOLS.tools).toEqual(
      JSON.parse(JSON.stringify(buildMcpTools(MCP_ROUTES.map((route) => route.operation)).map((binding) => binding.tool))),
    );
    expect(MCP_TOOLS.paths).toEqual(
      Object.fromEntries(MCP_ROUTES.map((route) => [toolName(route.operation.operationId), route.operation.path])),
    );
  });

  it('the names the server and the bridge call are the tools’; only enrich_campaign runs as a task', () => {
    expect(TOOL_NAMES).toEqual({
      enrich: toolName(enrichCampaignOperation.operationId),
      quote: toolName(quoteCampaignOperation.operationId),
      get: toolName(getCampaignOperation.operationId),
      cancel: toolName(cancelCampaignOperation.operationId),
      results: toolName(campaignResultsOperation.operationId),
    });
    expect(MCP_TOOLS.tools.filter((tool) => tool.execution).map((tool) => [tool.name, tool.execution])).toEqual([
      [TOOL_NAMES.enrich, { taskSupport: 'optional' }],
    ]);
  });

  it('tools/list is at most 58 KB (the 64 KB budget less 6 KB for the next tools) and every description at most 1,000 characters', () => {
    const answer = JSON.stringify({ result: { tools: MCP_TOOLS.tools }, jsonrpc: '2.0', id: 1 });
    expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_BYTES);
    expect(
      Buffer.byteLength(answer),
      'tools/list grew into the 6 KB kept below the 64 KB budget for the next tools: shorten a description or a schema (docs/agents.md "The tools")',
    ).toBeLessThanOrEqual(TOOLS_LIST_HEADROOM_BYTES);
    for (const tool of MCP_TOOLS.tools) expect(tool.description!.length, tool.name).toBeLessThanOrEqual(MAX_TOOL_DESCRIPTION_CHARS);
  });

  it('the compact schemas accept each operation’s documented examples (which redocly lint checks against the published schemas) and refuse an answer without a required field or an input with an unknown field', () => {
    const document = buildOpenApiDocument(MCP_ROUTES.map((route) => route.operation));
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const withoutFirstRequired = (schema: { required?: string[] }, value: Record<string, unknown>) => {
      const [name] = schema.required ?? [];
      if (!name) return undefined;
      const { [name]: _dropped, ...rest } = value;
      return rest;
    };
    for (const route of MCP_ROUTES) {
      const post = (document.paths as Record<string, any>)[route.operation.path].post;
      const listed = MCP_TOOLS.tools.find((tool) => tool.name === toolName(route.operation.operationId))!;
      const answer = post.responses['200'].content['application/json'].example.data as Record<string, unknown>;
      expect(ajv.validate(listed.outputSchema!, answer), `${listed.name} output: ${ajv.errorsText()}`).toBe(true);
      const broken = withoutFirstRequired(listed.outputSchema as { required?: string[] }, answer);
      if (broken) expect(ajv.validate(listed.outputSchema!, broken), `${listed.name} output without a required field`).toBe(false);
      const request = post.requestBody.content['application/json'].example as Record<string, unknown> | undefined;
      if (request) expect(ajv.validate(listed.inputSchema, request), `${listed.name} input: ${ajv.errorsText()}`).toBe(true);
      expect(ajv.validate(listed.inputSchema, { ...request, notAField: 1 }), `${listed.name} input with an unknown field`).toBe(false);
    }
  });

  it('an output schema writes the fields its objects share once (allOf of a base) and validates the same answers', () => {
    const campaign = (status: string, extra: Record<string, unknown> = {}) => ({
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The campaign.' },
        name: { type: 'string', minLength: 1 },
        createdAt: { type: 'string', format: 'date-time' },
        accounts: { type: 'object', properties: { requested: { type: 'integer' } }, required: ['requested'] },
        status: { type: 'string', const: status },
        ...extra,
      },
      required: ['id', 'name', 'createdAt', 'accounts', 'status', ...Object.keys(extra)],
      additionalProperties: false,
    });
    const feed = {
      type: 'object',
      properties: {
        enriched: campaign('enriched', { completedAt: { type: 'string', format: 'date-time' } }),
        expired: campaign('expired'),
        failed: campaign('draft'),
      },
      required: ['enriched', 'expired', 'failed'],
    };
    const output = compactSchema(feed, { output: true });
    expect(JSON.stringify(output)).toContain('"allOf":[{"$ref":"#/$defs/b1"}]');
    expect(JSON.stringify(output).length).toBeLessThan(JSON.stringify(compactSchema(feed)).length);
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const base = { id: 'c', name: 'Q4', createdAt: '2026-01-01T00:00:00Z', accounts: { requested: 2 } };
    const answer = {
      enriched: { ...base, status: 'enriched', completedAt: '2026-01-02T00:00:00Z' },
      expired: { ...base, status: 'expired' },
      failed: { ...base, status: 'draft' },
    };
    const { accounts: _accounts, ...noAccounts } = base;
    for (const value of [
      answer,
      { ...answer, expired: noAccounts },
      { ...answer, failed: { ...base, status: 'expired' } },
      { ...answer, enriched: { ...base, status: 'enriched' } },
      { ...answer, enriched: { ...answer.enriched, accounts: { requested: 'two' } } },
    ])
      expect(ajv.validate(output, value), JSON.stringify(value)).toBe(ajv.validate(compactSchema(feed), value));
    expect(ajv.validate(output, answer)).toBe(true);
  });

  it('the listed annotations read back as the operations’ (absent hints at the MCP defaults)', () => {
    for (const route of MCP_ROUTES) {
      const listed = MCP_TOOLS.tools.find((tool) => tool.name === toolName(route.operation.operationId))!;
      expect(listed.annotations).toEqual(listedAnnotations(toolAnnotations(route.operation)));
      expect(annotationsRead(listed.annotations!), listed.name).toEqual(toolAnnotations(route.operation));
    }
  });

  it('an ID pattern written with ranges matches exactly the same strings', () => {
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    const original = `^camp_[${alphabet}]{21}$`;
    const compact = compactPattern(original);
    expect(compact).toBe('^camp_[1-9A-HJ-NP-Za-km-z]{21}$');
    const [before, after] = [new RegExp(original), new RegExp(compact)];
    for (let point = 0; point < 0x3000; point++) {
      const id = `camp_${String.fromCodePoint(point).repeat(21)}`;
      expect(after.test(id), `U+${point.toString(16)}`).toBe(before.test(id));
    }
    // A class with escapes or ranges is kept as it is.
    expect(compactPattern('^[^\\u0000-\\u001f]+$')).toBe('^[^\\u0000-\\u001f]+$');
  });

  it('descriptions keep everything but the form media types’ notes, and no tool text names what a tool call cannot send', () => {
    expect(
      jsonOnlyText(
        'Pages, newest first. `filters.kind` narrows it (urlencoded/multipart: `filters[kind]=x`). Pass `nextCursor` unchanged as `cursor`; stop when it is null. urlencoded/multipart: `filters[kind]=refund`, `limit=50`.',
      ),
    ).toBe('Pages, newest first. `filters.kind` narrows it. Pass `nextCursor` unchanged as `cursor`; stop when it is null.');
    expect(jsonOnlyText('JSON: an array; urlencoded: repeat it, e.g. `curl -F a=b`. Exactly one of them.')).toBe('Exactly one of them.');
    const text = JSON.stringify(MCP_TOOLS.tools);
    expect(text).not.toMatch(/urlencoded|Honours `Idempotency-Key`|curl /);
  });

  it('compaction keeps the meaning: closed variants factored, nullable fields as type lists', () => {
    const variants = {
      type: 'object',
      oneOf: [
        {
          type: 'object',
          properties: { id: { type: 'string' }, status: { type: 'string', const: 'draft' } },
          required: ['id', 'status'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { id: { type: 'string' }, status: { type: 'string', const: 'enriching' } },
          required: ['id', 'status'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: {
            id: { type: 'string' },
            status: { type: 'string', const: 'enriched' },
            at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
          },
          required: ['id', 'status', 'at'],
          additionalProperties: false,
        },
      ],
    };
    const compacted = compactSchema(variants);
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const both = (value: unknown) => [ajv.validate(variants, value), ajv.validate(compacted, value)];
    expect(both({ id: 'a', status: 'draft' })).toEqual([true, true]);
    expect(both({ id: 'a', status: 'enriching' })).toEqual([true, true]);
    expect(both({ id: 'a', status: 'enriched', at: null })).toEqual([true, true]);
    expect(both({ id: 'a', status: 'enriched', at: '2026-01-01T00:00:00Z' })).toEqual([true, true]);
    expect(both({ id: 'a', status: 'enriched' })).toEqual([false, false]);
    expect(both({ id: 'a', status: 'other' })).toEqual([false, false]);
    expect(both({ id: 'a', status: 'draft', extra: 1 })).toEqual([false, false]);
    expect(JSON.stringify(compacted)).toContain('"type":["string","null"]');
    // The branches that only fix the status are one branch of the values.
    expect(JSON.stringify(compacted)).toContain('"enum":["draft","enriching"]');
    // An output schema: a status fixed by its value needs no type, and the same answers validate.
    const output = compactSchema(variants, { output: true });
    expect(JSON.stringify(output)).not.toContain('"type":"string","const"');
    for (const value of [
      { id: 'a', status: 'draft' },
      { id: 'a', status: 'enriched', at: null },
      { id: 'a', status: 'enriched' },
      { id: 'a', status: 'other' },
    ])
      expect(ajv.validate(output, value), JSON.stringify(value)).toBe(ajv.validate(variants, value));
  });
});
