/**
 * The local HTTP front door: turns each HTTP request into the API Gateway
 * HTTP API event (payload 2.0) that Lambda would receive and calls the very
 * handler the route's Lambda runs (decisions §9).
 *
 * Besides the API routes it serves `GET /health`, and, through the very
 * handlers the deployed stack runs, `GET /openapi.json` and `GET /docs`
 * (functions/api-docs.ts) and the catch-all answers, 404 `not_found` and 405
 * `method_not_allowed` (functions/catch-all.ts). Every response carries
 * `X-Request-Id` (decisions §10).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { API_ROUTES } from '../routes';
import { invokeLocally, lambdaContext } from './lambda-context';
import type { LocalStepFunctions } from './step-functions';
import { failure } from '../../lib/http/envelope';
import { REQUEST_ID_HEADER } from '../../lib/http/request-id';
import { InvalidRequestError } from '../../lib/errors';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');
/** Bytes read from a request at most (API Gateway's payload limit is 10 MB). */
const MAX_REQUEST_BYTES = 11 * 1024 * 1024;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  port: number;
  host?: string;
  /** Answers `GET /health`: resolves when every backing service is reachable. */
  healthCheck: () => Promise<void>;
  /** The local Step Functions endpoint, served on the same port (`x-amz-target: AWSStepFunctions.*`). */
  stepFunctions?: LocalStepFunctions;
}

const TEXT_TYPES = /^(application\/([a-z0-9.+-]+\+)?json|application\/x-www-form-urlencoded|text\/)/i;

/** Builds the payload 2.0 event API Gateway would send for this request. */
export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, routeKey: string, requestId: string): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const now = new Date();
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !isText,
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Writes a handler's result; `X-Request-Id` is the handler's own, or the server's request ID when it answered itself. */
function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2, requestId: string): void {
  res.writeHead(result.statusCode ?? 200, { [REQUEST_ID_HEADER]: requestId, ...(result.headers as Record<string, string>) });
  res.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
}

/**
 * Starts the local API server.
 * @returns the listening server and its base URL.
 */
export async function startApiServer(options: ApiServerOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const handlers = new Map<string, { functionName: string; handler: LambdaHandler }>();
  for (const route of API_ROUTES) {
    const module = (await import(pathToFileURL(path.join(PROJECT_ROOT, route.entry)).href)) as { handler: LambdaHandler };
    handlers.set(route.operation.path, { functionName: route.functionId, handler: module.handler });
  }
  // The handlers of the deployed stack's docs and catch-all routes.
  const { handler: docs } = (await import(pathToFileURL(path.join(PROJECT_ROOT, 'functions/api-docs.ts')).href)) as { handler: LambdaHandler };
  const { handler: catchAll } = (await import(pathToFileURL(path.join(PROJECT_ROOT, 'functions/catch-all.ts')).href)) as { handler: LambdaHandler };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const requestId = randomUUID();
    try {
      if (options.stepFunctions && req.method === 'POST' && String(req.headers['x-amz-target'] ?? '').startsWith('AWSStepFunctions.')) {
        await options.stepFunctions.handle(req, res, (await readBody(req)) ?? Buffer.alloc(0));
        return;
      }
      if (req.method === 'GET' && url.pathname === '/health') {
        try {
          await options.healthCheck();
          res.writeHead(200, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }).end(JSON.stringify({ status: 'ok' }));
        } catch (error) {
          res.writeHead(503, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }).end(JSON.stringify({ status: 'unavailable', reason: (error as Error).message }));
        }
        return;
      }
      const route = req.method === 'POST' ? handlers.get(url.pathname) : undefined;
      // The deployed stack's routes: GET /openapi.json and GET /docs to the docs function, anything unrouted to the catch-all.
      const isDocs = req.method === 'GET' && (url.pathname === '/openapi.json' || url.pathname === '/docs');
      const body = await readBody(req);
      if (body === undefined) {
        send(res, failure(400, new InvalidRequestError('The request body is too large.', ['body: too large']).toJSON()), requestId);
        return;
      }
      if (!route) {
        const routeKey = isDocs ? `GET ${url.pathname}` : '$default';
        const event = toApiGatewayEvent(req, body, routeKey, requestId);
        send(res, await invokeLocally(isDocs ? docs : catchAll, event, lambdaContext(isDocs ? 'ApiDocs' : 'CatchAll', requestId)), requestId);
        return;
      }
      const event = toApiGatewayEvent(req, body, `POST ${url.pathname}`, requestId);
      send(res, await invokeLocally(route.handler, event, lambdaContext(route.functionName, requestId)), requestId);
    } catch (error) {
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId });
      res.end(JSON.stringify({ data: null, error: { code: 'internal_error', message: 'Internal error.' } }));
    }
  });
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    server,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
