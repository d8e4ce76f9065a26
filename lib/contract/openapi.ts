/**
 * The OpenAPI 3.1 document (version 1.0.0, README.md;
 * README.md), generated from the operations' zod schemas by zod-openapi: the
 * schemas that validate requests (lib/<domain>/schema.ts) are the ones the
 * document shows, with each operation's documentation (lib/<domain>/docs.ts).
 *
 * Per operation it states: the JSON body and its two form encodings (text
 * forms of numbers and booleans, `filters[status]` bracket keys, repeated
 * fields, multipart file parts); every error code under its status with its
 * typed `details` and a real example; the headers of docs/idempotency.md
 * (`Idempotency-Key`, `X-Request-Id`, `Idempotent-Replayed`, `Retry-After`).
 *
 * `npm run openapi:write` writes it to `docs/openapi.json`;
 * `npm run openapi:check` fails when that file differs from this output.
 */
import * as z from 'zod';
import * as zm from 'zod/mini';
import toRegexRange from 'to-regex-range';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { ApiError, ERROR_STATUS, InvalidRequestError, type ErrorCode } from '../errors';
import { ERRORS } from './errors';
import { isSavedRefusal } from '../idempotency/middleware';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency/key';
import { formatIssues } from '../http/issues';
import { SETTINGS } from '../config';
import type { DocumentedOperation, Operation } from '../http/operation';
import { SCOPES } from '../http/scopes';
import { STREAM_MEDIA_TYPES } from '../http/stream';
import { ATTEMPT_ID_HEADER } from '../exports/stream';
import { RETRY_SCHEDULE_TEXT, WEBHOOK_HEADERS, webhookOperationDocs } from '../webhooks/docs';
import { ALL_EVENT_DESCRIPTIONS, ALL_EVENT_EXAMPLES, allEventPayloadSchemas, eventFeedDoc } from './events';
import { campaignOperationDocs } from '../campaigns/docs';
import { creditOperationDocs } from '../credits/docs';
import { enrichmentOperationDocs } from '../enrichment/docs';
import { exportOperationDocs } from '../exports/docs';
import { organizationOperationDocs } from '../organizations/docs';
import { uploadOperationDocs } from '../uploads/docs';
import { privacyOperationDocs } from '../privacy/docs';
import { auditOperationDocs } from '../audit/docs';

/**
 * Who answers questions about the API: the one owner of the support address and page (the OpenAPI and AsyncAPI
 * documents' `info.contact`, the MCP `llms.txt`, docs/support.md). The page is the deployment's own guide, served
 * at `GET /docs/support.md` beside the API reference.
 */
export const SUPPORT = {
  name: 'Campaign Enrichment API support',
  email: 'support@campaign-enrichment.com',
  /** Path of the support guide on every deployment (docs/support.md, served by the docs function). */
  guidePath: '/docs/support.md',
} as const;

/** The `info.contact` block of a document served from `serverUrl` (its `url` is that deployment's support guide). */
export const contactOf = (serverUrl: string) => ({ name: SUPPORT.name, url: `${serverUrl}${SUPPORT.guidePath}`, email: SUPPORT.email });

/** Server shown in the committed document: the local stack of `npm start`. */
export const LOCAL_SERVER_URL = 'http://127.0.0.1:3000';

const pascal = (code: string) => code.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

/** The `error` object of one code: `code` fixed, `details` typed (component `<Code>Error`). */
const errorSchemas = Object.fromEntries(
  (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => {
    const { details, meaning } = ERRORS[code];
    const shape = {
      code: z.literal(code),
      message: z.string(),
      ...(details ? { details: details.required ? details.schema : details.schema.optional() } : {}),
    };
    const id = code.endsWith('_error') ? pascal(code) : `${pascal(code)}Error`;
    return [code, z.strictObject(shape).meta({ id, description: `${ERROR_STATUS[code]} \`${code}\`: ${meaning}` })];
  }),
) as unknown as Record<ErrorCode, z.ZodObject>;

