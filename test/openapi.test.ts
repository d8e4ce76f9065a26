/**
 * The published contract (README.md): the committed `docs/openapi.json`
 * is exactly what the code generates, and the document states what the API
 * does — required bodies, update's "at least one of", the form encodings,
 * typed `details` per error code with real examples, the campaign shape per
 * status, non-negative figures, the headers of docs/idempotency.md, a license.
 * (`redocly lint` runs in CI: `npm run openapi:lint`.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { buildOpenApiDocument, documented } from '../lib/contract/openapi';
import { defineOperation } from '../lib/http/operation';
import { API_ROUTES } from '../infra/routes';
import { ERROR_STATUS } from '../lib/errors';
import { LAUNCH_OUTCOMES } from '../lib/enrichment/decision';
import { OPERATIONS } from '../client/index';
import { useApi } from './support/api';

const ROOT = path.resolve(import.meta.dirname, '..');
const committed = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
const generated = JSON.parse(JSON.stringify(buildOpenApiDocument(API_ROUTES.map((r) => r.operation))));
const api = useApi();

const post = (p: string) => committed.paths[p].post;
const schemaOf = (ref: string) => committed.components.schemas[ref.replace('#/components/schemas/', '')];

describe('docs/openapi.json', () => {
  it('is exactly the generated document (run `npm run openapi:write` after changing an operation)', () => {
    expect(committed).toEqual(generated);
  });

  it("documents every served operation from its domain's docs.ts, and refuses an undocumented one", () => {
    for (const route of API_ROUTES) expect(documented(route.operation).summary, route.operation.operationId).toMatch(/\S/);
    const undocumented = defineOperation({
      operationId: 'undocumentedTest',
      scope: 'org:read',
      path: '/v1/test/undocumented',
      request: z.strictObject({}),
    });
    expect(() => buildOpenApiDocument([undocumented])).toThrow(/undocumentedTest \(\/v1\/test\/undocumented\) has no documentation/);
    // Documentation of the same operationId but another path is not this operation's.
    expect(() => documented({ ...API_ROUTES[0]!.operation, path: '/v1/elsewhere' })).toThrow(/has no documentation/);
  });

  it('is OpenAPI 3.1, version 1.0.0, with a license and every operation as a POST', () => {
    expect(committed.openapi).toBe('3.1.0');
    expect(committed.info.version).toBe('1.0.0');
    expect(committed.info.license).toEqual({ name: 'Proprietary', identifier: 'LicenseRef-Proprietary' });
    expect(Object.keys(committed.paths).sort()).toEqual(API_ROUTES.map((r) => r.operation.path).sort());
    for (const item of Object.values(committed.paths) as any[]) expect(Object.keys(item)).toEqual(['post']);
  });

  it('marks a request body required only when some field is (list, ledger, uploads/create, deliveries take none), in JSON, urlencoded and multipart', () => {
    for (const route of API_ROUTES) {
      const body = post(route.operation.path).requestBody;
      expect(body.required, route.operation.operationId).toBe(!z.safeParse(route.operation.request, {}).success);
      if (Object.keys(route.operation.request._zod.def.shape).length === 0) continue;
      // A body holding a list of objects (the privacy identifiers) is JSON only.
      expect(Object.keys(body.content), route.operation.operationId).toEqual(
        route.operation.jsonOnly ? ['application/json'] : ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
      );
    }
    for (const path of [
      '/v1/campaigns/list',
      '/v1/org/ledger',
      '/v1/uploads/create',
      '/v1/webhooks/deliveries',
      '/v1/org/describe',
      '/v1/webhooks/list',
    ])
      expect(post(path).requestBody.required, path).toBe(false);
  });

  it('groups the operations by tag, operations before the webhook events, and names a contact', () => {
    expect(committed.tags.map((t: { name: string }) => t.name)).toEqual([
      'campaigns',
      'enrichment',
      'exports',
      'credits',
      'webhooks',
      'uploads',
      'organization',
      'keys',
      'privacy',
      'webhook events',
    ]);
    for (const route of API_ROUTES)
      expect(
        committed.tags.map((t: { name: string }) => t.name),
        route.operation.operationId,
      ).toContain(post(route.operation.path).tags[0]);
    expect(post('/v1/campaigns/enrich').tags).toEqual(['enrichment']);
    expect(post('/v1/org/ledger').tags).toEqual(['credits']);
    for (const item of Object.values(committed.webhooks) as any[]) expect(item.post.tags).toEqual(['webhook events']);
    expect(committed.info.contact).toMatchObject({ name: expect.any(String), email: expect.stringContaining('@') });
  });

  it('shows a real example of every operation’s answer and of every webhook event (an enriched campaign for campaign.enriched)', () => {
    for (const route of API_ROUTES)
      if (route.operation.streaming)
        // A stream answers JSON Lines (or Server-Sent Events) of its item schema, not the envelope.
        expect(post(route.operation.path).responses['200'].content['application/jsonl']?.schema, route.operation.operationId).toBeDefined();
      else
        expect(
          post(route.operation.path).responses['200'].content['application/json'].example?.data,
          route.operation.operationId,
        ).toBeDefined();
    const enriched = committed.webhooks['campaign.enriched'].post.requestBody.content['application/json'].example;
    expect(enriched.data.campaign).toMatchObject({
      status: 'enriched',
      name: 'Q4 expansion targets',
      lastEnrichment: null,
      results: { totalAccounts: 262 },
    });
    for (const [type, item] of Object.entries(committed.webhooks) as [string, any][])
      expect(item.post.requestBody.content['application/json'].example.type, type).toBe(type);
    expect(
      committed.webhooks['campaign.enrichment_failed'].post.requestBody.content['application/json'].example.data.campaign,
    ).toMatchObject({ status: 'draft', lastEnrichment: { status: 'failed', refunded: true } });
  });

  it('states redeliver’s “exactly one of messageId and deliveryId”, the webhook URL format and the Idempotency-Key value', () => {
    const redeliver = post('/v1/webhooks/redeliver').requestBody.content['application/json'].schema;
    expect(redeliver.oneOf).toEqual([
      { $ref: '#/components/schemas/RedeliverWebhookWithMessageId' },
      { $ref: '#/components/schemas/RedeliverWebhookWithDeliveryId' },
    ]);
    expect(schemaOf('RedeliverWebhookWithMessageId')).toMatchObject({ required: ['messageId'], additionalProperties: false });
    expect(Object.keys(schemaOf('RedeliverWebhookWithMessageId').properties)).toEqual(['messageId']);
    const url = post('/v1/webhooks/create').requestBody.content['application/json'].schema.properties.url;
    expect(url).toMatchObject({ format: 'uri' });
    expect(new RegExp(url.pattern).test('ftp://example.com')).toBe(false);
    expect(new RegExp(url.pattern).test('https://hooks.example.com/x')).toBe(true);
    const key = new RegExp(committed.components.parameters.IdempotencyKey.schema.pattern);
    expect(key.test('5b1d6c1e-8f0a-4c1e-9a43-2f6d0b7c9e21')).toBe(true);
    expect(key.test('has space')).toBe(false);
    expect(key.test('x'.repeat(256))).toBe(false);
  });

  it('documents 405 method_not_allowed (header Allow) on every operation', () => {
    for (const route of API_ROUTES) {
      const response = post(route.operation.path).responses['405'];
      expect(response.headers.Allow, route.operation.operationId).toBeDefined();
      expect(response.content['application/json'].examples.method_not_allowed.value.error.details).toEqual({ allow: ['POST'] });
    }
  });

  it('states update’s “at least one of name, excludeEnrichedWithinDays”', () => {
    const content = post('/v1/campaigns/update').requestBody.content;
    for (const media of Object.values(content) as any[]) {
      expect(media.schema.anyOf).toEqual([{ required: ['name'] }, { required: ['excludeEnrichedWithinDays'] }]);
    }
  });

  it('documents the form encodings: bracket keys, text forms of numbers and booleans, repeated fields, the accountIdsFile part', () => {
    const list = post('/v1/campaigns/list').requestBody.content['application/x-www-form-urlencoded'];
    expect(Object.keys(list.schema.properties)).toEqual(['filters[status]', 'filters[createdVia]', 'cursor', 'limit']);
    // Text patterns carry the real bounds: 1..100 (101 and a leading space refused, as the server refuses them).
    const limit = new RegExp(list.schema.properties.limit.pattern);
    expect(['1', '25', '100', '007'].map((v) => limit.test(v))).toEqual([true, true, true, true]);
    expect(['0', '101', ' 3', '3 ', '1.0', '-1', '', '1e2'].map((v) => limit.test(v))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(list.encoding['filters[status]']).toEqual({ style: 'form', explode: true });
    const exportForm = post('/v1/campaigns/export').requestBody.content['multipart/form-data'].schema.properties;
    expect(exportForm.hasEmail).toMatchObject({ type: 'string', enum: ['true', 'false'] });
    const cap = new RegExp(exportForm.maxContactsPerAccount.pattern);
    expect(['0', '3', '9007199254740991'].map((v) => cap.test(v))).toEqual([true, true, true]);
    expect(['9007199254740992', '10000000000000000', ' 3'].map((v) => cap.test(v))).toEqual([false, false, false]);
    const days = new RegExp(
      post('/v1/campaigns/create').requestBody.content['application/x-www-form-urlencoded'].schema.properties.excludeEnrichedWithinDays
        .pattern,
    );
    expect(['0', '3650', '', 'null'].map((v) => days.test(v))).toEqual([true, true, true, true]);
    expect(['3651', '-1'].map((v) => days.test(v))).toEqual([false, false]);
    const create = post('/v1/campaigns/create').requestBody.content['multipart/form-data'];
    expect(create.schema.properties.accountIdsFile).toMatchObject({ type: 'string', contentMediaType: 'text/csv' });
    expect(create.schema.required).toEqual(['name']);
    // Exactly one source of account IDs (docs/campaigns.md); JSON and urlencoded have the first two.
    expect(create.schema.oneOf).toEqual([
      { required: ['accountIds'] },
      { required: ['accountIdsUploadId'] },
      { required: ['accountIdsFile'] },
    ]);
    // JSON: one complete body per source, each a named component (generated clients type a body without a list as an error).
    expect(post('/v1/campaigns/create').requestBody.content['application/json'].schema.oneOf).toEqual([
      { $ref: '#/components/schemas/CreateCampaignWithAccountIds' },
      { $ref: '#/components/schemas/CreateCampaignWithAccountIdsUploadId' },
    ]);
    expect(schemaOf('CreateCampaignWithAccountIds')).toMatchObject({ required: ['name', 'accountIds'], additionalProperties: false });
    expect(schemaOf('CreateCampaignWithAccountIds').properties.accountIdsUploadId).toBeUndefined();
    expect(schemaOf('CreateCampaignWithAccountIdsUploadId')).toMatchObject({ required: ['name', 'accountIdsUploadId'] });
    expect(create.encoding.accountIdsFile.contentType).toBe('text/csv, text/plain');
  });

  it('rejects a blank name in the schema itself', () => {
    const name = schemaOf('CreateCampaignWithAccountIds').properties.name;
    expect(name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' });
    expect(new RegExp(name.pattern).test('   ')).toBe(false);
  });

  it('lists every error code under its status, with typed details and an example of that very code', () => {
    for (const route of API_ROUTES) {
      const { responses } = post(route.operation.path);
      const codes = [
        ...documented(route.operation).errors,
        'invalid_api_key',
        'method_not_allowed',
        'internal_error',
        ...(route.operation.idempotent ? ['idempotency_key_reused', 'idempotency_key_in_use'] : []),
      ];
      for (const code of codes) {
        const status = String(ERROR_STATUS[code as keyof typeof ERROR_STATUS]);
        const media = responses[status]?.content['application/json'];
        expect(media, `${route.operation.operationId} ${code}`).toBeDefined();
        const example = media.examples[code].value;
        expect(example.data).toBeNull();
        expect(example.error.code).toBe(code);
        const error = media.schema.properties.error;
        const refs: string[] = error.oneOf ? error.oneOf.map((o: any) => o.$ref) : [error.$ref];
        const schema = refs.map(schemaOf).find((s) => s.properties.code.const === code);
        expect(schema, `${route.operation.operationId} ${code}`).toBeDefined();
        if (example.error.details)
          expect(Object.keys(schema.properties.details.properties ?? {}).sort()).toEqual(Object.keys(example.error.details).sort());
      }
    }
    expect(schemaOf('InsufficientCreditsError').properties.details.properties.available).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
    });
  });

  it('documents every refusal a launch can answer on enrich, each under its status (spend_limit_exceeded was missing: Prism turned the real 402 into a 500)', () => {
    const responses = post('/v1/campaigns/enrich').responses;
    const refusals = LAUNCH_OUTCOMES.filter((outcome) => outcome !== 'launchable');
    expect(refusals).toContain('spend_limit_exceeded');
    for (const code of refusals) {
      const media = responses[String(ERROR_STATUS[code])].content['application/json'];
      expect(media.examples[code]?.value.error.code, code).toBe(code);
      const error = media.schema.properties.error;
      const refs: string[] = error.oneOf ? error.oneOf.map((o: any) => o.$ref) : [error.$ref];
      expect(
        refs.map(schemaOf).some((s) => s.properties.code.const === code),
        code,
      ).toBe(true);
    }
    expect(responses['402'].description).toMatch(/`spend_limit_exceeded`/);
  });

  it('shows code samples of every operation, curl and the TypeScript client, from its one request example', () => {
    for (const route of API_ROUTES) {
      const operation = post(route.operation.path);
      const [curl, client] = operation['x-codeSamples'];
      expect([curl.lang, client.lang], operation.operationId).toEqual(['Shell', 'TypeScript']);
      expect(curl.source).toContain(`curl -s -X POST "$BASE_URL${route.operation.path}"`);
      expect(client.source).toContain(`await api.${operation.operationId}(`);
      // The client has a method of that name, for that path.
      expect(OPERATIONS[operation.operationId as keyof typeof OPERATIONS]?.path, operation.operationId).toBe(route.operation.path);
      const example = operation.requestBody.content['application/json'].example;
      const body = /-d '(.*)'$/m.exec(curl.source)?.[1];
      expect(body === undefined ? undefined : JSON.parse(body.replaceAll("'\\''", "'")), operation.operationId).toEqual(example);
    }
  });

  it('ties completedAt, resultsExpireAt and results to the status', () => {
    const campaign = committed.components.schemas.Campaign;
    expect(campaign.discriminator.propertyName).toBe('status');
    const variants = Object.fromEntries(campaign.oneOf.map((o: any) => [schemaOf(o.$ref).properties.status.const, schemaOf(o.$ref)]));
    expect(Object.keys(variants).sort()).toEqual(['draft', 'enriched', 'enriching', 'expired', 'tam_only']);
    expect(variants.enriched.required).toEqual(expect.arrayContaining(['completedAt', 'resultsExpireAt', 'results']));
    expect(variants.expired.required).toContain('resultsExpireAt');
    for (const status of ['draft', 'enriching', 'expired', 'tam_only']) expect(variants[status].properties.results, status).toBeUndefined();
    expect(variants.expired.properties.completedAt).toBeUndefined();
  });

  it('bounds every integer (its real maximum, else 2^53 − 1) and shows no negative figure', () => {
    const unbounded: string[] = [];
    const visit = (node: unknown, path: string) => {
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${path}/${i}`));
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (schema.type === 'integer' && typeof schema.maximum !== 'number') unbounded.push(path);
      for (const [key, value] of Object.entries(schema)) visit(value, `${path}/${key}`);
    };
    visit(committed, '#');
    expect(unbounded).toEqual([]);
    expect(
      committed.components.schemas.CampaignListItem.properties.excludeEnrichedWithinDays.anyOf?.[0]?.maximum ??
        committed.components.schemas.CampaignListItem.properties.excludeEnrichedWithinDays.maximum,
    ).toBe(3650);
    const credits = committed.components.schemas.OrganizationDescription.properties.credits.properties;
    expect(credits.smb.minimum).toBe(0);
  });

  it('declares the headers of docs/idempotency.md on the operations', () => {
    const enrich = post('/v1/campaigns/enrich');
    expect(enrich.parameters).toEqual([{ $ref: '#/components/parameters/IdempotencyKey' }]);
    expect(committed.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header' });
    expect(post('/v1/campaigns/get').parameters).toBeUndefined();
    for (const [status, response] of Object.entries(enrich.responses) as [string, any][])
      expect(response.headers['X-Request-Id'], status).toBeDefined();
    expect(enrich.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
    expect(enrich.responses['402'].headers['Idempotent-Replayed']).toBeDefined();
    expect(enrich.responses['429'].headers['Idempotent-Replayed']).toBeUndefined();
    expect(enrich.responses['409'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(enrich.responses['401'].headers['WWW-Authenticate']).toBeDefined();
  });

  it('links each created ID to every operation that takes it (OpenAPI links: create → describe, launch, revoke …), by the ID pattern', () => {
    const byId = new Map<string, any>();
    for (const item of Object.values(committed.paths) as any[]) byId.set(item.post.operationId, item.post);
    const linksOf = (operationId: string) => Object.keys(byId.get(operationId).responses['200'].links ?? {}).sort();
    expect(linksOf('createCampaign')).toEqual(
      [
        'cancelCampaign',
        'enrichCampaign',
        'exportCampaign',
        'getCampaign',
        'listCampaignAccounts',
        'listCampaignResults',
        'quoteCampaign',
        'streamCampaignResults',
        'updateCampaign',
      ].sort(),
    );
    expect(linksOf('createKey')).toEqual(['revokeKey', 'rotateKey']);
    expect(linksOf('createWebhookEndpoint')).toEqual(['deleteWebhookEndpoint', 'rotateWebhookSecret', 'testWebhookEndpoint']);
    expect(linksOf('createErasure')).toEqual(['getErasure']);
    expect(linksOf('createSuppressions')).toEqual(['deleteSuppression']);
    // The test message is a created resource too: a fuzzer reaches redeliver with a real message ID.
    expect(linksOf('testWebhookEndpoint')).toEqual(['redeliverWebhook']);
    // Every link names a real operation, and the field it fills is one that operation's JSON request takes with the
    // pattern the created ID has: the value a link carries is one the target accepts.
    let links = 0;
    for (const operation of byId.values()) {
      for (const link of Object.values(operation.responses['200'].links ?? {}) as any[]) {
        links += 1;
        const target = byId.get(link.operationId);
        expect(target, link.operationId).toBeDefined();
        const [[field, expression]] = Object.entries(link.requestBody) as [[string, string]];
        const pointer = expression.replace('$response.body#', '').split('/').slice(1);
        let produced: any = operation.responses['200'].content['application/json'].schema;
        for (const segment of pointer) {
          if (produced.$ref) produced = schemaOf(produced.$ref);
          if (produced.oneOf) produced = produced.oneOf[0].$ref ? schemaOf(produced.oneOf[0].$ref) : produced.oneOf[0];
          produced = /^\d+$/.test(segment) ? produced.items : produced.properties[segment];
        }
        let request = target.requestBody.content['application/json'].schema;
        if (request.$ref) request = schemaOf(request.$ref);
        const fields = [request, ...(request.oneOf ?? []).map((branch: any) => (branch.$ref ? schemaOf(branch.$ref) : branch))];
        const taken = fields.map((schema: any) => schema.properties?.[field]).find(Boolean);
        expect(taken?.pattern, `${link.operationId}.${field}`).toMatch(/^\^[a-z]+_/);
        expect(produced.pattern, `${operation.operationId} → ${link.operationId}`).toBe(taken.pattern);
      }
    }
    expect(links).toBe(17);
    // A producer whose pointer names no ID pattern is refused when the document is built.
    const route = API_ROUTES.find((each) => each.operation.operationId === 'createCampaign')!;
    const docs = documented(route.operation);
    docs.creates = '/name';
    try {
      expect(() => buildOpenApiDocument(API_ROUTES.map((each) => each.operation))).toThrow(
        /createCampaign: creates \/name must point at one ID pattern/,
      );
    } finally {
      docs.creates = '/id';
    }
  });

  it('is what GET /openapi.json serves, with the server it was reached at', async () => {
    const response = await fetch(`${api()}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const served = (await response.json()) as any;
    expect(served.servers).toEqual([{ url: api(), description: 'This deployment.' }]);
    // Its contact names the serving deployment's support guide (lib/contract/openapi.ts SUPPORT); the rest is the committed document.
    expect(served.info.contact.url).toBe(`${api()}/docs/support.md`);
    // A stream is served at the serving deployment's own address (its operation's servers).
    for (const route of API_ROUTES.filter((each) => each.operation.streaming)) {
      expect(served.paths[route.operation.path].post.servers.map((server: { url: string }) => server.url)).toEqual([api()]);
      served.paths[route.operation.path].post.servers = committed.paths[route.operation.path].post.servers;
    }
    expect({ ...served, servers: committed.servers, info: { ...served.info, contact: committed.info.contact } }).toEqual(committed);
  });
});
