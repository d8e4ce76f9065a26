/**
 * The machine-readable descriptions beside the OpenAPI document (issue #34):
 * docs/asyncapi.json (AsyncAPI 3 of the webhook events, generated from the
 * events' zod schemas, valid for @asyncapi/parser, served at
 * `GET /asyncapi.json`) and docs/arazzo.json (the Arazzo workflow "enrich a
 * list and export", whose steps name operations of docs/openapi.json with
 * bodies those operations take). Redocly lints the Arazzo file in CI
 * (`npm run openapi:lint`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { buildAsyncApiDocument } from '../lib/contract/asyncapi';
import { buildArazzoDocument } from '../lib/contract/arazzo';
import { ALL_EVENT_EXAMPLES, allEventPayloadSchemas } from '../lib/contract/events';
import { WEBHOOK_EVENT_TYPES } from '../lib/webhooks/events';
import { validateAsyncApi } from './support/asyncapi';
import { useApi } from './support/api';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));
const asyncapi = read('docs/asyncapi.json');
const arazzo = read('docs/arazzo.json');
const openapi = read('docs/openapi.json');
const api = useApi();

describe('docs/asyncapi.json', () => {
  it('is the generated AsyncAPI 3 document, valid with no warning', async () => {
    expect(asyncapi).toEqual(JSON.parse(JSON.stringify(buildAsyncApiDocument())));
    expect(asyncapi.asyncapi).toMatch(/^3\./);
    expect(await validateAsyncApi(JSON.stringify(asyncapi))).toEqual([]);
    // The validator does refuse a broken document.
    const broken = structuredClone(asyncapi);
    broken.components.messages.campaignEnriched.payload = { $ref: '#/components/schemas/Nope' };
    expect((await validateAsyncApi(JSON.stringify(broken))).map((d) => d.code)).toContain('invalid-ref');
  });

  it('has one message per event type, with the Standard Webhooks headers and an example its zod schema accepts', () => {
    const messages = Object.values(asyncapi.components.messages) as any[];
    expect(messages.map((m) => m.name).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    expect(asyncapi.components.schemas.WebhookHeaders.required).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    for (const message of messages) {
      const type = message.name as (typeof WEBHOOK_EVENT_TYPES)[number];
      const schema = new Map<string, z.ZodMiniType>(allEventPayloadSchemas()).get(type)!;
      expect(z.safeParse(schema, message.examples[0].payload).success, type).toBe(true);
      expect(message.examples[0].payload).toEqual(ALL_EVENT_EXAMPLES[type]);
    }
    // One shared schema per concept, as in the OpenAPI document.
    expect(asyncapi.components.schemas.EnrichedCampaign.properties.status).toMatchObject({ const: 'enriched' });
    expect(asyncapi.components.messages.campaignEnriched.payload).toEqual({ $ref: '#/components/schemas/WebhookEvent_campaign_enriched' });
    expect(asyncapi.components.schemas.WebhookEvent_campaign_enriched.properties.data.properties.campaign).toEqual({
      $ref: '#/components/schemas/EnrichedCampaign',
    });
    expect(asyncapi.operations.sendCampaignEvent.action).toBe('send');
  });

  it('is served at GET /asyncapi.json', async () => {
    const response = await fetch(`${api()}/asyncapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Its contact names the serving deployment's support guide (lib/contract/openapi.ts SUPPORT); the rest is the committed document.
    const served = (await response.json()) as typeof asyncapi & { info: { contact: { url: string } } };
    expect(served.info.contact.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/docs\/support\.md$/);
    expect({ ...served, info: { ...served.info, contact: (asyncapi as typeof served).info.contact } }).toEqual(asyncapi);
  });
});

describe('docs/arazzo.json', () => {
  it('is the generated Arazzo 1.0 workflow: upload → create → quote → enrich → poll → export', () => {
    expect(arazzo).toEqual(JSON.parse(JSON.stringify(buildArazzoDocument())));
    expect(arazzo.arazzo).toMatch(/^1\.0\./);
    const [workflow] = arazzo.workflows;
    expect(
      workflow.steps.map((s: { operationId?: string; 'x-operation'?: { method: string } }) => s.operationId ?? s['x-operation']?.method),
    ).toEqual(['createUpload', 'PUT', 'createCampaign', 'quoteCampaign', 'enrichCampaign', 'getCampaign', 'exportCampaign']);
    // The upload's PUT is a step of its own, to the URL createUpload answered (test/arazzo-respect.test.ts runs it).
    expect(workflow.steps[1]['x-operation']).toEqual({ url: '$steps.createUpload.outputs.url', method: 'PUT' });
  });

  it('names only operations of docs/openapi.json, with bodies and headers they take', () => {
    const operations = new Map(
      Object.values(openapi.paths as Record<string, { post: any }>).map((item) => [item.post.operationId, item.post]),
    );
    const schemaOf = (ref: string) => openapi.components.schemas[ref.replace('#/components/schemas/', '')];
    for (const step of arazzo.workflows[0].steps.filter((s: { operationId?: string }) => s.operationId)) {
      const operation = operations.get(step.operationId);
      expect(operation, step.operationId).toBeDefined();
      const json = operation.requestBody.content['application/json'].schema;
      const variants = json.oneOf ? json.oneOf.map((v: { $ref: string }) => schemaOf(v.$ref)) : [json.$ref ? schemaOf(json.$ref) : json];
      const fields = Object.keys(step.requestBody.payload);
      expect(
        variants.some(
          (v: { properties: object; required?: string[] }) =>
            fields.every((f) => f in v.properties) && (v.required ?? []).every((r) => fields.includes(r)),
        ),
        `${step.stepId}: body fields ${fields.join(', ')}`,
      ).toBe(true);
      const idempotencyHeader = step.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key');
      expect(idempotencyHeader, `${step.stepId}: Idempotency-Key`).toBe(
        (operation.parameters ?? []).some((p: { $ref: string }) => p.$ref === '#/components/parameters/IdempotencyKey'),
      );
    }
  });
});