/** Response headers of docs/idempotency.md. */
const HEADERS = {
  'X-Request-Id': {
    description: 'ID of this request (API Gateway’s request ID): quote it to support; every log line of the request carries it.',
    required: true,
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this is the saved answer of an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description:
      'Seconds to wait before retrying (on `enrichment_pending` until the launch lock expires; `1` on `idempotency_key_in_use`; on `rate_limited` until the window resets).',
    schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  },
  'RateLimit-Policy': {
    description:
      'The organization\'s request-rate policy (IETF draft-ietf-httpapi-ratelimit-headers, structured fields): `"requests";q=<requests per window>;w=<window seconds>`. On every authenticated answer, refusals included.',
    required: true,
    schema: { type: 'string', example: `"requests";q=${SETTINGS.rateLimitRequests.default};w=${SETTINGS.rateLimitWindowSeconds.default}` },
  },
  RateLimit: {
    description:
      'What is left of the current window: `\"requests\";r=<remaining>;t=<seconds until the window resets>`. On every authenticated answer, refusals included; pace on it.',
    required: true,
    schema: { type: 'string', example: '"requests";r=163;t=7' },
  },
  'Credits-Remaining': {
    description: "The organization's smb credit balance after this request (the value the body shows where it shows one).",
    required: true,
    schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  },
  'WWW-Authenticate': { description: '`Bearer` (RFC 6750).', schema: { type: 'string', enum: ['Bearer'] } },
  // docs/test-mode.md.
  'Test-Mode': {
    description:
      'Present (`true`) on every answer to a test key (`cek_test_…`), errors included: the request acted on the organization’s test twin, never on live data or credits.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'The methods the path takes: `POST`.', required: true, schema: { type: 'string', enum: ['POST'] } },
  // docs/results.md "The stream".
  [ATTEMPT_ID_HEADER]: {
    description:
      'The attempt the streamed seqs belong to (`attemptId` of the results page). A resume answered with another attempt reads a new attempt: its seqs start again at 1, so read it from `afterSeq` 0.',
    required: true,
    schema: { type: 'string' },
  },
} as const;
const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Makes a retry safe (Stripe semantics; IETF httpapi idempotency-key draft): the first request with this key runs, later ones with the same body get its saved answer (with \`Idempotent-Replayed: true\`) for 24 h, per organization and operation. 1..${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters; one pair of surrounding double quotes is removed. A 2xx answer or a business refusal (402, 404, 409 \`campaign_not_enrichable\`/\`campaign_not_editable\`/\`campaign_not_cancelable\`, 422) is saved; 400, 401, 409 \`enrichment_pending\`, 429 and 5xx release the key. The same key with another body: 422 \`idempotency_key_reused\`; while the first still runs: 409 \`idempotency_key_in_use\`.`,
  schema: { type: 'string', pattern: `^("[!-~]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}"|[!-~]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}})$` },
  example: '5b1d6c1e-8f0a-4c1e-9a43-2f6d0b7c9e21',
} as const;

type JsonSchema = Record<string, any>;

/** The JSON Schema of a zod schema, with every `$ref` into `$defs` inlined (for the form variants). */
function inlineJsonSchema(schema: z.core.$ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (!node || typeof node !== 'object') return node;
    const { $ref, $defs: _defs, $schema: _schema, ...withId } = node as JsonSchema;
    // A schema's meta `id` (a string) goes; a property named `id` (a schema, in `properties`) stays.
    const { id, ...rest } = withId;
    if (id !== undefined && typeof id !== 'string') rest.id = id;
    if (typeof $ref === 'string' && $ref.startsWith('#/$defs/')) return inline({ ...defs[$ref.slice('#/$defs/'.length)], ...rest });
    return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value)]));
  };
  return inline(json) as JsonSchema;
}

const describe = (schema: JsonSchema, text: string) => ({ ...schema, description: [schema.description, text].filter(Boolean).join(' ') });

/**
 * The text an integer field of a form body takes (lib/http/form.ts reads
 * plain decimal digits, no sign, no space): a pattern that matches exactly
 * the integers from `min` to `max` (leading zeros allowed, as the server
 * reads `007` as 7), so `limit=101` fails the document as it fails the API.
 */
export function integerTextPattern(min = 0, max = Number.MAX_SAFE_INTEGER): string {
  if (min < 0) throw new Error(`integerTextPattern: form integers are non-negative (minimum ${min})`);
  return `^0*(?:${toRegexRange(min, max, { capture: false, shorthand: true }).replace(/^\(\?:(.*)\)$/, '$1')})$`.replace(
    '^0*(?:0)$',
    '^0+$',
  );
}

