/**
 * The local HTTP front door: turns each HTTP request into the API Gateway
 * HTTP API event (payload 2.0) that Lambda would receive and calls the very
 * handler the route's Lambda runs (README.md#set-up).
 *
 * Besides the API routes it serves `GET /` (links for a newcomer),
 * `GET /health`, and, through the very handlers the deployed stack runs,
 * `GET /openapi.json` and `GET /docs` (functions/api-docs.ts) and the
 * catch-all answers, 404 `not_found` and 405 `method_not_allowed`
 * (functions/catch-all.ts); when the stack has a demo organization,
 * `GET /local/demo-key` (loopback only; never part of the deployed API).
 * Every response carries `X-Request-Id` (docs/idempotency.md#request-ids).
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { API_ROUTES, DOCS_ROUTES, GUIDES_ROUTE, SUPPORT_FUNCTIONS } from '../routes';
import { API_CATALOG_PATH, LLMS_TXT_PATH } from '../../lib/contract/mcp';
import { invokeLocally, lambdaContext } from './lambda-context';
import { readBody } from './request-body';
import { apiGatewayEvent } from './event';
import type { LocalStepFunctions } from './step-functions';
import type { Readiness } from './readiness';
import { failure } from '../../lib/http/envelope';
import { REQUEST_ID_HEADER } from '../../lib/http/request-id';
import { InvalidRequestError } from '../../lib/errors';
import { isStreamingResult, type StreamingResult } from '../../lib/http/pipeline';
import { writeStreamingBody } from '../../lib/http/stream';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');
/**
 * Bytes read from a request at most: API Gateway's own payload cap (10 MB).
 * Anything up to it reaches the pipeline, whose 5 MiB / 4 MiB limits
 * (docs/errors.md) answer with the envelope exactly as in AWS.
 */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/**
 * How long an idle keep-alive connection stays open, in ms: longer than any
 * common client's own idle timeout (undici/Node fetch 4 s, Node's http Agent
 * 5 s by the server's hint, browsers and load balancers about 60 s), so the
 * client always gives up first and never reuses a socket the server is
 * closing (the race that dropped a request after a pause of a few seconds).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How long the request headers may take, in ms: must exceed {@link KEEP_ALIVE_TIMEOUT_MS} (Node's rule for reused sockets). */
export const HEADERS_TIMEOUT_MS = 66_000;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2 | StreamingResult>;

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  port: number;
  host?: string;
  /** Answers `GET /health`: resolves when every backing service is reachable. */
  healthCheck: () => Promise<void>;
  /** The local Step Functions endpoint, served on the same port (`x-amz-target: AWSStepFunctions.*`). */
  stepFunctions?: LocalStepFunctions;
  /** The demo organization's API key, served at `GET /local/demo-key` (`npm start` only). */
  demoApiKey?: string;
  /** The demo organization's test key (docs/test-mode.md), served at `GET /local/test-key` (`npm start` only). */
  testApiKey?: string;
  /** A starting stack's readiness: until every step completed, `GET /health` answers 503 with the steps still starting (`npm start`). */
  readiness?: Readiness;
  /** A server already listening ({@link listenEarly}) that this API takes over; omitted: one is started on `port`. */
  listening?: ListeningServer;
  /**
   * The tests' check of the error catalogue (docs/errors.md): per operation path, the error codes its document lists
   * (`listedErrorCodes`, lib/contract/openapi.ts). An operation that answers any other code is answered as a 500
   * naming the code and the operation instead ({@link undeclaredErrorAnswer}), so the test that caused it fails.
   * Omitted (`npm start`): answers go out as the handler made them.
   */
  declaredErrors?: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The answer that replaces `result` when it is an error whose code `declared` does not hold (the tests' stack,
 * {@link ApiServerOptions.declaredErrors}): a 500 `internal_error` whose message names the operation and the code
 * and says where to declare it; `undefined` when `result` is a success, a stream, or a declared error.
 */
