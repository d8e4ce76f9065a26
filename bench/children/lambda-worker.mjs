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
 * compilation), with V8's mark-compact collections during the call
 * (`v8.GCProfiler`) and the young generation's size before it (V8 shrinks it
 * in a process that idles: bench/README.md "Why the launch's change is larger
 * than the quote's"). Replies `{ id, cpuMs, mainThreadCpuMs, majorCollections,
 * youngGenerationKB, statusCode, body }`. Plain
 * JavaScript on purpose: nothing but the bundle (and its Lambda context, lambda-context.mjs) is loaded.
 */
import v8 from 'node:v8';
import { warmContext } from './lambda-context.mjs';

const { bundle, functionName } = JSON.parse(process.argv[2]);
const { handler } = await import(`file://${bundle}`);
const context = warmContext(functionName);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
process.on('message', async ({ id, event }) => {
  try {
    globalThis.gc();
    await pause(100);
    const youngGenerationKB = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 1024;
    const collections = new v8.GCProfiler();
    collections.start();
    const before = process.cpuUsage();
    const beforeMain = process.threadCpuUsage();
    const answer = await handler(event, context);
    const main = process.threadCpuUsage(beforeMain);
    const spent = process.cpuUsage(before);
    const majorCollections = collections.stop().statistics.filter((gc) => gc.gcType === 'MarkSweepCompact').length;
    process.send({
      id,
      cpuMs: (spent.user + spent.system) / 1000,
      mainThreadCpuMs: (main.user + main.system) / 1000,
      majorCollections,
      youngGenerationKB,
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