/** The text form of one JSON Schema value in a form body (numbers, booleans and nulls arrive as text). */
function textForm(schema: JsonSchema): JsonSchema {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const nullable = variants.some((v) => v.type === 'null');
    const others = variants.filter((v) => v.type !== 'null');
    // One value or an array of them (list filters): the field, repeated.
    const array = others.find((v) => v.type === 'array');
    if (array) return describe({ ...textForm(array), description: schema.description }, 'Repeat the field for several values.');
    if (nullable && others.length === 1) {
      const inner = textForm({ ...others[0], description: schema.description });
      return describe(
        { ...inner, pattern: inner.pattern ? `^(${inner.pattern.slice(1, -1)})?$|^null$` : undefined },
        'Empty (or `null`) for null.',
      );
    }
  }
  const min = schema.minimum === Number.MIN_SAFE_INTEGER ? undefined : (schema.minimum as number | undefined);
  const max = schema.maximum === Number.MAX_SAFE_INTEGER ? undefined : (schema.maximum as number | undefined);
  const range =
    min !== undefined && max !== undefined
      ? ` (${min}..${max})`
      : min !== undefined
        ? ` (${min} or more)`
        : max !== undefined
          ? ` (at most ${max})`
          : '';
  switch (schema.type) {
    case 'integer':
      return {
        type: 'string',
        pattern: integerTextPattern(schema.minimum as number | undefined, schema.maximum as number | undefined),
        description: [schema.description, `An integer${range}, as text.`].filter(Boolean).join(' '),
      };
    case 'number':
      return {
        type: 'string',
        pattern: '^-?\\d+(\\.\\d+)?$',
        description: [schema.description, `A number${range}, as text.`].filter(Boolean).join(' '),
      };
    case 'boolean':
      return { type: 'string', enum: ['true', 'false'], ...(schema.description ? { description: schema.description } : {}) };
    case 'array': {
      const { items, ...rest } = schema;
      return describe({ ...rest, items: textForm(items as JsonSchema) }, 'Repeat the field once per value.');
    }
    default:
      return schema;
  }
}

/** A JSON request value as a form body carries it (the docs' form examples). */
function formExample(value: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}[${key}]` : key;
    if (v && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, formExample(v as Record<string, unknown>, name));
    else out[name] = Array.isArray(v) ? v.map(String) : v === null ? '' : String(v);
  }
  return out;
}

/** A single value of a repeated field, as the array it is read as. */
function asSchemaShapes(example: Record<string, unknown>, properties: Record<string, JsonSchema>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(example).map(([key, value]) => [key, properties[key]?.type === 'array' && !Array.isArray(value) ? [value] : value]),
  );
}

/**
 * The form variant of a request schema: nested objects flattened into
 * bracket keys (`filters[status]`), text forms of numbers, booleans and
 * nulls, repeated fields for arrays, and (multipart) the operation's file parts.
 */
function formMedia(operation: DocumentedOperation, multipart: boolean) {
  const json = inlineJsonSchema(operation.request);
  const properties: Record<string, JsonSchema> = {};
  const encoding: Record<string, Record<string, unknown>> = {};
  let required = [...((json.required as string[] | undefined) ?? [])];
  for (const [key, schema] of Object.entries((json.properties ?? {}) as Record<string, JsonSchema>)) {
    if (schema.type === 'object' && schema.properties) {
      for (const [inner, innerSchema] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
        properties[`${key}[${inner}]`] = describe(textForm(innerSchema), `\`${key}.${inner}\` of the JSON body.`);
      }
      continue;
    }
    properties[key] = textForm(schema);
  }
  for (const [name, form] of Object.entries(properties)) {
    if (form.type !== 'array') continue;
    encoding[name] = multipart ? { contentType: 'text/plain' } : { style: 'form', explode: true };
    // A multipart field sent once is one value, which the server reads as a list of one (lib/http/form.ts).
    if (multipart) {
      const { description, items, ...array } = form;
      properties[name] = { description, anyOf: [items, { ...array, items }] };
    }
  }
  let anyOf = json.anyOf as JsonSchema[] | undefined;
  let oneOf = json.oneOf as JsonSchema[] | undefined;
  if (multipart) {
    for (const [name, part] of Object.entries(operation.fileParts ?? {})) {
      properties[name] = { type: 'string', contentMediaType: part.contentTypes[0], description: part.description };
      encoding[name] = { contentType: part.contentTypes.join(', ') };
      if (required.includes(part.replaces)) {
        required = required.filter((field) => field !== part.replaces);
        anyOf = [...(anyOf ?? []), { required: [part.replaces] }, { required: [name] }];
      }
      // A field that is one of several exclusive sources (docs/campaigns.md#large-account-lists-upload-first): the file part is one more.
      if (oneOf?.some((variant) => (variant.required as string[] | undefined)?.includes(part.replaces)))
        oneOf = [...oneOf, { required: [name] }];
    }
  }
  const schema: JsonSchema = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(anyOf ? { anyOf } : {}),
    ...(oneOf ? { oneOf } : {}),
    additionalProperties: false,
  };
  return {
    schema,
    ...(Object.keys(encoding).length > 0 ? { encoding } : {}),
    ...(operation.example ? { example: asSchemaShapes(formExample(operation.example), properties) } : {}),
  };
}

