/**
 * A Lambda `Context` for handlers invoked in-process by the local stack.
 */
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
