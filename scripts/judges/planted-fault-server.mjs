// A deliberately broken API for the Schemathesis self-test (issue #37;
// scripts/judges/schemathesis-planted.sh): one small OpenAPI document and a
// server whose answers break it on purpose, chosen by FAULT:
//   none         every answer matches the document (the judge must pass);
//   extra-field  POST /v1/things/get answers a property its schema forbids;
//   server-error POST /v1/things/get answers 500 for a thing ID of 5 characters or more.
// Prints the port it listens on (127.0.0.1), then serves until killed.
import { createServer } from 'node:http';

const fault = process.env.FAULT ?? 'none';
const envelope = (data) => ({
  type: 'object',
  additionalProperties: false,
  required: ['data', 'error'],
  properties: { data: data, error: { type: 'null' } },
});
const failure = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'error'],
  properties: {
    data: { type: 'null' },
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};
const thing = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name'],
  properties: { id: { type: 'string' }, name: { type: 'string' } },
};
const json = (schema) => ({ content: { 'application/json': { schema } } });
const document = {
  openapi: '3.1.0',
  info: { title: 'Planted-fault API', version: '1.0.0' },
  paths: {
    '/v1/things/get': {
      post: {
        operationId: 'getThing',
        requestBody: {
          required: true,
          ...json({
            type: 'object',
            additionalProperties: false,
            required: ['thingId'],
            properties: { thingId: { type: 'string', minLength: 1, maxLength: 20, pattern: '^[a-z0-9]+$' } },
          }),
        },
        responses: { 200: { description: 'The thing.', ...json(envelope(thing)) }, 400: { description: 'Bad input.', ...json(failure) } },
      },
    },
  },
};

const send = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};
const invalid = (res) => send(res, 400, { data: null, error: { code: 'invalid_request', message: 'thingId: 1..20 of a-z, 0-9.' } });

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/openapi.json') return send(res, 200, document);
  if (req.method !== 'POST' || req.url !== '/v1/things/get') return invalid(res);
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return invalid(res);
    }
    const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
    const id = body?.thingId;
    if (keys.length !== 1 || typeof id !== 'string' || !/^[a-z0-9]{1,20}$/.test(id)) return invalid(res);
    if (fault === 'server-error' && id.length >= 5)
      return send(res, 500, { data: null, error: { code: 'internal_error', message: 'planted' } });
    const data = { id, name: `Thing ${id}`, ...(fault === 'extra-field' ? { planted: true } : {}) };
    return send(res, 200, { data, error: null });
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