/** A real `invalid_request` of the operation: its own schema's answer to an empty (or unknown-field) body. */
function invalidRequestExample(operation: Operation): ApiError {
  const empty = z.safeParse(operation.request, {});
  const parsed = empty.success ? z.safeParse(operation.request, { unexpected: true }) : empty;
  return new InvalidRequestError('The request body is invalid.', parsed.success ? ['body: invalid'] : formatIssues(parsed.error.issues));
}

/** The form body of an operation without fields: no field at all. */
const EMPTY_FORM = { type: 'object', properties: {}, additionalProperties: false } as const;

const envelopeOf = (error: z.ZodType) => z.strictObject({ data: z.null(), error });

/** The media types of a streaming operation's success (lib/http/stream.ts), each describing one object of the stream. */
function streamContent(operation: DocumentedOperation) {
  const item = operation.streamItem ?? operation.response;
  return {
    [STREAM_MEDIA_TYPES.jsonl]: { schema: item },
    [STREAM_MEDIA_TYPES.ndjson]: { schema: item },
    [STREAM_MEDIA_TYPES.sse]: {
      schema: {
        type: 'string' as const,
        description:
          'Server-Sent Events: per object `event: <type>`, `data: <the object as one JSON line>` (the schema of the JSON Lines media types) and, for an account, `id: <seq>`; a keep-alive is a comment line (`: keepalive`).',
      },
    },
  };
}

/** The `Last-Event-ID` header of a streaming operation: an SSE reconnect's position. */
const LAST_EVENT_ID_PARAMETER = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description:
    "An SSE reconnect: the `id:` of the last event received (an account's seq). The stream resumes after it; it takes precedence over `afterSeq`.",
  schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
} as const;

/**
 * Every error code an operation's document lists, in the document's order: what the pipeline can answer for any
 * operation (authentication, scope, method, rate limit, internal error; the idempotency codes and `invalid_request`
 * for one that honours `Idempotency-Key`) and the codes its docs.ts declares in `errors`. The local stack of the
 * tests answers any other code as a 500 naming it (infra/local/server.ts), and test/error-coverage.test.ts compares
 * it with the error classes each function's bundle holds.
 */
export function listedErrorCodes(operation: DocumentedOperation): ErrorCode[] {
  const codes = [
    ...new Set<ErrorCode>([
      'invalid_api_key',
      'expired_api_key',
      'insufficient_scope',
      ...operation.errors,
      'method_not_allowed',
      ...(operation.idempotent ? (['idempotency_key_reused', 'idempotency_key_in_use'] as const) : []),
      'rate_limited',
      'internal_error',
    ]),
  ];
  if (operation.idempotent && !codes.includes('invalid_request')) codes.unshift('invalid_request');
  return codes;
}

