/**
 * Every route of infra/routes.ts has everything an operation needs (issue
 * #38): a request schema declared in its domain's schema.ts, its handler file,
 * a documentation entry (docs.ts, through the OpenAPI builder), a scope, and a
 * client method at its path. A check is one line of COMPLETENESS: the MCP
 * tool check is added there when the MCP server lands. A missing piece is
 * named with its operation. The client's operation table itself is generated
 * from the routes (npm run openapi:write; test/docs-generated.test.ts fails
 * when it is stale).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, type ApiRoute } from '../infra/routes';
import { documented } from '../lib/contract/openapi';
import { SCOPES } from '../lib/http/scopes';
import { OPERATIONS, createCampaignEnrichmentClient } from '../client/index';

const ROOT = path.resolve(import.meta.dirname, '..');
const client = createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'cek_x' }) as unknown as Record<string, unknown>;
const clientTable = OPERATIONS as Record<string, { path: string; idempotent: boolean }>;

/** What every operation needs, by name: true when the route has it. */
const COMPLETENESS: Record<string, (route: ApiRoute) => boolean> = {
  schema: ({ operation }) => typeof operation.request?._zod === 'object' && /^\/v1\/[a-z/-]+$/.test(operation.path),
  handler: ({ entry }) => existsSync(path.join(ROOT, entry)),
  doc: ({ operation }) => {
    try {
      return documented(operation).summary.trim() !== '';
    } catch {
      return false;
    }
  },
  scope: ({ operation }) => (SCOPES as readonly string[]).includes(operation.scope),
  'client method': ({ operation }) =>
    typeof client[operation.operationId] === 'function' &&
    clientTable[operation.operationId]?.path === operation.path &&
    clientTable[operation.operationId]?.idempotent === (operation.idempotent === true),
  // 'MCP tool': ({ operation }) => MCP_TOOLS.has(operation.operationId),  (one line, when the MCP server lands)
};

/** The pieces `route` lacks, named. */
const missingOf = (route: ApiRoute) =>
  Object.entries(COMPLETENESS)
    .filter(([, has]) => !has(route))
    .map(([name]) => name);

describe('every operation is complete', () => {
  it('has its schema, handler, doc, scope and client method (named when missing)', () => {
    const missing = API_ROUTES.map((route) => ({ operation: route.operation.operationId, missing: missingOf(route) })).filter(
      (entry) => entry.missing.length > 0,
    );
    expect(missing).toEqual([]);
  });

  it('the client has no operation the routes lack', () => {
    expect(Object.keys(clientTable).sort()).toEqual(API_ROUTES.map((route) => route.operation.operationId).sort());
  });

  it('names what a route lacks: an operation without doc, handler or client method', () => {
    const [first] = API_ROUTES;
    const orphan: ApiRoute = {
      ...first!,
      entry: 'functions/nowhere.ts',
      operation: { ...first!.operation, operationId: 'orphanOperation', path: '/v1/orphan/operation' },
    };
    expect(missingOf(orphan)).toEqual(['handler', 'doc', 'client method']);
    expect(missingOf(first!)).toEqual([]);
  });
});
