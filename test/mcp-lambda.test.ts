/**
 * The deployed MCP function's path, proven without AWS (docs/agents.md
 * "What runs where"): mcp/handler.ts, the function AWS runs behind `POST /mcp`,
 * served over HTTP as API Gateway serves it (payload 2.0 events), with its
 * Lambda client (`@aws-sdk/client-lambda`, the bundle's own) pointed at a
 * local Lambda Invoke endpoint (infra/local/lambda-invoke.ts) that runs each
 * operation's own handler with the event the MCP function sent. Nothing is
 * mocked: the SDK serializes the invocation and parses its answer as it does
 * against AWS, and the handlers run against DynamoDB Local, the S3 endpoint
 * and the local Step Functions endpoint of the local stack.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { newOrganization, useApi } from './support/api';
import { apiKeys, organizations, ACCEPTED_CHARGE_FIELD } from '../lib/root';
import { toolName } from '../lib/contract/mcp';
import { MCP_ROUTES, SUPPORT_FUNCTIONS } from '../infra/routes';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../infra/local/lambda-invoke';
import { toApiGatewayEvent } from '../infra/local/server';
import { apiGatewayEvent } from '../infra/local/event';
import { invokeLocally, lambdaContext } from '../infra/local/lambda-context';
import { TOOL_FUNCTIONS_VARIABLE } from '../mcp/lambda-caller';
import { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';

// The local stack (table, bucket, Step Functions endpoint) the operations' handlers use; its own /mcp is not called.
useApi();

type McpFunction = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

let lambda: LambdaInvokeEndpoint;
let mcpServer: Server;
let mcpUrl: string;

beforeAll(async () => {
  // Each tool's function by name, as the stack names them in MCP_TOOL_FUNCTIONS (infra/stack.ts): here the route's functionId.
  lambda = await startLambdaInvokeEndpoint(new Map(MCP_ROUTES.map((route) => [route.functionId, route.entry])));
  process.env.LAMBDA_ENDPOINT = lambda.url;
  process.env[TOOL_FUNCTIONS_VARIABLE] = JSON.stringify(
    Object.fromEntries(MCP_ROUTES.map((route) => [toolName(route.operation.operationId), route.functionId])),
  );
  const { handler } = (await import('../mcp/handler')) as { handler: McpFunction };
  // API Gateway's part: each HTTP request to /mcp becomes the function's payload 2.0 event, its result the answer.
  mcpServer = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const requestId = randomUUID();
      const event = toApiGatewayEvent(req, Buffer.concat(chunks), `${req.method} ${SUPPORT_FUNCTIONS.mcp.path}`, requestId);
      const result = await invokeLocally(handler, event, lambdaContext(SUPPORT_FUNCTIONS.mcp.functionId, requestId));
      res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body ?? '');
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => mcpServer.listen(0, '127.0.0.1', resolve));
  mcpUrl = `http://127.0.0.1:${(mcpServer.address() as AddressInfo).port}${SUPPORT_FUNCTIONS.mcp.path}`;
});

afterAll(async () => {
  await new Promise((resolve) => mcpServer?.close(resolve));
  await lambda?.close();
  delete process.env.LAMBDA_ENDPOINT;
  delete process.env[TOOL_FUNCTIONS_VARIABLE];
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An SDK client of the MCP function with a test key of a new organization (its twin: test credits, the built-in warehouse). */
async function connect() {
  const { organizationId } = await newOrganization();
  const key = await apiKeys().create((await organizations().testTwin(organizationId)).id);
  const client = new Client({ name: 'mcp-lambda-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  clients.push(client);
  return { client, key };
}

const tool = async (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;

const data = <T = any>(result: CallToolResult): T => {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as T;
};

/** The invocations made with this key, in order: the function named and the event it received. */
const invocationsOf = (key: string) =>
  lambda.invocations
    .filter(({ event }) => (event as APIGatewayProxyEventV2).headers?.authorization === `Bearer ${key}`)
    .map(({ functionName, event }) => ({ functionName, event: event as APIGatewayProxyEventV2 & Record<string, unknown> }));

const functionOf = (tool: string) => MCP_ROUTES.find((route) => toolName(route.operation.operationId) === tool)!;

describe('the MCP function over Lambda Invoke (local endpoint)', () => {
  it('the endpoint speaks the Lambda Invoke API as the AWS SDK reads it', async () => {
    const client = new LambdaClient({ endpoint: lambda.url });
    await expect(
      client.send(new InvokeCommand({ FunctionName: 'NoSuchFunction', Payload: new TextEncoder().encode('{}') })),
    ).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    // A function found by its ARN, invoked with an API Gateway event without a key: the operation's own 401.
    const get = functionOf('get_campaign');
    const event = apiGatewayEvent({
      method: 'POST',
      url: get.operation.path,
      headers: { 'content-type': 'application/json', host: '127.0.0.1' },
      body: Buffer.from('{}'),
      requestId: randomUUID(),
    });
    const answer = await client.send(
      new InvokeCommand({
        FunctionName: `arn:aws:lambda:us-east-1:000000000000:function:${get.functionId}`,
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
    expect(answer.StatusCode).toBe(200);
    expect(answer.FunctionError).toBeUndefined();
    const result = JSON.parse(new TextDecoder().decode(answer.Payload)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(String(result.body)).error.code).toBe('invalid_api_key');
  });

  it('test mode: create → quote → enrich bound to the quote → get, each call one invocation of its operation’s function with the event API Gateway would send it', async () => {
    const { client, key } = await connect();
    const accountIds = [...Array.from({ length: 4 }, (_, i) => `test_found_lambda_${i}`), 'test_nocontacts_lambda'];
    const campaign = data(await tool(client, 'create_campaign', { name: 'Over Lambda', accountIds }));
    expect(campaign.status).toBe('draft');
    const quote = data(await tool(client, 'quote_campaign', { campaignId: campaign.id }));
    expect(quote).toMatchObject({ outcome: 'launchable', accounts: { requested: 5, eligible: 5 }, credits: { required: 5 } });
    const launched = data(await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: 5 }));
    expect(launched).toMatchObject({ id: campaign.id, status: 'enriching', credits: { charged: 5 } });
    // Poll as an agent does (well inside the test twin's request rate).
    let current = data(await tool(client, 'get_campaign', { campaignId: campaign.id }));
    while (current.status === 'enriching') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      current = data(await tool(client, 'get_campaign', { campaignId: campaign.id }));
    }
    expect(current).toMatchObject({ id: campaign.id, status: 'enriched', accounts: { requested: 5, eligible: 5 } });

    const invoked = invocationsOf(key);
    const order = ['create_campaign', 'quote_campaign', 'enrich_campaign'];
    expect(invoked.slice(0, 3).map((call) => call.functionName)).toEqual(order.map((name) => functionOf(name).functionId));
    expect(new Set(invoked.slice(3).map((call) => call.functionName))).toEqual(new Set([functionOf('get_campaign').functionId]));
    for (const [i, name] of order.entries()) {
      const { event } = invoked[i]!;
      const path = functionOf(name).operation.path;
      expect(event).toMatchObject({ version: '2.0', routeKey: `POST ${path}`, rawPath: path, isBase64Encoded: false });
      expect(event.requestContext.http).toMatchObject({ method: 'POST', path });
      expect(event.headers['content-type']).toBe('application/json');
    }
    expect(JSON.parse(invoked[0]!.event.body!)).toEqual({ name: 'Over Lambda', accountIds });
    expect(JSON.parse(invoked[2]!.event.body!)).toEqual({ campaignId: campaign.id });
    // The bound launch: the accepted charge travels in the event's own field, which only an invocation can set.
    expect(invoked[2]!.event[ACCEPTED_CHARGE_FIELD]).toBe(5);
    expect(invoked[0]!.event[ACCEPTED_CHARGE_FIELD]).toBeUndefined();

    // Money, read through the same path: charged the quoted 5 once; the account without contacts refunded.
    const entries = data<{ entries: { kind: string; amount: number; campaignId: string | null }[] }>(
      await tool(client, 'list_ledger', { limit: 100 }),
    ).entries.filter((entry) => entry.campaignId === campaign.id);
    expect(entries.filter((entry) => entry.kind === 'charge').map((entry) => entry.amount)).toEqual([-5]);
    expect(entries.filter((entry) => entry.kind === 'refund').reduce((sum, entry) => sum + entry.amount, 0)).toBe(1);
  });

  it('refusals come back through the invocation: a bound launch the evaluation no longer matches charges nothing, bad arguments name the field', async () => {
    const { client, key } = await connect();
    const campaign = data(
      await tool(client, 'create_campaign', { name: 'Changed', accountIds: ['test_found_lambda_a', 'test_found_lambda_b'] }),
    );
    const refused = await tool(client, 'enrich_campaign', { campaignId: campaign.id }, { [ACCEPTED_CHARGE_META]: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: CHARGE_CHANGED_CODE, details: { accepted: 1, charge: 2 } });
    expect(data(await tool(client, 'get_campaign', { campaignId: campaign.id }))).toMatchObject({
      status: 'draft',
      credits: { charged: 0 },
    });
    const invalid = await tool(client, 'get_campaign', { campaignId: 'not-an-id' });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toMatchObject({ code: 'invalid_request' });
    expect(JSON.stringify(invalid.structuredContent)).toContain('campaignId');
    // Each of the four tool calls was one invocation of its function.
    expect(invocationsOf(key).map((call) => call.functionName)).toEqual(
      ['create_campaign', 'enrich_campaign', 'get_campaign', 'get_campaign'].map((name) => functionOf(name).functionId),
    );
  });
});
