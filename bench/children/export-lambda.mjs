/**
 * Runs the export Lambda as Lambda would: the bundled handler
 * (bench/tmp/bundles/CampaignsExport/index.mjs, built with the CDK options)
 * in a Node process of its own, invoked once with an API Gateway v2 event,
 * against the bench's DynamoDB Local and s3rver (endpoints from the
 * environment).
 *
 *   node [--cpu-prof …] bench/children/export-lambda.mjs '<json>'
 *   JSON: { bundle, event, blocks? }
 *
 * With `blocks` ({ runs, size, partKey }; node --expose-gc): instead of one
 * invocation, warm invocations timed in blocks, as a warm Lambda container
 * answers them, against reading the result part `partKey` bare through the
 * bundle's own `readPart` export (the same S3 client, into a reused buffer as
 * the page reads it): `runs` + 1 rounds of one block of `size` invocations
 * and one of `size` bare reads, the order alternating, each block after a
 * full garbage collection, the first round a warm-up. Prints each round's CPU
 * per call (ms), its system share (`sysMs`) and the major collections that fell in each block. With
 * `blocks.profile` (a file path), each block but the warm-up's is CPU-profiled
 * (node:inspector), one .cpuprofile per block, `<profile>-page-N.cpuprofile`
 * and `<profile>-bare-N.cpuprofile`: where the page's CPU goes beyond the
 * bare read, in the handler's own process.
 *
 * A streaming function (lib/http/stream-lambda.ts) finds the runtime's
 * `awslambda.streamifyResponse` as in AWS and writes its answer into a
 * response stream that counts the body's bytes (`bodyBytes`).
 *
 * Prints one JSON line: the handler's response, its duration, the process's
 * RSS after the import and its peak (VmHWM from /proc, plus the largest
 * 50 ms sample with its heap/external breakdown, RSS once a second and each second's largest rss / heap used /
 * external / array buffers), and CPU time. Plain JavaScript on purpose: nothing but the
 * bundle (and its Lambda context, lambda-context.mjs) is loaded, so the RSS is the function's own.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { warmContext } from './lambda-context.mjs';

const { bundle, event, functionName = 'CampaignsExport', blocks } = JSON.parse(process.argv[2]);
const vmHwmMiB = () => {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
};
const mib = (bytes) => bytes / 2 ** 20;

// The Lambda Node.js runtime's response streaming (`awslambda`), as a streaming function's handler finds it in AWS
// (lib/http/stream-lambda.ts): the handler writes its answer into a response stream, here one that counts the body's
// bytes and takes each write at once, as a socket that keeps up does (callback on the next tick).
const STREAMING = Symbol('streaming');
globalThis.awslambda = {
  streamifyResponse: (handler) =>
    Object.assign((event, responseStream, context) => handler(event, responseStream, context), { [STREAMING]: true }),
  HttpResponseStream: {
    from(stream, prelude) {
      stream.prelude = prelude;
      return stream;
    },
  },
};
const responseStream = () => {
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      sink.bytes += chunk.length;
      if (sink.text.length < 4096) sink.text += chunk.toString('utf8', 0, Math.min(chunk.length, 4096));
      callback();
    },
  });
  sink.bytes = 0;
  sink.text = '';
  return sink;
};

const importStarted = performance.now();
const { handler, readPart } = await import(`file://${bundle}`);
const importMs = performance.now() - importStarted;
if (blocks) await timeBlocks();
const rssAfterImportMiB = mib(process.memoryUsage.rss());

let peakSampledMiB = rssAfterImportMiB;
let atPeak = process.memoryUsage();
// RSS once a second (MiB): shows whether memory stays flat through the export or grows with it; and the largest
// rss / heapUsed / external / arrayBuffers of each second's samples (where it grows, if it does).
const timeline = [];
const memoryTimeline = [];
let second;
let tick = 0;
const sampler = setInterval(() => {
  const usage = process.memoryUsage();
  if (tick++ % 20 === 0) {
    timeline.push(Math.round(mib(usage.rss)));
    second = [0, 0, 0, 0];
    memoryTimeline.push(second);
  }
  [usage.rss, usage.heapUsed, usage.external, usage.arrayBuffers].forEach((bytes, i) => {
    second[i] = Math.max(second[i], Math.round(mib(bytes)));
  });
  if (mib(usage.rss) > peakSampledMiB) {
    peakSampledMiB = mib(usage.rss);
    atPeak = usage;
  }
}, 50);
const context = warmContext(functionName);
const cpuBefore = process.cpuUsage();
const started = performance.now();
let response;
let bodyBytes;
if (handler[STREAMING]) {
  // A streaming function: written into the response stream as in AWS, to its end; a refusal's body kept as text.
  const sink = responseStream();
  await handler(event, sink, context);
  if (!sink.writableFinished) await new Promise((resolve) => sink.once('finish', resolve));
  const statusCode = sink.prelude?.statusCode ?? 200;
  response = { statusCode, body: statusCode === 200 ? undefined : sink.text };
  if (statusCode === 200) bodyBytes = sink.bytes;
} else {
  response = await handler(event, context);
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
    memoryTimelineMiB: memoryTimeline,
  }),
);

/** The `blocks` mode (see the header): prints one JSON line and exits. */
async function timeBlocks() {
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  let majors = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  }).observe({ entryTypes: ['gc'] });
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const lambdaContext = warmContext(functionName);
  let reused = Buffer.alloc(0);
  const into = (bytes) => (reused.length >= bytes ? reused : (reused = Buffer.allocUnsafeSlow(bytes)));
  let answer;
  const prepare = {
    // Each invocation its own copy of the event (the pipeline's body parser replaces the body), made untimed.
    page: () => {
      const copy = structuredClone(event);
      return async () => {
        answer = await handler(copy, lambdaContext);
      };
    },
    bare: () => () => readPart(blocks.partKey, into),
  };
  const block = async (kind) => {
    globalThis.gc();
    await pause(100);
    const before = majors;
    let used = 0;
    let sys = 0;
    for (let i = 0; i < blocks.size; i++) {
      const call = prepare[kind]();
      const cpu = process.cpuUsage();
      await call();
      const spent = process.cpuUsage(cpu);
      used += (spent.user + spent.system) / 1000;
      sys += spent.system / 1000;
      if (kind === 'page' && answer.statusCode !== 200) throw new Error(`The page answered ${answer.statusCode}: ${answer.body}`);
    }
    await pause(20);
    return { cpuMs: used / blocks.size, sysMs: sys / blocks.size, majors: majors - before };
  };
  const profiler = blocks.profile ? await pageProfiler() : undefined;
  const rounds = [];
  for (let run = 0; run < blocks.runs + 1; run++) {
    const round = {};
    for (const kind of run % 2 ? ['page', 'bare'] : ['bare', 'page']) {
      const profiled = profiler && run > 0;
      if (profiled) await profiler.resume();
      round[kind] = await block(kind);
      if (profiled) await profiler.pause(kind);
    }
    if (run > 0) rounds.push(round);
  }
  profiler?.save(blocks.profile);
  console.log(JSON.stringify({ importMs, rounds, answerBytes: Buffer.byteLength(answer.body ?? '') }));
  process.exit(0);
}

/**
 * A CPU profiler of this process (node:inspector), started at `resume` and
 * stopped at `pause(kind)`; `save(file)` writes each profiled stretch as its
 * own `file-kind-N.cpuprofile`.
 */
async function pageProfiler() {
  // Each collection on stdout too (before the result line), with what started it.
  (await import('node:v8')).setFlagsFromString('--trace-gc');
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const profiles = [];
  return {
    resume: () => session.post('Profiler.start'),
    pause: async (kind) => {
      profiles.push({ kind, profile: (await session.post('Profiler.stop')).profile });
    },
    save: (file) =>
      profiles.forEach(({ kind, profile }, i) => writeFileSync(`${file}-${kind}-${i + 1}.cpuprofile`, JSON.stringify(profile))),
  };
}
