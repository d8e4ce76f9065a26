/**
 * Runs the export Lambda as Lambda would: the bundled handler
 * (bench/tmp/bundles/CampaignsExport/index.mjs, built with the CDK options)
 * in a Node process of its own, invoked once with an API Gateway v2 event,
 * against the bench's DynamoDB Local and s3rver (endpoints from the
 * environment).
 *
 *   node [--cpu-prof …] bench/children/export-lambda.mjs '<json>'
 *   JSON: { bundle, event }
 *
 * Prints one JSON line: the handler's response, its duration, the process's
 * RSS after the import and its peak (VmHWM from /proc, plus the largest
 * 50 ms sample with its heap/external breakdown, and RSS once a second), and CPU time. Plain JavaScript on purpose: nothing but the
 * bundle is loaded, so the RSS is the function's own.
 */
import { readFileSync } from 'node:fs';

const { bundle, event, functionName = 'CampaignsExport' } = JSON.parse(process.argv[2]);
const vmHwmMiB = () => {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
};
const mib = (bytes) => bytes / 2 ** 20;

const importStarted = performance.now();
const { handler } = await import(`file://${bundle}`);
const importMs = performance.now() - importStarted;
const rssAfterImportMiB = mib(process.memoryUsage.rss());

let peakSampledMiB = rssAfterImportMiB;
let atPeak = process.memoryUsage();
// RSS once a second (MiB): shows whether memory stays flat through the export or grows with it.
const timeline = [];
let tick = 0;
const sampler = setInterval(() => {
  const usage = process.memoryUsage();
  if (tick++ % 20 === 0) timeline.push(Math.round(mib(usage.rss)));
  if (mib(usage.rss) > peakSampledMiB) {
    peakSampledMiB = mib(usage.rss);
    atPeak = usage;
  }
}, 50);
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
  memoryLimitInMB: '1024',
  awsRequestId: `bench-${functionName}`,
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 29_000,
  done() {},
  fail() {},
  succeed() {},
};
const cpuBefore = process.cpuUsage();
const started = performance.now();
const response = await handler(event, context);
// A streaming operation outside the Lambda runtime answers a readable body: read to its end, as the runtime pipes it.
let bodyBytes;
if (response.body && typeof response.body[Symbol.asyncIterator] === 'function') {
  bodyBytes = 0;
  for await (const chunk of response.body) bodyBytes += chunk.length;
}
const handlerMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
peakSampledMiB = Math.max(peakSampledMiB, mib(process.memoryUsage.rss()));
console.log(
  JSON.stringify({
    importMs,
    handlerMs,
    statusCode: response.statusCode,
    body: bodyBytes === undefined ? response.body : undefined,
    bodyBytes,
    rssAfterImportMiB,
    peakSampledMiB,
    peakRssMiB: vmHwmMiB(),
    // process.memoryUsage() at the largest sample: where the memory was (MiB).
    atPeakMiB: {
      heapTotal: mib(atPeak.heapTotal),
      heapUsed: mib(atPeak.heapUsed),
      external: mib(atPeak.external),
      arrayBuffers: mib(atPeak.arrayBuffers),
    },
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssTimelineMiB: timeline,
  }),
);
