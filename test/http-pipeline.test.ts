/**
 * The request pipeline end to end (docs/errors.md, docs/authentication.md,
 * "Endpoints"; docs/errors.md, docs/authentication.md): real HTTP against the local API server
 * and DynamoDB Local, through `POST /v1/org/describe`, the one operation
 * every key can call.
 */
import { Script } from 'node:vm';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, newOrganization, useApi, type ApiResponse } from './support/api';
import { apiKeys, organizations } from '../lib/root';
import { ID_ALPHABET } from '../lib/ids';
import { createApiHandler, MAX_BODY_BYTES, MAX_MULTIPART_BYTES } from '../lib/http/pipeline';
import { defineOperation } from '../lib/http/operation';
import { NotFoundError } from '../lib/errors';
import { serveHandler } from './support/serve-handler';
import { apiGatewayEvent } from '../infra/local/event';
import { lambdaContext } from '../infra/local/lambda-context';
import { DEADLINE_MARGIN_MS } from '../lib/http/deadline';

const api = useApi();
const DESCRIBE = '/v1/org/describe';

/** The three `invalid_api_key` answers, one per case, each saying what to send. */
const INVALID_API_KEY = {
  data: null,
  error: {
    code: 'invalid_api_key',
    message:
      'The API key is not recognized: send a key issued to your organization, whole (cek_ and 40 more characters), as "Authorization: Bearer <API key>".',
  },
};
const MISSING_HEADER = {
  data: null,
  error: { code: 'invalid_api_key', message: 'The Authorization header is missing: send "Authorization: Bearer <API key>".' },
};
const NOT_BEARER = {
  data: null,
  error: {
    code: 'invalid_api_key',
    message: 'The Authorization header is not "Bearer <API key>": send the word Bearer, one space, then the key (it starts with cek_).',
  },
};
const REVOKED_API_KEY = { data: null, error: { code: 'revoked_api_key', message: 'The API key has been revoked.' } };
const INTERNAL_ERROR = { data: null, error: { code: 'internal_error', message: 'Internal error.' } };

/** A well-formed key (`cek_` + 40 base58 characters) that no organization holds. */
function unknownApiKey(): string {
  let key = 'cek_';
  for (let i = 0; i < 40; i++) key += ID_ALPHABET[Math.floor(Math.random() * ID_ALPHABET.length)];
  return key;
}

/** Every API response: JSON content type and exactly the envelope's two members. */
function expectEnvelope(res: ApiResponse): void {
  expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expect(Object.keys(res.body).sort()).toEqual(['data', 'error']);
}

/**
 * An `invalid_request` envelope. With `issues`, `details` must be exactly
 * `{ issues }`; without, `details` may be absent (body not parseable at all)
 * but when present it must be a non-empty list of strings (docs/errors.md).
 */
function expectInvalidRequest(res: ApiResponse, issues?: string[]): void {
  expectEnvelope(res);
  expect(res.status).toBe(400);
  expect(res.body.data).toBeNull();
  expect(res.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/\S/) });
  expect(
    Object.keys(res.error!)
      .filter((k) => k !== 'details')
      .sort(),
  ).toEqual(['code', 'message']);
  if (issues) {
    expect(res.error!.details).toEqual({ issues });
  } else if (res.error!.details !== undefined) {
    expect(Object.keys(res.error!.details)).toEqual(['issues']);
    expect(res.error!.details.issues).toEqual(expect.arrayContaining([expect.any(String)]));
    expect(res.error!.details.issues.length).toBeGreaterThan(0);
  }
}

/** A describe success for a fresh organization created with known figures. */
async function describeOrg() {
  const name = `Pipeline ${randomUUID()}`;
  const { organizationId, apiKey } = await newOrganization({ name, smbCredits: 321, researchAgentCredits: 12, maxEnrichingAccounts: 77 });
  const expected = {
    data: {
      organization: { id: organizationId, name },
      credits: { smb: 321, researchAgents: 12 },
      enrichment: { enrichingAccounts: 0, maxEnrichingAccounts: 77 },
    },
    error: null,
  };
  return { organizationId, apiKey, expected };
}

/** A multipart body built by hand, to control the boundary and the content type. */
function multipartBody(boundary: string, fields: [string, string][]): string {
  return (
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
    `--${boundary}--\r\n`
  );
}

