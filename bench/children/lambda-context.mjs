/**
 * The Lambda context of a warm invocation of `name` in a bench child process (the Node runtime's fields), with 29 s
 * left: the one the bench's Lambda children (export-lambda.mjs, lambda-worker.mjs) hand their handler. Plain
 * JavaScript, like them, and nothing else loaded.
 */
export function warmContext(name) {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: `bench-${name}`,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 29_000,
    done() {},
    fail() {},
    succeed() {},
  };
}