function operationObject(operation: DocumentedOperation, streamServerUrl: string | undefined): ZodOpenApiOperationObject {
  const codes = listedErrorCodes(operation);
  const rateLimitHeaders = { 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);

  const replayable = (status: number, statusCodes: ErrorCode[]) =>
    operation.idempotent && statusCodes.some((code) => code !== 'idempotency_key_reused' && isSavedRefusal({ code, statusCode: status }));

  const responses: Record<string, ZodOpenApiResponseObject> = {
    '200': {
      description: operation.idempotent ? 'Success (saved for replay when the request has an `Idempotency-Key`).' : 'Success.',
      headers: {
        'X-Request-Id': headerRef('X-Request-Id'),
        ...rateLimitHeaders,
        ...(operation.creditsRemaining ? { 'Credits-Remaining': headerRef('Credits-Remaining') } : {}),
        ...(operation.idempotent ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
        'Test-Mode': headerRef('Test-Mode'),
      },
      content: operation.streaming
        ? streamContent(operation)
        : {
            'application/json': {
              schema: z.strictObject({ data: operation.response, error: z.null() }),
              ...(responseExampleOf(operation) !== undefined ? { example: { data: responseExampleOf(operation), error: null } } : {}),
            },
          },
    },
  };
  if (operation.streaming) {
    responses['200']!.description = 'The stream: JSON Lines, or Server-Sent Events on `Accept: text/event-stream`.';
    responses['200']!.headers = { ...responses['200']!.headers, [ATTEMPT_ID_HEADER]: headerRef(ATTEMPT_ID_HEADER) };
  }
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schemas = statusCodes.map((code) => errorSchemas[code]);
    const error =
      schemas.length === 1 ? schemas[0]! : z.discriminatedUnion('code', schemas as [z.ZodObject, z.ZodObject, ...z.ZodObject[]]);
    const examples = Object.fromEntries(
      statusCodes.map((code) => {
        const example = code === 'invalid_request' ? invalidRequestExample(operation) : ERRORS[code].example;
        return [code, { summary: code, value: { data: null, error: example.toJSON() } }];
      }),
    );
    // A code whose class answers `Retry-After` (lib/errors.ts): its example carries the header.
    const retryAfter = statusCodes.some((code) => ERRORS[code].example.headers['retry-after'] !== undefined);
    responses[String(status)] = {
      description: statusCodes.map((code) => `\`${code}\`: ${ERRORS[code].meaning}`).join(' '),
      headers: {
        'X-Request-Id': headerRef('X-Request-Id'),
        ...(status === 401 || status >= 500 ? {} : rateLimitHeaders),
        ...(replayable(status, statusCodes) ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
        ...(retryAfter ? { 'Retry-After': headerRef('Retry-After') } : {}),
        ...(status === 401 ? { 'WWW-Authenticate': headerRef('WWW-Authenticate') } : {}),
        'Test-Mode': headerRef('Test-Mode'),
        ...(status === 405 ? { Allow: headerRef('Allow') } : {}),
      },
      content: { 'application/json': { schema: envelopeOf(error), examples } },
    };
  }

  // Every field optional (list, ledger, uploads/create, deliveries): no body is a valid request (issue #34).
  const optionalBody = z.safeParse(operation.request, {}).success;
  const noFields = Object.keys(operation.request._zod.def.shape).length === 0;
  const example = operation.example ?? (noFields ? undefined : {});
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    'x-codeSamples': codeSamples(operation.operationId, operation.path, example),
    description: operation.description + (operation.idempotent ? ' Honours `Idempotency-Key`.' : ''),
    tags: [operation.tag ?? DOMAIN_TAGS.get(operation.operationId) ?? 'campaigns'],
    // The scope the key needs (OpenAPI 3.1: a non-OAuth scheme's requirement lists the roles it needs).
    security: [{ apiKey: [operation.scope] }],
    ...(operation.idempotent ? { parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }] } : {}),
    ...(operation.streaming ? { parameters: [LAST_EVENT_ID_PARAMETER] } : {}),
    // A streaming operation is served at its own address in AWS (a function URL with response streaming; infra/stack.ts).
    ...(operation.streaming && streamServerUrl
      ? {
          servers: [
            {
              url: streamServerUrl,
              description:
                streamServerUrl === LOCAL_SERVER_URL
                  ? 'The local stack serves the stream itself; a deployment serves it at its own function URL (the stack output of the stream function).'
                  : 'This deployment’s stream function (a Lambda function URL with response streaming).',
            },
          ],
        }
      : {}),
    requestBody: {
      required: !optionalBody,
      description: noFields
        ? 'No body, an empty body, `{}`, or an empty urlencoded or multipart body (no field).'
        : operation.jsonOnly
          ? 'JSON only: a list of objects has no form encoding (urlencoded and multipart bodies are refused with 400 `invalid_request`).'
          : `${optionalBody ? 'Optional: every field has a default, so no body (or `{}`) is a valid request. ' : ''}JSON, urlencoded or multipart: the same fields. In the form encodings, numbers and booleans are text, nested fields are bracket keys (\`filters[status]\`) and arrays repeat the field.`,
      content: {
        'application/json': { schema: jsonRequestSchema(operation), ...(example ? { example } : {}) },
        // An operation without fields takes an empty form body too (what a form-posting client sends): no field is allowed.
        ...(noFields
          ? { 'application/x-www-form-urlencoded': { schema: EMPTY_FORM }, 'multipart/form-data': { schema: EMPTY_FORM } }
          : operation.jsonOnly
            ? {}
            : { 'application/x-www-form-urlencoded': formMedia(operation, false), 'multipart/form-data': formMedia(operation, true) }),
      },
    },
    responses,
  };
}

/**
 * The reference's code samples of an operation (Redoc's `x-codeSamples`),
 * both from one source, the operation's request example: curl against
 * `$BASE_URL` with `$API_KEY`, and the TypeScript client (client/README.md),
 * whose method of the same name as the operationId takes the same JSON body.
 */
