/**
 * A Lambda `Context` for handlers invoked in-process by the local stack.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import { API_FUNCTION_TIMEOUT_SECONDS } from '../../lib/http/deadline';

/** Builds the context Lambda would pass to `functionName` for one invocation (`timeoutMs`: the function's timeout, 28 s for the API's). */
export function lambdaContext(functionName: string, requestId: string, timeoutMs = API_FUNCTION_TIMEOUT_SECONDS * 1000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * An InvokeStore with one AsyncLocalStorage context per invocation, as the
 * Lambda runtime provides when it runs invocations concurrently (Lambda
 * Managed Instances). The package's own multi-context store is not exported,
 * and a single-context one may already be installed (the AWS SDK asks for
 * one), so the local stack installs this one.
 */
class LocalInvokeStore extends InvokeStoreBase {
  private readonly als = new AsyncLocalStorage<Record<string | symbol, unknown>>();
  getContext() {
    return this.als.getStore();
  }
  hasContext() {
    return this.als.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return this.als.getStore()?.[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const store = this.als.getStore();
    if (!store) throw new Error('No invocation context');
    store[key] = value;
  }
  run<T>(context: Record<string | symbol, unknown>, fn: () => T): T {
    return this.als.run(context, fn);
  }
}

let invokeStore: LocalInvokeStore | undefined;

/** Tells Powertools (and the runtime) that invocations may run concurrently in this process: set by {@link invokeLocally}. */
const MAX_CONCURRENCY_VARIABLE = 'AWS_LAMBDA_MAX_CONCURRENCY';

/**
 * Runs one handler invocation the way Lambda runs concurrent invocations in
 * one execution environment: inside its own InvokeStore context, which
 * Powertools reads when `AWS_LAMBDA_MAX_CONCURRENCY` is set. The local stack
 * runs every function in one process, concurrently; this keeps each
 * invocation's log keys (request ID, organization, attempt), Lambda context
 * and log level its own, as they are in AWS where each function has its own
 * execution environment.
 */
export async function invokeLocally<E, R>(handler: (event: E, context: Context) => Promise<R>, event: E, context: Context): Promise<R> {
  if (!invokeStore) {
    invokeStore = new LocalInvokeStore();
    const global = globalThis as unknown as { awslambda?: { InvokeStore?: unknown } };
    global.awslambda = { ...global.awslambda, InvokeStore: invokeStore };
    // Only once the store exists: Powertools refuses to log when the variable is set without one.
    process.env[MAX_CONCURRENCY_VARIABLE] ??= '1000';
  }
  return invokeStore.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () => handler(event, context));
}

/**
 * Runs `work` with this process set up as a standard Lambda execution
 * environment runs one function: one invocation at a time, and
 * `AWS_LAMBDA_MAX_CONCURRENCY` unset. {@link invokeLocally} sets that
 * variable, because the local stack runs every function concurrently in one
 * process, and with it Powertools keeps each invocation's log keys and
 * context in the InvokeStore (an AsyncLocalStorage, the variable read on
 * every access). The deployed functions run without it: Powertools keeps
 * that state on its instances and the runtime's InvokeStore is its
 * single-concurrency kind (a field). Nothing else may invoke a handler in
 * this process meanwhile; the variable is restored afterwards. For the bench's
 * in-process figures ({@link invokeAsStandardLambda}).
 */
export async function asStandardLambdaEnvironment<T>(work: () => Promise<T>): Promise<T> {
  const saved = process.env[MAX_CONCURRENCY_VARIABLE];
  delete process.env[MAX_CONCURRENCY_VARIABLE];
  try {
    return await work();
  } finally {
    if (saved !== undefined) process.env[MAX_CONCURRENCY_VARIABLE] = saved;
  }
}

/**
 * Invokes a handler as the standard Lambda runtime does (its
 * single-concurrency InvokeStore sets a field that nothing of ours reads).
 * @throws Error outside {@link asStandardLambdaEnvironment}: the figure would measure the local stack's emulation instead.
 */
export function invokeAsStandardLambda<E, R>(handler: (event: E, context: Context) => Promise<R>, event: E, context: Context): Promise<R> {
  if (process.env[MAX_CONCURRENCY_VARIABLE] !== undefined) {
    throw new Error(`Invoke as a standard Lambda environment inside asStandardLambdaEnvironment (${MAX_CONCURRENCY_VARIABLE} is set)`);
  }
  return handler(event, context);
}

/**
 * This process's environment without the settings of the local Lambda
 * emulation (`AWS_LAMBDA_*`, set by {@link invokeLocally}), for child
 * processes that run outside it (the operator CLI, a bundle run on its own):
 * with them, Powertools would look for the Lambda runtime's InvokeStore.
 */
export function environmentOutsideLambda(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('AWS_LAMBDA_')));
}