export function undeclaredErrorAnswer(
  result: APIGatewayProxyStructuredResultV2 | StreamingResult,
  operationId: string,
  declared: ReadonlySet<string>,
): APIGatewayProxyStructuredResultV2 | undefined {
  if (isStreamingResult(result) || (result.statusCode ?? 200) < 400 || typeof result.body !== 'string' || result.isBase64Encoded)
    return undefined;
  let code: unknown;
  try {
    code = (JSON.parse(result.body) as { error?: { code?: unknown } | null }).error?.code;
  } catch {
    return undefined;
  }
  if (typeof code !== 'string' || declared.has(code)) return undefined;
  return failure(500, {
    code: 'internal_error',
    message: `${operationId} answered ${result.statusCode} ${code}, which its document does not list: add it to the operation's errors in its domain's docs.ts (docs/architecture.md "Add an error code").`,
  });
}

/** A server listening before the API is loaded, answering 503 until {@link ListeningServer.serve} hands it the API. */
export interface ListeningServer {
  server: Server;
  url: string;
  /** Serves every request with `listener` from now on. */
  serve(listener: RequestListener): void;
}

/** The 503 of a stack still starting: `GET /health` and every other request, until the API is served and ready. */
function answerStarting(res: ServerResponse, readiness: Readiness | undefined, requestId: string): void {
  const starting = readiness?.starting ?? ['API'];
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', [REQUEST_ID_HEADER]: requestId }).end(
    JSON.stringify({
      status: 'starting',
      starting,
      message: `The local stack is still starting (${starting.join(', ')}); GET /health answers 200 once it is ready.`,
    }),
  );
}

/**
 * Listens on `port` at once, before the API is loaded (`npm start`: the port
 * answers from the first second), answering 503 with what is still starting
 * until {@link ListeningServer.serve} hands it the API.
 */
export async function listenEarly(options: { port: number; host?: string; readiness?: Readiness }): Promise<ListeningServer> {
  let listener: RequestListener = (_req, res) => answerStarting(res, options.readiness, randomUUID());
  const server = createServer((req, res) => listener(req, res));
  server.requestTimeout = 120_000;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  return {
    server,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    serve: (next) => {
      listener = next;
    },
  };
}

/** Path of the local-only demo key endpoint. */
export const DEMO_KEY_PATH = '/local/demo-key';
/** Path of the local-only demo test key endpoint (docs/test-mode.md). */
export const TEST_KEY_PATH = '/local/test-key';

/** Host names a loopback request is addressed to (a DNS-rebinding page carries its own host name instead). */
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;
const LOOPBACK_ADDRESS = /^(127\.|::1$|::ffff:127\.)/;

/**
 * Whether a request comes from this machine and is addressed to it by a
 * loopback name: the demo key is handed to local tools (curl, the
 * quickstart), never to another machine or to a web page that rebinds its
 * own domain to 127.0.0.1.
 */
export function isLoopbackRequest(req: IncomingMessage): boolean {
  return LOOPBACK_ADDRESS.test(req.socket.remoteAddress ?? '') && LOOPBACK_HOST.test(req.headers.host ?? '');
}

/** Builds the payload 2.0 event API Gateway would send for this request (see {@link apiGatewayEvent}). */
export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, routeKey: string, requestId: string): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  return apiGatewayEvent({
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers,
    body,
    requestId,
    routeKey,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    protocol: `HTTP/${req.httpVersion}`,
  });
}

/**
 * Writes a handler's result; `X-Request-Id` is the handler's own, or the server's request ID when it answered itself.
 * A streaming operation's success (lib/http/stream.ts) is written as it comes, the same bytes the Lambda response
 * stream carries in AWS; a reader that goes away destroys it (its wait ends at once).
 */