function codeSamples(operationId: string, path: string, example: Record<string, unknown> | undefined) {
  const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  const curl = [
    `curl -s -X POST "$BASE_URL${path}"`,
    '  -H "Authorization: Bearer $API_KEY"',
    ...(example ? ["  -H 'Content-Type: application/json'", `  -d ${shellQuote(JSON.stringify(example))}`] : []),
  ].join(' \\\n');
  const client = [
    "import { createCampaignEnrichmentClient } from '@campaign-enrichment/client';",
    '',
    'const api = createCampaignEnrichmentClient({ baseUrl: process.env.BASE_URL!, apiKey: process.env.API_KEY! });',
    `const data = await api.${operationId}(${example ? JSON.stringify(example, null, 2) : ''});`,
  ].join('\n');
  return [
    { lang: 'Shell', label: 'curl', source: curl },
    { lang: 'TypeScript', label: 'TypeScript client', source: client },
  ];
}

/** The example of an operation's `data`: its docs' `responseExample`, else the response schema's own `example`. */
function responseExampleOf(operation: DocumentedOperation): unknown {
  return operation.responseExample ?? (z.globalRegistry.get(operation.response as never) as { example?: unknown } | undefined)?.example;
}

const pascalField = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * The JSON schema of a request body. A request whose object states "exactly
 * one of these fields" (`oneOf` of `{ required: [field] }` in its zod
 * metadata: create's account-ID sources, redeliver's message or delivery)
 * is shown as a `oneOf` of complete objects, one per field, each a named
 * component (`CreateCampaignWithAccountIds`, …), so that generated clients
 * type a body with none, or two, of them as an error.
 */
function jsonRequestSchema(operation: DocumentedOperation): z.core.$ZodType {
  const branches = (z.globalRegistry.get(operation.request as never) as { oneOf?: { required?: string[] }[] } | undefined)?.oneOf;
  const fields = branches?.map((branch) => branch.required?.[0]).filter((field): field is string => field !== undefined) ?? [];
  if (fields.length < 2) return operation.request;
  const shape = operation.request._zod.def.shape as Record<string, z.core.$ZodType>;
  const variants = fields.map((field) => {
    const optional = shape[field]!;
    const inner = (optional._zod.def as { innerType?: z.core.$ZodType }).innerType ?? optional;
    const meta = z.globalRegistry.get(optional as never);
    const required = meta ? (inner as zm.ZodMiniType).check(zm.meta({ ...meta })) : inner;
    const others = Object.fromEntries(
      Object.entries(shape)
        .filter(([key]) => key === field || !fields.includes(key))
        .map(([key, value]) => [key, key === field ? required : value]),
    );
    return z
      .strictObject(others as Record<string, z.ZodType>)
      .meta({ id: `${pascalField(operation.operationId)}With${pascalField(field)}`, description: `With \`${field}\`.` });
  });
  return z.xor(variants as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]);
}

/** The document's `webhooks` section: one POST per event type, with its body (docs/webhooks.md, README.md). */
function webhooksSection(): ZodOpenApiPathsObject {
  const events = allEventPayloadSchemas();
  return Object.fromEntries(
    events.map(([type, schema]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/[^a-z]/g, '_')}`,
          summary: type,
          description: `${ALL_EVENT_DESCRIPTIONS[type]} Sent to every enabled endpoint subscribed to \`${type}\`${type === 'webhook.test' ? ' (here: the one endpoint tested)' : ''}. ${RETRY_SCHEDULE_TEXT}`,
          parameters: Object.entries(WEBHOOK_HEADERS).map(([name, header]) => ({ in: 'header' as const, name, ...header })),
          tags: ['webhook events'],
          requestBody: { required: true, content: { 'application/json': { schema, example: ALL_EVENT_EXAMPLES[type] } } },
          responses: {
            '2XX': { description: 'Received: the message is delivered.' },
            '410': { description: 'Gone: the endpoint is disabled and receives nothing more.' },
            default: { description: 'Any other answer (or none within 15 s, or a redirect) is a failed attempt, retried on the schedule.' },
          },
        },
      },
    ]),
  );
}

/**
 * Every operation's documentation (lib/<domain>/docs.ts), by operationId.
 * The documentation is kept apart from the operations the handlers import,
 * so that only this document's builders carry it.
 */
const DOCUMENTED_OPERATIONS: ReadonlyMap<string, DocumentedOperation> = new Map(
  [
    ...organizationOperationDocs,
    ...auditOperationDocs,
    ...campaignOperationDocs,
    ...uploadOperationDocs,
    ...enrichmentOperationDocs,
    ...exportOperationDocs,
    ...creditOperationDocs,
    ...webhookOperationDocs,
    eventFeedDoc(),
    ...privacyOperationDocs,
  ].map((documented) => [documented.operationId, documented as DocumentedOperation]),
);

