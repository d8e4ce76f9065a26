/**
 * A warm Lambda container of one API function, driven by the bench over IPC
 * (bench/lib/children.ts `startLambdaWorker`): the bundled handler (built with
 * the CDK options) imported once in a Node process of its own, where only the
 * function lives, against the bench's DynamoDB Local, S3 server and Step
 * Functions endpoint (endpoints from the environment).
 *
 *   node --expose-gc bench/children/lambda-worker.mjs '<json>'   (forked, IPC)
 *   JSON: { bundle, functionName }
 *
 * Each message `{ id, event }` is one invocation: a full garbage collection and
 * 100 ms for V8's concurrent sweeping, then the handler's call, timed by
 * `process.cpuUsage` (this process only: not the bench's heap, its local
 * stack or its garbage) and by `process.threadCpuUsage` (the main thread
 * alone: without V8's helper threads, concurrent marking and optimizing
 * compilation). Replies `{ id, cpuMs, mainThreadCpuMs, statusCode, body }`. Plain
 * JavaScript on purpose: nothing but the bundle (and its Lambda context, lambda-context.mjs) is loaded.
 */
import { warmContext } from './lambda-context.mjs';

const { bundle, functionName } = JSON.parse(process.argv[2]);
const { handler } = await import(`file://${bundle}`);
const context = warmContext(functionName);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
process.on('message', async ({ id, event }) => {
  try {
    globalThis.gc();
    await pause(100);
    const before = process.cpuUsage();
    const beforeMain = process.threadCpuUsage();
    const answer = await handler(event, context);
    const main = process.threadCpuUsage(beforeMain);
    const spent = process.cpuUsage(before);
    process.send({
      id,
      cpuMs: (spent.user + spent.system) / 1000,
      mainThreadCpuMs: (main.user + main.system) / 1000,
      statusCode: answer.statusCode,
      body: answer.body,
    });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
// The bench ended (or failed): so does this container.
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
