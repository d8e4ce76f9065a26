/**
 * Scopes (docs/authentication.md "Scopes"): every operation declares the one
 * scope it needs next to its schema; the pipeline checks it once, before any
 * work; the OpenAPI document lists it. Over HTTP, for every operation and
 * every scope, a key holding only that scope is admitted exactly when the
 * scope is the operation's, and a refusal (403 `insufficient_scope`,
 * `details.required`) changes nothing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ROUTES, type ApiRoute } from '../infra/routes';
import { exampleRequest } from './support/operation-examples';
import { SCOPES, type Scope } from '../lib/http/scopes';
import { apiKeys, buildOpenApiDocument } from '../lib/root';
import { call, newOrganization, useApi } from './support/api';

describe('every operation declares its scope', () => {
  // Which scope each operation needs is its schema.ts's declaration; docs/authentication.md's table of scopes is generated from it.
  it('each route has a known scope', () => {
    for (const { operation } of API_ROUTES) expect(SCOPES, `${operation.operationId} declares no known scope`).toContain(operation.scope);
  });

  it("the OpenAPI document lists each operation's scope as its security requirement", () => {
    const document = buildOpenApiDocument(API_ROUTES.map((route) => route.operation)) as {
      paths: Record<string, { post: { operationId: string; security: Record<string, string[]>[] } }>;
    };
    for (const { operation } of API_ROUTES) {
      expect(document.paths[operation.path]!.post.security, operation.operationId).toEqual([{ apiKey: [operation.scope] }]);
    }
  });
});

describe('the scope stage cannot be left out of a deployed handler', () => {
  it('only the bench builds a pipeline without its scope stage', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const files = execFileSync('git', ['ls-files', '*.ts', '*.mts', '*.js', '*.mjs'], { cwd: root, encoding: 'utf8' }).split('\n');
    const users = files.filter(
      (file) => file !== '' && !file.startsWith('test/') && readFileSync(path.join(root, file), 'utf8').includes('withoutScopeStage: true'),
    );
    expect(users).toEqual(['bench/figures/keys.ts']);
  });
});

describe('the pipeline admits exactly the scope of each operation', () => {
  const api = useApi();

  it('a key with one scope is admitted by its operations only; refusals change nothing', async () => {
    const org = await newOrganization({ limits: { requests: 1_000_000 } });
    const created = await call(api(), '/v1/campaigns/create', {
      apiKey: org.apiKey,
      body: { name: 'Scoped', accountIds: ['acc_00001', 'acc_00002'] },
    });
    expect(created.status).toBe(200);
    const campaignId = created.data.id as string;
    // Bodies that would do something if admitted (each operation's documented example, on this campaign): the refusals below must not.
    const refusedBody = (route: ApiRoute) => exampleRequest(route, { ids: { camp_: campaignId }, keepOtherIds: true });
    const keyOf = new Map<Scope, string>();
    for (const scope of SCOPES) keyOf.set(scope, await apiKeys().create(org.organizationId, { scopes: [scope] }));

    for (const route of API_ROUTES) {
      const { operation } = route;
      for (const scope of SCOPES) {
        const admitted = scope === operation.scope;
        // An admitted call gets a body that does nothing lasting (its validation or lookup refuses it).
        const body = admitted ? { campaignId: 'camp_1111111111111111111111' } : refusedBody(route);
        const res = await call(api(), operation.path, { apiKey: keyOf.get(scope)!, body });
        if (admitted) expect(res.error?.code, `${operation.operationId} with ${scope}`).not.toBe('insufficient_scope');
        else {
          expect(res.status, `${operation.operationId} with ${scope}`).toBe(403);
          expect(res.error).toMatchObject({ code: 'insufficient_scope', details: { required: operation.scope } });
        }
      }
    }

    // Nothing changed: one campaign, its name, still a draft, no charge, no webhook endpoint.
    const list = await call(api(), '/v1/campaigns/list', { apiKey: org.apiKey, body: {} });
    expect(list.data.campaigns.map((c: { id: string }) => c.id)).toEqual([campaignId]);
    const got = await call(api(), '/v1/campaigns/get', { apiKey: org.apiKey, body: { campaignId } });
    expect(got.data).toMatchObject({ name: 'Scoped', status: 'draft' });
    const ledger = await call(api(), '/v1/org/ledger', { apiKey: org.apiKey, body: {} });
    expect(ledger.data.entries.filter((e: { kind: string }) => e.kind === 'charge')).toEqual([]);
    const hooks = await call(api(), '/v1/webhooks/list', { apiKey: org.apiKey, body: {} });
    expect(hooks.data.endpoints).toEqual([]);
    expect((await call(api(), '/v1/privacy/suppressions/list', { apiKey: org.apiKey, body: {} })).data.suppressions).toEqual([]);
    expect((await call(api(), '/v1/privacy/erasures/list', { apiKey: org.apiKey, body: {} })).data.erasures).toEqual([]);
  }, 240_000); // every operation × every scope, one call at a time: about 360 calls

  it('a key made before scopes (none stored) holds every scope', async () => {
    const org = await newOrganization();
    for (const path of ['/v1/org/describe', '/v1/org/ledger', '/v1/webhooks/list', '/v1/campaigns/list']) {
      const res = await call(api(), path, { apiKey: org.apiKey, body: {} });
      expect(res.status, path).toBe(200);
    }
  });
});
