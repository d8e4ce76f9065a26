/**
 * Serves one API handler over HTTP for a test file, as the local API server
 * serves its routes (infra/local/server.ts: the request becomes a payload 2.0
 * event, the handler's answer the response), for operations that exist only
 * in a test.
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll } from 'vitest';
import { toApiGatewayEvent } from '../../infra/local/server';
import { lambdaContext } from '../../infra/local/lambda-context';

/**
 * Listens on a free loopback port before the file's tests (`beforeAll`) and
 * closes after them (`afterAll`); every POST goes to `handler` with route key
 * `POST <path>` and a fresh request ID.
 * @param options.path - the operation's path (the route key's).
 * @param options.functionName - the Lambda function name the context carries.
 * @returns the server's base URL (`http://127.0.0.1:<port>`), once listening.
 */
export function serveHandler(
  handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>,
  options: { path: string; functionName: string },
): () => string {
  let server: Server;
  let baseUrl = '';
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const requestId = randomUUID();
      const result = await handler(
        toApiGatewayEvent(req, Buffer.concat(chunks), `POST ${options.path}`, requestId),
        lambdaContext(options.functionName, requestId),
      );
      res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return () => baseUrl;
}