let key: string;
let expected: Awaited<ReturnType<typeof describeOrg>>['expected'];
let organizationId: string;

beforeAll(async () => {
  ({ apiKey: key, expected, organizationId } = await describeOrg());
});

describe('authentication', () => {
  it('answers 200 and the exact envelope for a good key', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key });
    expect(res.status).toBe(200);
    expectEnvelope(res);
    expect(res.body).toEqual(expected);
  });

  it('answers 401 invalid_api_key for a well-formed key no organization holds', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: unknownApiKey() });
    expect(res.status).toBe(401);
    expectEnvelope(res);
    expect(res.body).toEqual(INVALID_API_KEY);
  });

  it('answers 401 revoked_api_key for a revoked key, and the other keys of the organization keep working', async () => {
    const org = await describeOrg();
    const second = await apiKeys().create(org.organizationId);
    expect((await call(api(), DESCRIBE, { apiKey: org.apiKey })).status).toBe(200);

    expect(await apiKeys().revoke(org.apiKey)).toBe(true);

    const revoked = await call(api(), DESCRIBE, { apiKey: org.apiKey });
    expect(revoked.status).toBe(401);
    expectEnvelope(revoked);
    expect(revoked.body).toEqual(REVOKED_API_KEY);

    const other = await call(api(), DESCRIBE, { apiKey: second });
    expect(other.status).toBe(200);
    expect(other.body).toEqual(org.expected);
  });

  it('answers 401 invalid_api_key without an Authorization header, saying the header is missing and what to send', async () => {
    const res = await call(api(), DESCRIBE, {});
    expect(res.status).toBe(401);
    expectEnvelope(res);
    expect(res.body).toEqual(MISSING_HEADER);
    expect((await call(api(), DESCRIBE, { authorization: '  ' })).body).toEqual(MISSING_HEADER);
  });

  it.each([
    ['a Basic credential', () => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`, NOT_BEARER],
    ['a Basic scheme carrying the key itself', () => `Basic ${key}`, NOT_BEARER],
    ['Bearer with nothing', () => 'Bearer', NOT_BEARER],
    ['Bearer and a space only', () => 'Bearer ', NOT_BEARER],
    ['Bearer with two tokens', () => `Bearer ${key} extra`, NOT_BEARER],
    ['Bearer a b', () => 'Bearer a b', NOT_BEARER],
    ['the key without a scheme', () => key, NOT_BEARER],
    ['a key of the wrong shape', () => `Bearer ${key}x`, INVALID_API_KEY],
    ['a key with another prefix', () => `Bearer sk_${key.slice(4)}`, INVALID_API_KEY],
  ])('answers 401 invalid_api_key for %s, with the message of its case', async (_label, header, answer) => {
    const res = await call(api(), DESCRIBE, { authorization: header() });
    expect(res.status).toBe(401);
    expectEnvelope(res);
    expect(res.body).toEqual(answer);
  });

  it.each([
    ['lowercase bearer', () => `bearer ${key}`],
    ['uppercase BEARER', () => `BEARER ${key}`],
    ['several spaces and trailing whitespace', () => `Bearer   ${key}  `],
  ])('accepts the key with %s (the auth scheme is case-insensitive)', async (_label, header) => {
    const res = await call(api(), DESCRIBE, { authorization: header() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it('authenticates before reading the body: an unknown key with a malformed body gets 401', async () => {
    const malformed = await call(api(), DESCRIBE, { apiKey: unknownApiKey(), raw: { body: '{"oops":', contentType: 'application/json' } });
    expect(malformed.status).toBe(401);
    expect(malformed.body).toEqual(INVALID_API_KEY);

    const unknownField = await call(api(), DESCRIBE, { apiKey: unknownApiKey(), body: { foo: 1 } });
    expect(unknownField.status).toBe(401);
    expect(unknownField.body).toEqual(INVALID_API_KEY);
  });

  it('authenticates before reading the body: a revoked key with a malformed body gets 401 revoked_api_key', async () => {
    const org = await describeOrg();
    await apiKeys().revoke(org.apiKey);
    const res = await call(api(), DESCRIBE, {
      apiKey: org.apiKey,
      raw: { body: 'a=1&b', contentType: 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(REVOKED_API_KEY);
  });
});

describe('describe body rule (docs/errors.md: no body, an empty body or {})', () => {
  it('accepts no body at all', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it.each([
    ['application/json {}', { raw: { body: '{}', contentType: 'application/json' } }],
    ['application/json {} with whitespace', { raw: { body: ' \n{ }\n', contentType: 'application/json' } }],
    ['application/json; charset=utf-8 {}', { raw: { body: '{}', contentType: 'application/json; charset=utf-8' } }],
    ['application/json with an empty body', { raw: { body: '', contentType: 'application/json' } }],
    ['application/x-www-form-urlencoded with no fields', { form: new URLSearchParams() }],
    ['multipart/form-data with no fields', { multipart: new FormData() }],
  ])('accepts %s', async (_label, options) => {
    const res = await call(api(), DESCRIBE, { apiKey: key, ...options });
    expect(res.status).toBe(200);
    expectEnvelope(res);
    expect(res.body).toEqual(expected);
  });

  it('rejects a JSON property with 400 invalid_request naming it', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, body: { foo: 1 } });
    expectInvalidRequest(res, ['foo: unknown property']);
  });

  it('names every unknown JSON property, one line each', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, body: { foo: 1, bar: { baz: true } } });
    expectInvalidRequest(res, ['foo: unknown property', 'bar: unknown property']);
  });

  it('rejects an urlencoded field with 400 invalid_request naming it', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, form: new URLSearchParams({ foo: 'bar' }) });
    expectInvalidRequest(res, ['foo: unknown property']);
  });

  it('names a bracketed urlencoded field by its top-level property', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, form: new URLSearchParams([['filters[status]', 'draft']]) });
    expectInvalidRequest(res, ['filters: unknown property']);
  });

  it('rejects a multipart field with 400 invalid_request naming it', async () => {
    const form = new FormData();
    form.append('foo', 'bar');
    const res = await call(api(), DESCRIBE, { apiKey: key, multipart: form });
    expectInvalidRequest(res, ['foo: unknown property']);
  });

  it('rejects a multipart file part with 400 invalid_request naming it', async () => {
    const form = new FormData();
    form.append('accountIdsFile', new Blob(['acc_1\nacc_2\n'], { type: 'text/csv' }), 'ids.csv');
    const res = await call(api(), DESCRIBE, { apiKey: key, multipart: form });
    expectInvalidRequest(res, ['accountIdsFile: unknown property']);
  });

  it('rejects malformed JSON with 400 invalid_request', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body: '{"foo":', contentType: 'application/json' } });
    expectInvalidRequest(res);
  });

  it.each([
    ['an array', '[]'],
    ['an array of objects', '[{}]'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('rejects a JSON body that is %s with 400 invalid_request and issues naming the body', async (_label, body) => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body, contentType: 'application/json' } });
    expectInvalidRequest(res);
    // The body parsed, so docs/errors.md requires `details.issues`, each line naming the path (the body itself here).
    expect(res.error!.details?.issues).toEqual([expect.stringMatching(/^body: /)]);
  });

  it.each([
    ['top level', '{"__proto__":{"polluted":true}}', '__proto__'],
    ['nested', '{"a":{"__proto__":{"polluted":true}}}', 'a.__proto__'],
    ['in an array', '{"a":[{"b":1},{"constructor":{"prototype":{"polluted":true}}}]}', 'a[1].constructor'],
  ])('rejects a __proto__ key in JSON (%s) with 400 invalid_request naming its path, and pollutes nothing', async (_label, body, path) => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body, contentType: 'application/json' } });
    expectInvalidRequest(res, [`${path}: forbidden property name`]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects a __proto__ field in an urlencoded body', async () => {
    const res = await call(api(), DESCRIBE, {
      apiKey: key,
      raw: { body: '__proto__[polluted]=1', contentType: 'application/x-www-form-urlencoded' },
    });
    expectInvalidRequest(res, ['__proto__[polluted]: forbidden property name']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects a constructor field in a multipart body', async () => {
    const form = new FormData();
    form.append('constructor[prototype][polluted]', '1');
    const res = await call(api(), DESCRIBE, { apiKey: key, multipart: form });
    expectInvalidRequest(res, ['constructor[prototype][polluted]: forbidden property name']);
  });

  it('rejects a body sent as text/plain with 400 invalid_request', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body: '{}', contentType: 'text/plain' } });
    expectInvalidRequest(res, ['content-type: unsupported']);
  });

  describe('a body declaring a charset other than UTF-8 (docs/errors.md#invalid_request)', () => {
    const CREATE = '/v1/campaigns/create';
    const LIST = '/v1/campaigns/list';
    const name = 'Caf\u00e9 M\u00fcller';

    it.each([
      ['JSON', 'application/json; charset=iso-8859-1', JSON.stringify({ name, accountIds: ['acc_1'] }), 'iso-8859-1'],
      [
        'JSON, quoted and upper case',
        'application/json; charset="ISO-8859-1"',
        JSON.stringify({ name, accountIds: ['acc_1'] }),
        'iso-8859-1',
      ],
      ['urlencoded', 'application/x-www-form-urlencoded; charset=windows-1252', 'name=Caf%E9+M%FCller&accountIds=acc_1', 'windows-1252'],
      [
        'multipart',
        'multipart/form-data; charset=latin1; boundary=abc123',
        multipartBody('abc123', [
          ['name', name],
          ['accountIds', 'acc_1'],
        ]),
        'latin1',
      ],
    ])(
      'refuses %s with 400 invalid_request naming the content-type header, and stores nothing',
      async (_label, contentType, text, charset) => {
        const org = await newOrganization();
        const res = await call(api(), CREATE, { apiKey: org.apiKey, raw: { body: Buffer.from(text, 'latin1'), contentType } });
        expectInvalidRequest(res, [`content-type: charset ${charset} is not supported; use utf-8`]);
        expect(res.error!.message).toContain(`charset=${charset}`);
        expect(res.error!.message).toContain('UTF-8');
        const list = await call(api(), LIST, { apiKey: org.apiKey, body: {} });
        expect(list.status).toBe(200);
        expect(list.body.data.campaigns).toEqual([]);
      },
    );

    it('reads the same body declared charset=utf-8 (any case) and stores the name exactly', async () => {
      const org = await newOrganization();
      const res = await call(api(), CREATE, {
        apiKey: org.apiKey,
        raw: { body: Buffer.from(JSON.stringify({ name, accountIds: ['acc_1'] }), 'utf8'), contentType: 'application/json; charset=UTF-8' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.name).toBe(name);
    });
  });

  it('rejects multipart/form-data without a boundary, naming the missing boundary (not the media type it accepts)', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body: 'x', contentType: 'multipart/form-data' } });
    expectInvalidRequest(res, ['content-type: multipart/form-data needs a boundary parameter']);
    expect(res.error!.message).toMatch(/without its boundary parameter/);
    expect(res.error!.message).not.toMatch(/not supported/);
  });

  it('rejects a body without a content type with 400 invalid_request', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body: Buffer.from('x=1') } });
    expectInvalidRequest(res, ['content-type: missing']);
    expect(res.error!.message).toContain('application/json, application/x-www-form-urlencoded or multipart/form-data');
    expect(res.error!.message).not.toMatch(/JSON:/);
  });

  it('says a JSON body without a content type looks like JSON, and which content types are expected', async () => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body: Buffer.from('{"campaignId":"x"}') } });
    expectInvalidRequest(res, ['content-type: missing']);
    expect(res.error!.message).toMatch(/looks like JSON.*Content-Type: application\/json/);
    expect(res.error!.message).toContain('application/json, application/x-www-form-urlencoded or multipart/form-data');
  });

  it('says a JSON body sent as urlencoded (curl -d) is JSON, instead of reporting unknown properties', async () => {
    for (const body of ['{"foo":1}', ' [1, 2] ', '{}']) {
      const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body, contentType: 'application/x-www-form-urlencoded' } });
      expectInvalidRequest(res, ['content-type: the body is JSON; expected application/json']);
      expect(res.error!.message).toMatch(/Content-Type: application\/json/);
    }
    // A real form body is still read as one; braces inside a value are just text.
    const form = await call(api(), DESCRIBE, { apiKey: key, raw: { body: 'foo={}', contentType: 'application/x-www-form-urlencoded' } });
    expectInvalidRequest(form, ['foo: unknown property']);
    // Text that only starts like JSON is a (bad) form body, not JSON.
    const broken = await call(api(), DESCRIBE, { apiKey: key, raw: { body: '{"foo":', contentType: 'application/x-www-form-urlencoded' } });
    expect(broken.error!.details!.issues).not.toEqual(['content-type: the body is JSON; expected application/json']);
  });

  it('accepts a JSON body of exactly 5 MiB and rejects one byte more (docs/limits.md#sizes)', async () => {
    const atLimit = `{}${' '.repeat(MAX_BODY_BYTES - 2)}`;
    const ok = await call(api(), DESCRIBE, { apiKey: key, raw: { body: atLimit, contentType: 'application/json' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(expected);

    const over = await call(api(), DESCRIBE, { apiKey: key, raw: { body: `${atLimit} `, contentType: 'application/json' } });
    expectInvalidRequest(over, ['body: too large']);

    // Well over the limit but under API Gateway's 10 MB cap: still the envelope, not a dropped connection.
    const farOver = await call(api(), DESCRIBE, {
      apiKey: key,
      raw: { body: `{}${' '.repeat(9 * 1024 * 1024)}`, contentType: 'application/json' },
    });
    expectInvalidRequest(farOver, ['body: too large']);
  });

  it('rejects an urlencoded body over 5 MiB', async () => {
    const body = `foo=${'x'.repeat(MAX_BODY_BYTES)}`;
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body, contentType: 'application/x-www-form-urlencoded' } });
    expectInvalidRequest(res, ['body: too large']);
  });

  it('lets a multipart body just under 4 MiB reach validation, and rejects one over 4 MiB (docs/limits.md#sizes)', async () => {
    const within = new FormData();
    within.append('file', new Blob([Buffer.alloc(MAX_MULTIPART_BYTES - 4096, 'a')]), 'big.txt');
    const validated = await call(api(), DESCRIBE, { apiKey: key, multipart: within });
    expectInvalidRequest(validated, ['file: unknown property']);

    const over = new FormData();
    over.append('file', new Blob([Buffer.alloc(MAX_MULTIPART_BYTES, 'a')]), 'bigger.txt');
    const refused = await call(api(), DESCRIBE, { apiKey: key, multipart: over });
    expectInvalidRequest(refused, ['body: too large']);
  });

  it.each([
    ['a JSON content type with whitespace before its parameter', 'application/json ; charset=utf-8', '{}'],
    ['a multipart boundary without a space after the semicolon', 'multipart/form-data;boundary=abc123', multipartBody('abc123', [])],
    ['a quoted multipart boundary', 'multipart/form-data; boundary="abc123"', multipartBody('abc123', [])],
    [
      'a multipart boundary with an underscore (Apache HttpClient style)',
      'multipart/form-data; boundary=-_aB3xY9_Qz',
      multipartBody('-_aB3xY9_Qz', []),
    ],
    [
      'a charset parameter before the multipart boundary',
      'multipart/form-data; charset=utf-8; boundary=abc123',
      multipartBody('abc123', []),
    ],
  ])('accepts a valid body with %s (RFC 9110 / RFC 2046 media types)', async (_label, contentType, body) => {
    const res = await call(api(), DESCRIBE, { apiKey: key, raw: { body, contentType } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it('parses an urlencoded body whose content type has whitespace before its parameter', async () => {
    const res = await call(api(), DESCRIBE, {
      apiKey: key,
      raw: { body: 'foo=1', contentType: 'application/x-www-form-urlencoded ; charset=utf-8' },
    });
    // Parsed, the field is named; left unparsed, the answer would be a bare "could not be parsed".
    expectInvalidRequest(res, ['foo: unknown property']);
  });

  it('changes nothing when the request is invalid', async () => {
    const org = await describeOrg();
    const before = await organizations().get(org.organizationId);
    const keyBefore = await apiKeys().find(org.apiKey);
    expect(before).toBeDefined();

    const invalid = [
      await call(api(), DESCRIBE, { apiKey: org.apiKey, body: { smbCredits: 1_000_000 } }),
      await call(api(), DESCRIBE, { apiKey: org.apiKey, form: new URLSearchParams({ name: 'Renamed' }) }),
      await call(api(), DESCRIBE, { apiKey: org.apiKey, raw: { body: '{"name":', contentType: 'application/json' } }),
      await call(api(), DESCRIBE, { apiKey: org.apiKey, raw: { body: '{}', contentType: 'text/plain' } }),
    ];
    expect(invalid.map((r) => [r.status, r.error?.code])).toEqual(Array(4).fill([400, 'invalid_request']));

    expect(await organizations().get(org.organizationId)).toEqual(before);
    expect(await apiKeys().find(org.apiKey)).toEqual(keyBefore);
    const after = await call(api(), DESCRIBE, { apiKey: org.apiKey });
    expect(after.body).toEqual(org.expected);
  });
});

describe('responses', () => {
  it('every answer is JSON with exactly data and error, success or failure', async () => {
    const responses = await Promise.all([
      call(api(), DESCRIBE, { apiKey: key }),
      call(api(), DESCRIBE, {}),
      call(api(), DESCRIBE, { apiKey: key, body: { x: 1 } }),
      call(api(), DESCRIBE, { apiKey: key, raw: { body: 'nope', contentType: 'application/json' } }),
      call(api(), '/v1/does/not/exist', { apiKey: key }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 401, 400, 400, 404]);
    for (const res of responses) {
      expectEnvelope(res);
      expect((res.body.data === null) !== (res.body.error === null)).toBe(true);
    }
  });

  it('answers an unknown path with the not_found envelope', async () => {
    const res = await call(api(), '/v1/campaigns/nope', { apiKey: key });
    expect(res.status).toBe(404);
    expectEnvelope(res);
    expect(res.body).toEqual({
      data: null,
      error: { code: 'not_found', message: expect.any(String), details: { resource: 'route', id: 'POST /v1/campaigns/nope' } },
    });
  });

  it('answers a GET on an operation path with 405 method_not_allowed and Allow: POST (every operation is a POST)', async () => {
    const response = await fetch(`${api()}${DESCRIBE}`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
    expect(await response.json()).toEqual({
      data: null,
      error: { code: 'method_not_allowed', message: `GET is not allowed on ${DESCRIBE}; use POST.`, details: { allow: ['POST'] } },
    });
  });

  it('serves the OpenAPI document, version 1.0.0, with the describe operation', async () => {
    const response = await fetch(`${api()}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
    const document = (await response.json()) as any;
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info.version).toBe('1.0.0');
    const operation = document.paths[DESCRIBE]?.post;
    expect(operation).toBeDefined();
    expect(operation.operationId).toBe('describeOrganization');
    expect(Object.keys(document.paths[DESCRIBE])).toEqual(['post']);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '500']));
    expect(operation.security).toEqual([{ apiKey: ['org:read'] }]);
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const path of Object.keys(document.paths)) expect(path).toMatch(/^\/v1\//);
  });

  it('serves the docs page as one self-contained HTML page (Redoc and the document inlined, no other request)', async () => {
    const response = await fetch(`${api()}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    // Booleans, not the page: a failing matcher would print a megabyte of JavaScript.
    expect(/^<!doctype html>/i.test(html)).toBe(true);
    expect(html.includes('Redoc.init({"openapi":"3.1.0"')).toBe(true);
    // Nothing is loaded from elsewhere: no script or stylesheet by URL, no source map of the bundle.
    expect(/<script[^>]+src=|<link[^>]+href=|^\/\/# sourceMappingURL=redoc/m.test(html)).toBe(false);
    expect(html.length).toBeGreaterThan(500_000);
    // The inlined scripts are still valid JavaScript after being made safe for the HTML tokenizer.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(2);
    for (const script of scripts) expect(() => new Script(script)).not.toThrow();
    expect(/<\/script|<!--|<script/i.test(scripts[0]!)).toBe(false);
  });
});

describe('errors a use case throws', () => {
  const operation = defineOperation({
    operationId: 'pipelineTest',
    scope: 'org:read',
    path: '/v1/test/pipeline',
    request: z.strictObject({}),
  });

  let thrown: () => unknown = () => new Error('secret detail');
  const handler = createApiHandler(
    operation,
    async () => {
      throw thrown();
    },
    { findApiKey: (keyHash) => apiKeys().findByHash(keyHash) },
  );

  const baseUrl = serveHandler(handler, { path: operation.path, functionName: 'PipelineTest' });

  async function raw(): Promise<{ status: number; contentType: string | null; text: string }> {
    const response = await fetch(`${baseUrl()}${operation.path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  }

  it('answers 500 internal_error with the fixed message and never the cause', async () => {
    thrown = () => new Error('secret detail');
    const res = await raw();
    expect(res.status).toBe(500);
    expect(res.contentType).toMatch(/^application\/json(;|$)/);
    expect(JSON.parse(res.text)).toEqual(INTERNAL_ERROR);
    expect(res.text).not.toContain('secret detail');
    expect(res.text).not.toContain('stack');
  });

  it('answers 500 internal_error for a thrown non-Error value', async () => {
    thrown = () => 'secret detail';
    const res = await raw();
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual(INTERNAL_ERROR);
    expect(res.text).not.toContain('secret detail');
  });

  it.each([413, 415, 422])('answers 500 internal_error for a use-case error that merely carries statusCode %i', async (statusCode) => {
    // lib/errors.ts: "anything that is not an ApiError becomes internal_error";
    // only the body parsers' own errors may turn into invalid_request.
    thrown = () => Object.assign(new Error('secret detail'), { statusCode });
    const res = await raw();
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual(INTERNAL_ERROR);
  });

  it('maps an ApiError a use case throws to its own status and envelope', async () => {
    thrown = () => new NotFoundError('campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz');
    const res = await raw();
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({
      data: null,
      error: {
        code: 'not_found',
        message: 'No campaign with id "camp_7Hq2kXv9LmN3pR5sT8wYz".',
        details: { resource: 'campaign', id: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
      },
    });
  });

  it('still authenticates first: an unknown key never reaches the use case', async () => {
    let reached = false;
    thrown = () => {
      reached = true;
      return new Error('secret detail');
    };
    const response = await fetch(`${baseUrl()}${operation.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${unknownApiKey()}` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(INVALID_API_KEY);
    expect(reached).toBe(false);
  });
});

it('uses the organization of the key (describe of one organization never shows another)', async () => {
  const other = await describeOrg();
  const [mine, theirs] = await Promise.all([call(api(), DESCRIBE, { apiKey: key }), call(api(), DESCRIBE, { apiKey: other.apiKey })]);
  expect(mine.data.organization.id).toBe(organizationId);
  expect(theirs.body).toEqual(other.expected);
  expect(theirs.data.organization.id).not.toBe(organizationId);
});

describe('the request deadline (lib/http/deadline.ts) ends with the request', () => {
  const operation = defineOperation({
    operationId: 'deadlineTest',
    scope: 'org:read',
    path: '/v1/test/deadline',
    request: z.strictObject({}),
  });
  let seen: AbortSignal | undefined;
  /** The deadline the last invocation's use case read (a function: TypeScript does not follow the closure's assignment). */
  const deadlineSeen = (): AbortSignal | undefined => seen;
  let outcome: 'answer' | 'throw' = 'answer';
  const handler = createApiHandler(
    operation,
    async (_input, { signal }) => {
      seen = signal;
      if (outcome === 'throw') throw new NotFoundError('campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz');
      return { ok: true };
    },
    { findApiKey: (keyHash) => apiKeys().findByHash(keyHash) },
  );

  it.each(['answer', 'throw'] as const)('a use case that read its deadline and %s leaves nothing to fire after the answer', async (how) => {
    outcome = how;
    seen = undefined;
    const requestId = randomUUID();
    const event = apiGatewayEvent({ method: 'POST', url: operation.path, headers: { authorization: `Bearer ${key}` }, requestId });
    // The deadline would fire 150 ms into the invocation (DEADLINE_MARGIN_MS before a timeout 150 ms past it).
    const result = await handler(event, lambdaContext('DeadlineTest', requestId, DEADLINE_MARGIN_MS + 150));
    expect(result.statusCode).toBe(how === 'answer' ? 200 : 404);
    expect(deadlineSeen()?.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(deadlineSeen()?.aborted).toBe(false);
  });
});
