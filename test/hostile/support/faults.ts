/**
 * Fault injection through AWS SDK client middleware on the shared clients of
 * lib/aws.ts (the in-process API server, the workflow's task handlers and the
 * test share them). DynamoDB Local and s3rver never throttle, never raise a
 * transaction conflict and never lose an answer, so these faults are made
 * here, shaped like the SDK's own errors (house style: "a mock of the AWS SDK
 * is fine for injecting faults, never for proving a data path works").
 *
 * Two layers:
 * - `above-retries` (step `initialize`): the caller sees the error at once, as
 *   if the SDK's own retries were exhausted;
 * - `below-retries` (step `finalizeRequest`, inside the retry middleware):
 *   each SDK attempt fails, and the SDK retries retryable errors itself.
 *
 * Two moments:
 * - `before`: the call never reaches the service;
 * - `after`: the service applies it and the answer is lost on the way back
 *   (a Lambda killed between its write and its return).
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { dynamodb, s3, sfn } from '../../../lib/aws';

/** Which shared client a fault is installed on. */
export type FaultClient = 'dynamodb' | 's3' | 'sfn';

/** What to fail, where, and how often. */
export interface FaultSpec {
  client: FaultClient;
  /** SDK command name (`TransactWriteItemsCommand`, `UploadPartCommand`, …) or a pattern of it. */
  command: string | RegExp;
  /** Only calls whose input (as JSON text) contains this string, or satisfies this predicate. */
  match?: string | ((input: any, inputText: string) => boolean);
  when?: 'before' | 'after';
  layer?: 'above-retries' | 'below-retries';
  /** Matching calls that fail (default 1; `Infinity` for all). */
  times?: number;
  /** Matching calls let through before failing starts (default 0). */
  skip?: number;
  /** The error thrown. */
  error: () => Error;
}

/** An installed fault. */
export interface Fault {
  /** Matching calls seen so far. */
  readonly matched: number;
  /** Calls failed so far. */
  readonly failed: number;
  /** Removes the middleware. */
  remove(): void;
}

const clients = { dynamodb: () => dynamodb, s3: () => s3(), sfn: () => sfn() };
let installed: Fault[] = [];
let sequence = 0;

/** Installs a fault; {@link removeAllFaults} (in afterEach) takes it away again. */
export function injectFault(spec: FaultSpec): Fault {
  const client = clients[spec.client]();
  const name = `hostile-fault-${++sequence}`;
  const state = { matched: 0, failed: 0 };
  const times = spec.times ?? 1;
  const skip = spec.skip ?? 0;
  const when = spec.when ?? 'before';
  const commandMatches = (command: string) => (typeof spec.command === 'string' ? command === spec.command : spec.command.test(command));
  const inputMatches = (input: unknown) => {
    if (spec.match === undefined) return true;
    const text = JSON.stringify(input) ?? '';
    return typeof spec.match === 'string' ? text.includes(spec.match) : spec.match(input, text);
  };
  const middleware = (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: { input: unknown }) => {
    if (!commandMatches(context.commandName ?? '') || !inputMatches(args.input)) return next(args);
    state.matched++;
    const fire = state.matched > skip && state.failed < times;
    if (!fire) return next(args);
    if (when === 'before') {
      state.failed++;
      throw spec.error();
    }
    await next(args);
    state.failed++;
    throw spec.error();
  };
  (client.middlewareStack as any).add(middleware, {
    step: spec.layer === 'below-retries' ? 'finalizeRequest' : 'initialize',
    name,
    override: true,
  });
  const fault: Fault = {
    get matched() {
      return state.matched;
    },
    get failed() {
      return state.failed;
    },
    remove() {
      (client.middlewareStack as any).remove(name);
      installed = installed.filter((f) => f !== fault);
    },
  };
  installed.push(fault);
  return fault;
}

/** Removes every installed fault (call in afterEach). */
export function removeAllFaults(): void {
  for (const fault of [...installed]) fault.remove();
}

/** DynamoDB throttling as the SDK raises it (retryable, and in the workflow's TRANSIENT_ERRORS). */
export const throttling = (): Error =>
  Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
    name: 'ThrottlingException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });

/** DynamoDB's throughput error (retryable). */
export const throughputExceeded = (): Error =>
  Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded.'), {
    name: 'ProvisionedThroughputExceededException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });

/** A transaction cancelled by a conflicting transaction (real DynamoDB under contention). */
export const transactionConflict = (): Error =>
  new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: [{ Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }],
  });

/** An S3 server error (retryable by the SDK below its retries). */
export const s3InternalError = (): Error =>
  Object.assign(new Error('We encountered an internal error. Please try again.'), {
    name: 'InternalError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
  });

/** A failure the workflow does not retry (not in TRANSIENT_ERRORS): a crash, a timeout of the task's Lambda. */
export const crash = (name = 'Lambda.Unknown'): Error =>
  Object.assign(new Error('The task died between its write and its return'), { name });