/**
 * The document's tags, in the order `/docs` shows them: the operations'
 * groups first, the webhook events last (Redoc orders its menu by this list).
 */
export const TAGS = [
  { name: 'campaigns', description: 'Create, update, read and list campaigns.' },
  { name: 'enrichment', description: 'Quote and launch an enrichment, and follow each account’s outcome.' },
  { name: 'exports', description: 'Export an enriched campaign’s results as a CSV file.' },
  { name: 'credits', description: 'The credit ledger: every movement of the balance.' },
  { name: 'webhooks', description: 'Endpoints that receive campaign events, their secrets and their delivery log.' },
  { name: 'uploads', description: 'Presigned uploads of account lists too large for a request body.' },
  { name: 'organization', description: 'The authenticated organization: credits and capacity.' },
  { name: 'keys', description: 'API keys the organization manages itself: scopes, credit limits, rotation and revocation.' },
  {
    name: 'privacy',
    description: 'Suppressions and erasures: keep a person out of every answer, erase every stored copy, with a signed receipt.',
  },
  { name: 'webhook events', description: 'What this API POSTs to your endpoints (Standard Webhooks 1.0 signatures).' },
] as const;

/** An operation's tag when its docs name none: its domain's. */
const DOMAIN_TAGS: ReadonlyMap<string, string> = new Map(
  (
    [
      [organizationOperationDocs, 'organization'],
      [campaignOperationDocs, 'campaigns'],
      [uploadOperationDocs, 'uploads'],
      [enrichmentOperationDocs, 'enrichment'],
      [exportOperationDocs, 'exports'],
      [creditOperationDocs, 'credits'],
      [webhookOperationDocs, 'webhooks'],
      [privacyOperationDocs, 'privacy'],
    ] as const
  ).flatMap(([docs, tag]) => docs.map((documented) => [documented.operationId, tag] as const)),
);

/**
 * An operation with its documentation.
 * @throws Error when the operation has none, or documentation of another operation (path or request differ): a programming error.
 */
export function documented(operation: Operation): DocumentedOperation {
  const docs = DOCUMENTED_OPERATIONS.get(operation.operationId);
  if (!docs || docs.path !== operation.path || docs.request !== operation.request) {
    throw new Error(
      `${operation.operationId} (${operation.path}) has no documentation: add it to its domain's docs.ts and to DOCUMENTED_OPERATIONS (lib/contract/openapi.ts)`,
    );
  }
  return docs;
}

/**
 * Builds the OpenAPI document of the given operations.
 * @param operations - every operation the API serves (each documented in its domain's docs.ts).
 * @param serverUrl - base URL shown in the document; the deployed and local docs routes pass the origin of the request.
 * @param streamServerUrl - base URL of the streaming operations (docs/results.md "The stream"), their operation-level
 *   `servers`: the deployed docs function passes the stream function's URL; locally the stack serves them itself.
 * @throws Error when an operation has no documentation.
 */
export function buildOpenApiDocument(operations: readonly Operation[], serverUrl = LOCAL_SERVER_URL, streamServerUrl = serverUrl) {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of operations) paths[operation.path] = { post: operationObject(documented(operation), streamServerUrl) };
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Campaign Enrichment API',
      version: '1.0.0',
      description: [
        'Create campaigns from account lists, launch enrichment (credits are charged per eligible account), poll progress, read result metrics and export results as CSV.',
        '',
        'Every operation is a `POST`; every response is the envelope `{ data, error }` and carries `X-Request-Id`. Request bodies may be JSON, urlencoded or multipart. Mutating operations honour `Idempotency-Key`.',
        '',
        'Test mode: a test key (`cek_test_…`) runs every operation against the organization’s test twin, with test credits and a deterministic built-in warehouse, and every answer carries `Test-Mode: true` (see the `apiKey` security scheme).',
        '',
        'Outside the operations: any other method on an operation path answers 405 `method_not_allowed` (`details.allow`, header `Allow: POST`); an unknown path answers 404 `not_found` with `details.resource = "route"`.',
      ].join('\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: contactOf(serverUrl),
    },
    tags: TAGS.map((tag) => ({ ...tag })),
    servers: [
      {
        url: serverUrl,
        description:
          serverUrl === LOCAL_SERVER_URL
            ? 'The local stack (`npm start`); a deployment serves this document with its own URL.'
            : 'This deployment.',
      },
    ],
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Organization API key: `Authorization: Bearer cek_…` (live). A test key, `cek_test_…`, acts on the organization’s test twin instead: its own campaigns, ledger, webhook endpoints and limits, 1,000,000 test credits, and a built-in warehouse where the account ID decides the outcome (`test_found_…`, `test_nocontacts_…`, `test_closed_…`, `test_inactive_…`, `test_crm_…`, `test_recent_…`, `test_fail_…`, `test_slow_…` (found, paced at 100 a second so partial results can be watched); any other ID is invalid). Live and test never see each other’s data; every answer to a test key carries `Test-Mode: true`. `cek_test_RevokedRevokedRevokedRevokedRevokedRevok` always answers 401 `revoked_api_key`. ' +
            `Each key holds scopes (${SCOPES.map((scope) => `\`${scope}\``).join(', ')}); each operation's security requirement names the one it needs, and a key without it answers 403 \`insufficient_scope\` (\`details.required\`) with nothing done.`,
        },
      },
      headers: HEADERS as never,
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER as never },
    },
    paths,
    webhooks: webhooksSection(),
  });
  linkCreatedResources(document as unknown as DocumentJson, operations.map(documented));
  return document;
}