async function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2 | StreamingResult, requestId: string): Promise<void> {
  res.writeHead(result.statusCode ?? 200, { [REQUEST_ID_HEADER]: requestId, ...(result.headers as Record<string, string>) });
  if (isStreamingResult(result)) {
    res.flushHeaders();
    await writeStreamingBody(result, res).catch(() => result.body.destroy());
    return;
  }
  res.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
}

/**
 * Starts the local API server.
 * @returns the listening server and its base URL.
 */
export async function startApiServer(
  options: ApiServerOptions,
): Promise<{ server: Server; url: string; close(): Promise<void>; serveDemoApiKey(apiKey: string, testApiKey?: string): void }> {
  let demoApiKey = options.demoApiKey;
  let testApiKey = options.testApiKey;
  // Listening first: while the handlers load, requests get the 503 of a starting stack.
  const listening =
    options.listening ??
    (await listenEarly({ port: options.port, host: options.host, ...(options.readiness ? { readiness: options.readiness } : {}) }));
  const { readiness } = options;
  const handlers = new Map<string, { functionName: string; operationId: string; handler: LambdaHandler }>();
  for (const route of API_ROUTES) {
    const module = (await import(pathToFileURL(path.join(PROJECT_ROOT, route.entry)).href)) as { handler: LambdaHandler };
    handlers.set(route.operation.path, {
      functionName: route.functionId,
      operationId: route.operation.operationId,
      handler: module.handler,
    });
  }
  // The handlers of the deployed stack's docs and catch-all routes.
  const { handler: docs } = (await import(pathToFileURL(path.join(PROJECT_ROOT, 'functions/api-docs.ts')).href)) as {
    handler: LambdaHandler;
  };
  const { handler: catchAll } = (await import(pathToFileURL(path.join(PROJECT_ROOT, 'functions/catch-all.ts')).href)) as {
    handler: LambdaHandler;
  };
  const { handler: jwks } = (await import(pathToFileURL(path.join(PROJECT_ROOT, SUPPORT_FUNCTIONS.jwks.entry)).href)) as {
    handler: LambdaHandler;
  };
  // The MCP server (docs/agents.md): the deployed stack's /mcp, its tool calls run in this process.
  const { handler: mcp } = (await import(pathToFileURL(path.join(PROJECT_ROOT, SUPPORT_FUNCTIONS.mcp.localEntry)).href)) as {
    handler: LambdaHandler;
  };
  const docsPaths = new Set<string>(DOCS_ROUTES);

  const listener: RequestListener = async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const requestId = randomUUID();
    try {
      if (options.stepFunctions && req.method === 'POST' && String(req.headers['x-amz-target'] ?? '').startsWith('AWSStepFunctions.')) {
        await options.stepFunctions.handle(req, res, (await readBody(req, MAX_REQUEST_BYTES)) ?? Buffer.alloc(0));
        return;
      }
      if (req.method === 'GET' && url.pathname === '/') {
        const base = `http://${req.headers.host ?? 'localhost'}`;
        const index = {
          name: 'Campaign Enrichment API (local stack)',
          links: {
            docs: `${base}/docs`,
            openapi: `${base}/openapi.json`,
            asyncapi: `${base}/asyncapi.json`,
            apiCatalog: `${base}${API_CATALOG_PATH}`,
            llms: `${base}${LLMS_TXT_PATH}`,
            health: `${base}/health`,
            ...(demoApiKey ? { demoApiKey: `${base}${DEMO_KEY_PATH}` } : {}),
            ...(testApiKey ? { testApiKey: `${base}${TEST_KEY_PATH}` } : {}),
          },
          operations: [...handlers.keys()].map((operationPath) => `POST ${operationPath}`),
          authentication: 'Authorization: Bearer <API key>',
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify(index, null, 2)}\n`);
        return;
      }
      if (
        req.method === 'GET' &&
        (url.pathname === DEMO_KEY_PATH || url.pathname === TEST_KEY_PATH) &&
        !demoApiKey &&
        readiness &&
        !readiness.ready
      ) {
        answerStarting(res, readiness, requestId);
        return;
      }
      const localKey =
        req.method === 'GET'
          ? url.pathname === DEMO_KEY_PATH
            ? demoApiKey
            : url.pathname === TEST_KEY_PATH
              ? testApiKey
              : undefined
          : undefined;
      if (localKey) {
        if (!isLoopbackRequest(req)) {
          res
            .writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
            .end('The demo key is served only to requests from this machine addressed to 127.0.0.1 or localhost.\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`${localKey}\n`);
        return;
      }
      if (req.method === 'GET' && url.pathname === '/health') {
        if (readiness && !readiness.ready) {
          answerStarting(res, readiness, requestId);
          return;
        }
        try {
          await options.healthCheck();
          res.writeHead(200, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }).end(JSON.stringify({ status: 'ok' }));
        } catch (error) {
          res
            .writeHead(503, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId })
            .end(JSON.stringify({ status: 'unavailable', reason: (error as Error).message }));
        }
        return;
      }
      const route = req.method === 'POST' ? handlers.get(url.pathname) : undefined;
      // The deployed stack's routes: GET /openapi.json and GET /docs to the docs function, anything unrouted to the catch-all.
      if (req.method === 'GET' && url.pathname === SUPPORT_FUNCTIONS.jwks.path) {
        const event = toApiGatewayEvent(req, Buffer.alloc(0), `GET ${url.pathname}`, requestId);
        await send(res, await invokeLocally(jwks, event, lambdaContext(SUPPORT_FUNCTIONS.jwks.functionId, requestId)), requestId);
        return;
      }
      // A guide (GET /docs/<name>.md) goes to the docs function as its {guide} route does in AWS.
      const isGuide = req.method === 'GET' && /^\/docs\/[^/]+$/.test(url.pathname);
      const isDocs = (req.method === 'GET' && docsPaths.has(url.pathname)) || isGuide;
      const isMcp =
        url.pathname === SUPPORT_FUNCTIONS.mcp.path && (SUPPORT_FUNCTIONS.mcp.methods as readonly string[]).includes(req.method ?? '');
      const body = await readBody(req, MAX_REQUEST_BYTES);
      if (body === undefined) {
        await send(res, failure(400, new InvalidRequestError('The request body is too large.', ['body: too large']).toJSON()), requestId);
        return;
      }
      if (isMcp) {
        const event = toApiGatewayEvent(req, body, `${req.method} ${url.pathname}`, requestId);
        await send(res, await invokeLocally(mcp, event, lambdaContext(SUPPORT_FUNCTIONS.mcp.functionId, requestId)), requestId);
        return;
      }
      if (!route) {
        const routeKey = isGuide ? `GET ${GUIDES_ROUTE}` : isDocs ? `GET ${url.pathname}` : '$default';
        const event = toApiGatewayEvent(req, body, routeKey, requestId);
        await send(
          res,
          await invokeLocally(isDocs ? docs : catchAll, event, lambdaContext(isDocs ? 'ApiDocs' : 'CatchAll', requestId)),
          requestId,
        );
        return;
      }
      const event = toApiGatewayEvent(req, body, `POST ${url.pathname}`, requestId);
      const result = await invokeLocally(route.handler, event, lambdaContext(route.functionName, requestId));
      const declared = options.declaredErrors?.get(url.pathname);
      const undeclared = declared && undeclaredErrorAnswer(result, route.operationId, declared);
      if (undeclared) console.error(JSON.parse(undeclared.body as string).error.message);
      await send(res, undeclared || result, requestId);
    } catch (error) {
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId });
      res.end(JSON.stringify({ data: null, error: { code: 'internal_error', message: 'Internal error.' } }));
    }
  };
  listening.serve(listener);
  const { server, url } = listening;
  return {
    server,
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    serveDemoApiKey: (apiKey, test) => {
      demoApiKey = apiKey;
      testApiKey = test;
    },
  };
}
