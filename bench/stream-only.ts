/**
 * `npm run bench:stream`: the results stream's peak-memory figure alone
 * (bench `results`, figure 4), without the launch, page and long poll the
 * module measures first.
 *
 *   npm run bench:stream                          100,000 accounts × 10 contacts against 10,000, 3 runs each
 *   npm run bench:stream -- --accounts=40000 --runs=5
 *   npm run bench:stream -- --env=MALLOC_ARENA_MAX=2   (environment of the stream process)
 *
 * 1. Starts the emulators only (DynamoDB Local, s3rver; no API server).
 * 2. Writes a large and a small (a tenth) enriched campaign as the workflow
 *    leaves them (bench/figures/privacy.ts `writeCampaign`: the parts, their
 *    copy index, the sequence).
 * 3. Builds the CampaignsResultsStream bundle and invokes it in its own Node
 *    process (bench/children/export-lambda.mjs), small and large
 *    interleaved, the body read to its end: each run's peak RSS (VmHWM) and
 *    each second's largest rss / heap used / external / array buffers.
 *
 * Prints one JSON line with the runs and the ratio of the medians.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalStack } from '../infra/local/stack';
import { buildBundle } from './lib/bundle';
import { runLambdaOnce } from './lib/children';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    /** Extra environment of the stream process, NAME=value (repeatable). */
    env: { type: 'string', multiple: true, default: [] },
  },
});
const large = Number(values.accounts);
const small = Math.max(1_000, Math.round(large / 10));
const runs = Number(values.runs);
const TMP_DIR = path.join(import.meta.dirname, 'tmp');
const round = (v: number) => Math.round(v * 10) / 10;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const stack = await startLocalStack({ api: false });
try {
  // Imported after the stack set the environment (lib/config reads it at import).
  const { benchOrganization } = await import('./lib/fixtures');
  const { writeCampaign } = await import('./figures/privacy');
  const { streamCampaignResultsOperation } = await import('../lib/exports/schema');
  const { organizationId, apiKey } = await benchOrganization('Bench stream', 10_000_000, 10_000_000);
  const largeId = await writeCampaign(organizationId, 'Stream large', large);
  const smallId = await writeCampaign(organizationId, 'Stream small', small);
  await buildBundle('CampaignsResultsStream', { entry: 'functions/campaigns-results-stream.ts' }, path.join(TMP_DIR, 'bundles'));
  const bundle = path.join(TMP_DIR, 'bundles', 'CampaignsResultsStream', 'index.mjs');
  const env = Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  const stream = async (campaignId: string) => {
    const { outcome, stderr } = await runLambdaOnce({
      bundle,
      apiKey,
      functionId: 'CampaignsResultsStream',
      path: streamCampaignResultsOperation.path,
      body: { campaignId },
      headers: { accept: 'application/jsonl' },
      env,
    });
    if (outcome.statusCode !== 200 || !outcome.bodyBytes)
      throw new Error(`The stream answered ${outcome.statusCode}: ${outcome.body}\n${stderr}`);
    return {
      peakRssMiB: round(outcome.peakRssMiB),
      cpuS: round(outcome.cpuMs / 1000),
      bodyBytes: outcome.bodyBytes,
      atPeakMiB: Object.fromEntries(Object.entries(outcome.atPeakMiB).map(([k, v]) => [k, round(v)])),
      everySecondMiB: (outcome.memoryTimelineMiB ?? []).map((second) => second.join('/')).join(' '),
    };
  };
  const smallRuns = [];
  const largeRuns = [];
  for (let run = 0; run < runs; run++) {
    smallRuns.push(await stream(smallId));
    largeRuns.push(await stream(largeId));
  }
  const smallPeak = median(smallRuns.map((run) => run.peakRssMiB));
  const largePeak = median(largeRuns.map((run) => run.peakRssMiB));
  console.log(
    JSON.stringify(
      {
        large,
        small,
        ratio: Math.round((largePeak / smallPeak) * 1000) / 1000,
        largePeakMiB: largePeak,
        smallPeakMiB: smallPeak,
        note: 'everySecondMiB: each second, the largest rss/heapUsed/external/arrayBuffers of its 50 ms samples',
        smallRuns,
        largeRuns,
      },
      null,
      1,
    ),
  );
} finally {
  await stack.stop();
}