/** The parts of a built document {@link linkCreatedResources} reads, as plain JSON. */
type DocumentJson = {
  components: { schemas?: Record<string, JsonSchema> };
  paths: Record<
    string,
    { post: { requestBody: { content: Record<string, { schema: JsonSchema }> }; responses: Record<string, JsonResponse> } }
  >;
};
type JsonResponse = { content?: Record<string, { schema: JsonSchema }>; links?: Record<string, unknown> };

/**
 * Adds OpenAPI `links` (README.md, its "API reference" entry): from the success of each operation that declares `creates`
 * (lib/http/operation.ts) to every other operation whose JSON request takes, as a top-level field, an ID of the
 * pattern the created ID has. A tool that follows links (Schemathesis' stateful phase, a generated client's
 * navigation) can then chain create → describe, launch, revoke … with a real ID. The request field and the pattern
 * come from the operations' own schemas, so a renamed field or a new consumer needs no edit here.
 * @throws Error when the schema at an operation's `creates` pointer carries no ID pattern, or its branches disagree.
 */
function linkCreatedResources(document: DocumentJson, operations: readonly DocumentedOperation[]): void {
  const deref = (schema: JsonSchema): JsonSchema =>
    schema.$ref ? deref(document.components.schemas![schema.$ref.replace('#/components/schemas/', '')]!) : schema;
  const branches = (schema: JsonSchema): JsonSchema[] => {
    const resolved = deref(schema);
    // The schema itself (its properties) and each alternative's (a union of shapes, or `anyOf` of `required` lists).
    const alternatives: JsonSchema[] = [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? [])];
    return [resolved, ...alternatives.flatMap(branches)];
  };
  const patternsAt = (schema: JsonSchema, segments: readonly string[]): string[] =>
    branches(schema).flatMap((branch) => {
      if (segments.length === 0) return branch.pattern ? [branch.pattern] : [];
      const [head, ...rest] = segments;
      const next = /^\d+$/.test(head!) ? branch.items : branch.properties?.[head!];
      return next ? patternsAt(next, rest) : [];
    });
  const jsonOf = (content: Record<string, { schema: JsonSchema }> | undefined) => content?.['application/json']?.schema;

  for (const producer of operations) {
    if (!producer.creates) continue;
    const success = document.paths[producer.path]!.post.responses['200']!;
    const envelope = jsonOf(success.content)!;
    const patterns = new Set(patternsAt(envelope, ['data', ...producer.creates.split('/').slice(1)]));
    if (patterns.size !== 1) {
      throw new Error(`${producer.operationId}: creates ${producer.creates} must point at one ID pattern, found ${patterns.size}`);
    }
    const [pattern] = patterns;
    const links: Record<string, unknown> = {};
    for (const consumer of operations) {
      if (consumer === producer) continue;
      const request = jsonOf(document.paths[consumer.path]!.post.requestBody.content);
      const fields = request
        ? branches(request).flatMap((branch) =>
            Object.entries((branch.properties ?? {}) as Record<string, JsonSchema>)
              .filter(([, property]) => deref(property).pattern === pattern)
              .map(([field]) => field),
          )
        : [];
      for (const field of new Set(fields)) {
        links[consumer.operationId] = {
          operationId: consumer.operationId,
          description: `The ID this operation created, as \`${field}\` of ${consumer.operationId}.`,
          requestBody: { [field]: `$response.body#/data${producer.creates}` },
        };
      }
    }
    if (Object.keys(links).length > 0) success.links = links;
  }
}
