/**
 * Unrouted requests (docs/errors.md): 404 `not_found` with
 * `details.resource = "route"`, or 405 `method_not_allowed` with
 * `Allow: POST` on an operation path, in the envelope. Locally through the
 * server, and the same handler as the deployed `$default` route runs it.
 */
import { describe, expect, it } from 'vitest';
import { useApi } from './support/api';
import { API_ROUTES } from '../infra/routes';
import { toApiGatewayEvent } from '../infra/local/server';
import { lambdaContext } from '../infra/local/lambda-context';
import { handler as catchAll } from '../functions/catch-all';

const api = useApi();

async function fetchEnvelope(path: string, method: string) {
  const response = await fetch(`${api()}${path}`, { method });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

describe('catch-all', () => {
  it.each(['GET', 'PUT', 'PATCH', 'DELETE'])(
    'answers %s on every operation path with 405 method_not_allowed and Allow: POST',
    async (method) => {
      for (const route of API_ROUTES) {
        const res = await fetchEnvelope(route.operation.path, method);
        expect(res.status, route.operation.path).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
        expect(res.headers.get('x-request-id')).toMatch(/\S/);
        expect(res.body).toEqual({
          data: null,
          error: {
            code: 'method_not_allowed',
            message: `${method} is not allowed on ${route.operation.path}; use POST.`,
            details: { allow: ['POST'] },
          },
        });
      }
    },
  );

  it.each([
    ['POST', '/v1/campaigns/nope', '/v1/campaigns/quote'],
    ['POST', '/v1/campaign/get', '/v1/campaigns/get'],
    ['POST', '/v1/campaigns/enrichh', '/v1/campaigns/enrich'],
    // (`GET /` is the local stack's newcomer index of links, infra/local/server.ts; in AWS the catch-all answers it.)
    ['POST', '/', undefined],
    ['GET', '/v1/org/describe/', '/v1/org/describe'],
    ['DELETE', '/v2/org/describe', '/v1/org/describe'],
    ['POST', '/docs', undefined],
  ])('answers %s %s with 404 not_found, resource "route", naming the nearest operation path (%s)', async (method, path, nearest) => {
    const res = await fetchEnvelope(path, method);
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    const hint = `${nearest ? `Did you mean POST ${nearest}? ` : ''}Every operation is a POST listed in /openapi.json.`;
    expect(res.body).toEqual({
      data: null,
      error: {
        code: 'not_found',
        message: `No route with id "${method} ${path}". ${hint}`,
        details: { resource: 'route', id: `${method} ${path}` },
      },
    });
  });

  it('is the handler the deployed $default route runs: same answer for an API Gateway event', async () => {
    const request = {
      rawHeaders: ['Host', 'abc.execute-api.eu-west-1.amazonaws.com'],
      url: '/v1/campaigns/get',
      method: 'GET',
      httpVersion: '1.1',
      socket: {},
    };
    const event = toApiGatewayEvent(request as never, Buffer.alloc(0), '$default', 'gw-request-1');
    const response = await catchAll(event, lambdaContext('CatchAll', 'lambda-request-1'));
    expect(response).toMatchObject({ statusCode: 405, headers: { allow: 'POST', 'x-request-id': 'gw-request-1' } });
    expect(JSON.parse(response.body!)).toMatchObject({ error: { code: 'method_not_allowed', details: { allow: ['POST'] } } });
    const unknown = await catchAll(
      toApiGatewayEvent({ ...request, url: '/nowhere' } as never, Buffer.alloc(0), '$default', 'gw-request-2'),
      lambdaContext('CatchAll', 'lambda-request-2'),
    );
    expect(unknown).toMatchObject({ statusCode: 404, headers: { 'x-request-id': 'gw-request-2' } });
    const root = await catchAll(
      toApiGatewayEvent({ ...request, url: '/' } as never, Buffer.alloc(0), '$default', 'gw-request-3'),
      lambdaContext('CatchAll', 'lambda-request-3'),
    );
    expect(JSON.parse(root.body!)).toMatchObject({ error: { code: 'not_found', details: { resource: 'route' } } });
  });
});
