/**
 * The published documents as judges of real webhook deliveries (issue #37):
 * every request a test receiver gets (test/webhooks/receiver.ts) is checked
 * against its AsyncAPI message (docs/asyncapi.json: the Standard Webhooks
 * headers and the payload) and against its OpenAPI `webhooks` entry
 * (docs/openapi.json: the header parameters and the request body), with ajv,
 * a validator we did not write. The AsyncAPI parser and Spectral only judge a
 * document's shape; only real messages show that a document describes what
 * the API sends (a builder that dropped every property named `id` while `id`
 * stayed required passed both).
 *
 * test/webhook-contract.test.ts proves the validator catches a broken
 * document and a broken message.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export is the function itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

type Json = Record<string, any>;

/** The two documents a delivery is judged by (as published in docs/). */
export interface WebhookDocuments {
  asyncapi: Json;
  openapi: Json;
}

/** A delivery as a receiver saw it: lower-case header names, the raw body. */
export interface Delivery {
  headers: IncomingHttpHeaders | Record<string, string>;
  body: string;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** docs/asyncapi.json and docs/openapi.json as committed (what a user downloads). */
export const publishedDocuments = (): WebhookDocuments => ({
  asyncapi: JSON.parse(readFileSync(path.join(ROOT, 'docs/asyncapi.json'), 'utf8')),
  openapi: JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')),
});

const describeErrors = (where: string, errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map(
    (e) =>
      `${where}: ${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`,
  );

/**
 * A judge of deliveries against two documents: AsyncAPI schemas are JSON
 * Schema draft-07 (ajv's default dialect), OpenAPI 3.1 schemas are JSON Schema
 * 2020-12 (Ajv2020). Each document is registered whole, so a `$ref` into its
 * `components` resolves as it would for a user's tool.
 */
export function webhookJudge(documents: WebhookDocuments = publishedDocuments()) {
  const options = { strict: false, allErrors: true, validateSchema: false } as const;
  const draft7 = new Ajv(options);
  const draft2020 = new Ajv2020(options);
  addFormats(draft7);
  addFormats(draft2020);
  // The AsyncAPI root's `id` is the document's URN, not a schema keyword (ajv refuses draft-04's `id`).
  const { id: _urn, ...asyncapi } = documents.asyncapi;
  draft7.addSchema(asyncapi, 'asyncapi');
  draft2020.addSchema(documents.openapi, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const compile = (ajv: Ajv | Ajv2020, ref: string) => {
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
    return validate;
  };
  const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

  /**
   * Every way `delivery` breaks either document (empty when both accept it).
   * A body that is not JSON or names no documented event type is a violation.
   */
  return (delivery: Delivery): string[] => {
    let body: unknown;
    try {
      body = JSON.parse(delivery.body);
    } catch {
      return [`body is not JSON: ${delivery.body.slice(0, 80)}`];
    }
    const type = (body as { type?: unknown })?.type;
    const violations: string[] = [];
    const headers = Object.fromEntries(
      Object.entries(delivery.headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value]),
    );

    // AsyncAPI: the message whose name is the event type, its headers and payload.
    const messages = (documents.asyncapi.components?.messages ?? {}) as Record<string, Json>;
    const key = Object.keys(messages).find((k) => messages[k]!.name === type);
    if (key === undefined) violations.push(`asyncapi: no message named ${JSON.stringify(type)}`);
    else {
      const base = `asyncapi#/${pointer('components', 'messages', key)}`;
      const validateHeaders = compile(draft7, `${base}/headers`);
      if (!validateHeaders(headers)) violations.push(...describeErrors(`asyncapi ${key} headers`, validateHeaders.errors));
      const validatePayload = compile(draft7, `${base}/payload`);
      if (!validatePayload(body)) violations.push(...describeErrors(`asyncapi ${key} payload`, validatePayload.errors));
    }

    // OpenAPI: the `webhooks` entry of the event type, its header parameters and request body.
    const entry = typeof type === 'string' ? (documents.openapi.webhooks?.[type]?.post as Json | undefined) : undefined;
    if (!entry) violations.push(`openapi: no webhooks entry ${JSON.stringify(type)}`);
    else {
      const base = `openapi#/${pointer('webhooks', type as string, 'post')}`;
      ((entry.parameters ?? []) as Json[]).forEach((parameter, i) => {
        if (parameter.in !== 'header') return;
        const value = headers[String(parameter.name).toLowerCase()];
        if (value === undefined) {
          if (parameter.required) violations.push(`openapi ${type} header ${parameter.name}: missing`);
          return;
        }
        const validate = compile(draft2020, `${base}/parameters/${i}/schema`);
        if (!validate(value)) violations.push(...describeErrors(`openapi ${type} header ${parameter.name}`, validate.errors));
      });
      const validateBody = compile(draft2020, `${base}/${pointer('requestBody', 'content', 'application/json', 'schema')}`);
      if (!validateBody(body)) violations.push(...describeErrors(`openapi ${type} body`, validateBody.errors));
    }
    return violations;
  };
}

let shared: ReturnType<typeof webhookJudge> | undefined;

/** The judge over the published documents, built once per test file. */
export const judgeDelivery = (delivery: Delivery): string[] => (shared ??= webhookJudge())(delivery);
