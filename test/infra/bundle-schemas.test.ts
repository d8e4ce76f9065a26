/**
 * Each API function's bundle builds its own operation's request schema and
 * no other operation's (issue #18, cold init): the schema modules define
 * their module-level schemas through `treeShakable` with a `@__PURE__`
 * annotation (lib/schemas.ts), so esbuild drops the ones a function never
 * reads. Before, CampaignsGet built the create, update and list schemas at
 * every cold start.
 *
 * The markers are the `description`s of each request's JSON Schema (zod's
 * own conversion): they are string literals that only a built schema brings
 * into a bundle. A description counts as a marker only if the bundle of an
 * operation that owns it holds it verbatim (a template literal may be
 * printed otherwise), so the test cannot pass by finding no markers at all.
 */
import * as z from 'zod/mini';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../infra/routes';
import { routeBundles } from '../support/route-bundles';

/** Every `description` in a JSON Schema, at any depth. */
function descriptionsOf(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) descriptionsOf(item, into);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'description' && typeof value === 'string') into.add(value);
      else descriptionsOf(value, into);
    }
  }
  return into;
}

const routes = API_ROUTES.map((route) => ({
  functionId: route.functionId,
  entry: route.entry,
  descriptions: descriptionsOf(z.toJSONSchema(route.operation.request, { io: 'input' })),
}));

describe('request schemas in the deployed bundles', () => {
  const bundles = new Map<string, string>();

  beforeAll(async () => {
    for (const [functionId, text] of await routeBundles()) bundles.set(functionId, text);
  });

  it('every API function carries its own operation’s request schema, and no schema of another operation', () => {
    // Markers: descriptions found verbatim in the bundle of an operation that owns them.
    const markers = new Set<string>();
    for (const route of routes)
      for (const description of route.descriptions) if (bundles.get(route.functionId)!.includes(description)) markers.add(description);
    // Enough markers to mean something: the campaign, webhook, ledger, accounts and export requests all describe fields.
    expect(markers.size).toBeGreaterThanOrEqual(15);

    const foreign: Record<string, string[]> = {};
    for (const route of routes) {
      const bundle = bundles.get(route.functionId)!;
      const found = [...markers].filter((marker) => !route.descriptions.has(marker) && bundle.includes(marker));
      if (found.length) foreign[route.functionId] = found;
    }
    expect(foreign).toEqual({});
  });

  it('the markers tell the operations apart: create holds the create request’s field descriptions, get holds none of them', () => {
    const create = routes.find((route) => route.functionId === 'CampaignsCreate')!;
    const own = [...create.descriptions].filter((description) => bundles.get('CampaignsCreate')!.includes(description));
    expect(own.length).toBeGreaterThanOrEqual(3);
    for (const description of own) expect(bundles.get('CampaignsGet')).not.toContain(description);
  });
});
