/**
 * A local endpoint of the Lambda Invoke API (`POST /2015-03-31/functions/{FunctionName}/invocations`,
 * the call `@aws-sdk/client-lambda`'s `InvokeCommand` makes), serving the handlers of the route list
 * (infra/routes.ts) by function name. What invokes functions with the AWS SDK in AWS (the MCP function:
 * mcp/lambda-caller.ts) runs here unchanged, with its client pointed at this endpoint (`LAMBDA_ENDPOINT`), so the
 * payload it sends and the answer it reads go through the SDK's own serialization (docs/agents.md "What runs where").
 *
 * As Lambda does for a synchronous invocation (`X-Amz-Invocation-Type: RequestResponse`, the default): the request
 * body is the event, the answer is 200 with the handler's result as JSON; a handler that throws is still 200, with
 * `X-Amz-Function-Error: Unhandled` and `{errorType, errorMessage}`; an unknown function is 404
 * `ResourceNotFoundException`; a payload over 6 MB is 413 `RequestTooLargeException`; another invocation type
 * is 400 (this endpoint runs synchronous invocations only). Each invocation runs in its own Lambda context
 * (infra/local/lambda-context.ts), as the local API server runs its handlers.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { invokeLocally, lambdaContext } from './lambda-context';
import { readBody } from './request-body';

/** Most bytes of a synchronous invocation's payload (the Lambda quota: 6 MB). */
export const MAX_INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** One invocation the endpoint ran: the function's name and the event it received, as sent (for tests: counts, payloads). */
export interface Invocation {
  functionName: string;
  event: unknown;
}

/** A running endpoint. */
export interface LambdaInvokeEndpoint {
  /** Base URL, e.g. `http://127.0.0.1:43210` (what `LAMBDA_ENDPOINT` is set to). */
  url: string;
  /** Every invocation so far, in arrival order. */
  invocations: Invocation[];
  close(): Promise<void>;
}

/** The error answer of the Lambda API: its type in `X-Amzn-ErrorType` and the body, as the SDK reads them. */
function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type, 'x-amzn-requestid': randomUUID() })
    .end(JSON.stringify({ Type: 'User', message }));
}

/**
 * Starts the endpoint on a free loopback port.
 * @param functions - each function's name and its handler's module (relative to the repository root, e.g.
 *   `functions/campaigns-get.ts`, exporting `handler`), loaded on its first invocation.
 */
export async function startLambdaInvokeEndpoint(functions: ReadonlyMap<string, string>): Promise<LambdaInvokeEndpoint> {
  const root = path.resolve(import.meta.dirname, '../..');
  const loaded = new Map<string, Promise<Handler>>();
  const handlerOf = (entry: string) => {
    let handler = loaded.get(entry);
    if (!handler) {
      handler = import(pathToFileURL(path.join(root, entry)).href).then((module: { handler: Handler }) => module.handler);
      loaded.set(entry, handler);
    }
    return handler;
  };
  const invocations: Invocation[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = req.method === 'POST' ? INVOKE_PATH.exec(url.pathname) : null;
      if (!match) return apiError(res, 404, 'UnknownOperationException', `No Lambda API operation at ${req.method} ${url.pathname}`);
      // A name, or an ARN whose last part is the name (`arn:aws:lambda:region:account:function:name[:qualifier]`).
      const named = decodeURIComponent(match[1]!);
      const functionName = named.startsWith('arn:') ? named.split(':')[6]! : named;
      const entry = functions.get(functionName);
      if (!entry) return apiError(res, 404, 'ResourceNotFoundException', `Function not found: ${named}`);
      const invocationType = req.headers['x-amz-invocation-type'] ?? 'RequestResponse';
      if (invocationType !== 'RequestResponse')
        return apiError(
          res,
          400,
          'InvalidParameterValueException',
          `This endpoint runs RequestResponse invocations only, not ${invocationType}`,
        );
      const body = await readBody(req, MAX_INVOKE_PAYLOAD_BYTES);
      if (!body) return apiError(res, 413, 'RequestTooLargeException', `Request must be smaller than ${MAX_INVOKE_PAYLOAD_BYTES} bytes`);
      let event: unknown;
      try {
        event = body.length ? JSON.parse(body.toString('utf8')) : {};
      } catch {
        return apiError(res, 400, 'InvalidRequestContentException', 'Could not parse request body into json');
      }
      // A copy: a handler may change its event (middy's body parser replaces `body`), the record keeps what was sent.
      invocations.push({ functionName, event: structuredClone(event) });
      const requestId = randomUUID();
      const headers = { 'content-type': 'application/json', 'x-amzn-requestid': requestId, 'x-amz-executed-version': '$LATEST' };
      try {
        const result = await invokeLocally(await handlerOf(entry), event, lambdaContext(functionName, requestId));
        res.writeHead(200, headers).end(JSON.stringify(result ?? null));
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        res
          .writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' })
          .end(JSON.stringify({ errorType: failure.name, errorMessage: failure.message, trace: [] }));
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) apiError(res, 500, 'ServiceException', (error as Error).message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    invocations,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
