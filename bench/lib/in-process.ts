/**
 * Operations invoked the way Lambda runs them: each API route's `handler`,
 * imported in the bench process and called with an API Gateway payload 2.0
 * event and a Lambda context (no HTTP server, no load client), in a process
 * set up as a standard Lambda execution environment
 * (infra/local/lambda-context.ts `asStandardLambdaEnvironment`), and the DynamoDB calls an invocation
 * makes, recorded once and replayed bare through the same low-level client
 * (lib/aws.ts).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as dynamodbCommands from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { dynamodb } from '../../lib/aws';
import { API_ROUTES } from '../../infra/routes';
import { apiGatewayEvent } from '../../infra/local/event';
import { invokeAsStandardLambda, lambdaContext } from '../../infra/local/lambda-context';
import { waves, type BenchStack, type CallRecord } from './stack';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** One operation, ready to invoke in-process. */
export interface InProcessOperation {
  /** Function ID of the route (`CampaignsGet`). */
  functionId: string;
  /**
   * Invokes the handler once, with a fresh event (new request ID, receive
   * time now) and a fresh context, as the runtime would.
   * @throws when the handler answers anything but 200 (the answer's body in the message).
   */
  invoke(): Promise<APIGatewayProxyStructuredResultV2>;
  /**
   * Builds one invocation's fresh event and context now, and returns the
   * invocation itself: what a timer around it measures is the handler alone,
   * as the runtime hands it an event it has already built.
   */
  prepare(): () => Promise<APIGatewayProxyStructuredResultV2>;
}

/**
 * The handler of the route at `operationPath` (from `API_ROUTES`), with the
 * Bearer key and JSON body of every invocation, which calls the handler as
 * the standard Lambda runtime does (its single-concurrency InvokeStore sets a
 * field that nothing of ours reads here).
 * @throws when no route has that path; an invocation throws outside `asStandardLambdaEnvironment` (infra/local/lambda-context.ts).
 */
export async function inProcessOperation(operationPath: string, apiKey: string, body: unknown): Promise<InProcessOperation> {
  const route = API_ROUTES.find((r) => r.operation.path === operationPath);
  if (!route) throw new Error(`No API route for ${operationPath}`);
  const { handler } = (await import(pathToFileURL(path.join(PROJECT_ROOT, route.entry)).href)) as { handler: ApiHandler };
  const prepare = preparedInvocations(handler, operationPath, apiKey, body, route.functionId);
  return { functionId: route.functionId, invoke: () => prepare()(), prepare };
}

/**
 * Prepares invocations of a handler: each call builds a fresh event (new request ID, receive time now) and a
 * Lambda context, and returns the invocation itself (see {@link InProcessOperation.prepare}).
 * @throws from the invocation when the handler answers anything but 200.
 */
export function preparedInvocations(
  handler: ApiHandler,
  operationPath: string,
  apiKey: string,
  body: unknown,
  functionId: string,
): () => () => Promise<APIGatewayProxyStructuredResultV2> {
  const payload = Buffer.from(JSON.stringify(body));
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    'content-length': String(payload.length),
    host: '127.0.0.1',
    'user-agent': 'bench',
  };
  const prepare = () => {
    const requestId = randomUUID();
    const event = apiGatewayEvent({
      method: 'POST',
      url: operationPath,
      headers,
      body: payload,
      requestId,
      routeKey: `POST ${operationPath}`,
    });
    const context = lambdaContext(functionId, requestId);
    return async () => {
      const result = await invokeAsStandardLambda(handler, event, context);
      if (result.statusCode !== 200) throw new Error(`${functionId} answered ${result.statusCode}: ${result.body}`);
      return result;
    };
  };
  return prepare;
}

/** The DynamoDB calls of one invocation, in waves of calls that were in flight together. */
export interface RecordedCalls {
  waves: CallRecord[][];
  /** Round trips the invocation made to services other than DynamoDB (S3), and Step Functions requests: not replayed. */
  others: string[];
  /** E.g. `BatchGetItem (3 keys)` or `GetItem → Query`. */
  describe: string;
}

/**
 * Runs `invoke` once in a bench scope that keeps every DynamoDB call's
 * marshalled input, and groups the calls into waves ({@link waves}: calls
 * in flight together were sent concurrently).
 * @throws when the invocation made no DynamoDB call.
 */
export async function recordCalls(stack: BenchStack, label: string, invoke: () => Promise<unknown>): Promise<RecordedCalls> {
  const { scope } = await stack.inScope(label, invoke, { recordInputs: true });
  const calls = scope.calls.filter((c) => c.service === 'dynamodb');
  if (calls.length === 0) throw new Error(`${label} made no DynamoDB call`);
  const grouped = waves(calls);
  const others = [
    ...scope.calls.filter((c) => c.service !== 'dynamodb').map((c) => `${c.service} ${c.command}`),
    ...scope.stepFunctionsCalls,
  ];
  const what = (c: CallRecord) =>
    `${c.command}${c.items ? ` (${c.items} key${c.items === 1 ? '' : 's'})` : ''}${c.error ? ` → ${c.error}` : ''}`;
  return { waves: grouped, others, describe: grouped.map((wave) => wave.map(what).join(' ∥ ')).join(' → ') };
}

type Sendable = Parameters<typeof dynamodb.send>[0];
const commandClasses = dynamodbCommands as unknown as Record<string, new (input: Record<string, unknown>) => Sendable>;

/**
 * A replay of recorded calls through the low-level client of lib/aws.ts:
 * each wave's calls concurrently, the waves one after the other; a call that
 * failed when recorded must fail with the same error again. A conditional
 * write that succeeded when recorded may fail its condition on replay (the
 * audit entry of an answer is written once per request ID, docs/audit.md):
 * DynamoDB does the same work and round trip for it, so it counts as replayed.
 * @throws when a replayed call answers otherwise than it did when recorded.
 */
export function replay(recorded: RecordedCalls): () => Promise<void> {
  const waves = recorded.waves.map((wave) =>
    wave.map((call) => {
      const Command = commandClasses[`${call.command}Command`];
      if (!Command || !call.input) throw new Error(`Cannot replay ${call.command}`);
      const input = { ...call.input };
      // The bench's capacity middleware asks for it again on every call (the handler's included).
      delete input.ReturnConsumedCapacity;
      return { Command, input, error: call.error, conditional: input.ConditionExpression !== undefined };
    }),
  );
  return async () => {
    for (const wave of waves) {
      await Promise.all(
        wave.map(async ({ Command, input, error, conditional }) => {
          try {
            await dynamodb.send(new Command(input));
          } catch (thrown) {
            const name = (thrown as Error).name;
            if (name === error || (conditional && error === undefined && name === 'ConditionalCheckFailedException')) return;
            throw thrown;
          }
          if (error) throw new Error(`${Command.name} succeeded on replay; it failed with ${error} when recorded`);
        }),
      );
    }
  };
}
