/**
 * `npm run bench:export`: the export figure alone, without the minutes of
 * warehouse import, launch and workflow the scale figure spends first.
 *
 *   npm run bench:export                        100,000 accounts × 10 contacts (1M rows)
 *   npm run bench:export -- --accounts=20000 --contacts=10 --profile
 *   npm run bench:export -- --env=MALLOC_ARENA_MAX=2   (environment of the export process)
 *
 * 1. Starts the emulators only (DynamoDB Local, s3rver; no API server).
 * 2. Writes the result parts through ResultStore.putPart, exactly as the
 *    workflow's FindContacts batches write them (1,000 accounts a part, the
 *    bench's realistic accounts), and an `enriched` campaign item pointing at
 *    them; reports the CPU the encoding costs the workflow per part.
 * 3. Builds the CampaignsExport bundle with the CDK options and invokes it
 *    once in its own Node process (bench/children/export-lambda.mjs), as
 *    Lambda runs it: CPU-seconds (process.cpuUsage around the handler) and
 *    peak RSS (VmHWM) of that process.
 * 4. Downloads the file and checks its rows.
 *
 * Prints one JSON line with the figures.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { customAlphabet } from 'nanoid';
import { startLocalStack } from '../infra/local/stack';
import { buildBundle } from './lib/bundle';
import { runExportLambda } from './lib/children';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    contacts: { type: 'string', default: '10' },
    profile: { type: 'boolean', default: false },
    /** Extra environment of the export process, NAME=value (repeatable), e.g. to try allocator or V8 settings. */
    env: { type: 'string', multiple: true, default: [] },
  },
});
const N = Number(values.accounts);
const C = Number(values.contacts);
const BATCH = 1_000;
const TMP_DIR = path.join(import.meta.dirname, 'tmp');
const MB = 1e6;
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

const stack = await startLocalStack({ api: false });
try {
  // Imported after the stack set the environment (lib/config reads it at import).
  const { campaigns, results } = await import('../lib/root');
  const { encodePart, resultsPrefix } = await import('../lib/results/parts');
  const { newCampaignId } = await import('../lib/ids');
  const { benchAccount, benchEnrichedCampaign, benchOrganization } = await import('./lib/fixtures');

  const { organizationId, apiKey } = await benchOrganization('Bench export', N, N);
  const campaignId = newCampaignId();
  const attemptId = `att_${customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21)()}`;
  const prefix = resultsPrefix(organizationId, campaignId, attemptId);

  // 2. Result parts, 8 batches at a time; the encoding's CPU measured apart from the upload.
  const parts = Math.ceil(N / BATCH);
  let encodeMs = 0;
  let partBytes = 0;
  let next = 0;
  const writeStarted = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < parts; index = next++) {
        const accounts = Array.from({ length: Math.min(BATCH, N - index * BATCH) }, (_, i) => {
          const { status: _status, ...account } = benchAccount(`acc_${String(index * BATCH + i).padStart(6, '0')}`, index * BATCH + i, C);
          return account;
        });
        const cpu = process.cpuUsage();
        partBytes += encodePart(accounts).length;
        const used = process.cpuUsage(cpu);
        encodeMs += (used.user + used.system) / 1000;
        await results().putPart(prefix, index, accounts);
      }
    }),
  );
  const writeS = (performance.now() - writeStarted) / 1000;
  await campaigns().create(
    benchEnrichedCampaign({ organizationId, campaignId, attemptId, name: 'Bench export', accounts: N, contacts: C }),
  );

  // 3. The bundled export Lambda in its own process.
  await buildBundle('CampaignsExport', { entry: 'functions/campaigns-export.ts' }, path.join(TMP_DIR, 'bundles'));
  const bundle = path.join(TMP_DIR, 'bundles', 'CampaignsExport', 'index.mjs');
  const profileDir = path.join(TMP_DIR, 'profiles');
  mkdirSync(profileDir, { recursive: true });
  const child = await runExportLambda({
    bundle,
    apiKey,
    campaignId,
    ...(values.profile ? { profile: { dir: profileDir, name: 'export-only.cpuprofile' } } : {}),
    env: Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])),
  });
  const { outcome } = child;
  if (outcome.statusCode !== 200) throw new Error(`The export answered ${outcome.statusCode}: ${outcome.body}\n${child.stderr}`);
  const { data } = JSON.parse(outcome.body) as { data: { url: string; rows: { accounts: number; contacts: number } } };

  // 4. The file.
  const download = await fetch(data.url);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const expectedLines = N * Math.max(C, 1) + 1;
  if (data.rows.accounts !== N || data.rows.contacts !== N * C || lines !== expectedLines) {
    throw new Error(
      `The export has ${data.rows.accounts} accounts, ${data.rows.contacts} contact rows and ${lines} lines; expected ${N}, ${N * C} and ${expectedLines}`,
    );
  }
  const toMB = (mib: number) => round((mib * 2 ** 20) / MB, 0);
  console.log(
    JSON.stringify({
      accounts: N,
      contactsPerAccount: C,
      rows: data.rows,
      fileMB: round(bytes / MB),
      export: {
        cpuSeconds: round(outcome.cpuMs / 1000, 2),
        handlerSeconds: round(outcome.handlerMs / 1000, 2),
        peakRssMB: toMB(outcome.peakRssMiB),
        rssAfterImportMB: toMB(outcome.rssAfterImportMiB),
        largestSampleMB: toMB(outcome.peakSampledMiB),
        atLargestSampleMB: Object.fromEntries(Object.entries(outcome.atPeakMiB).map(([k, v]) => [k, toMB(v)])),
        importMs: round(outcome.importMs, 0),
        rssEverySecondMiB: outcome.rssTimelineMiB,
      },
      workflow: {
        parts,
        partMB: round(partBytes / parts / MB, 2),
        encodeCpuMsPerPart: round(encodeMs / parts, 1),
        writeSeconds: round(writeS, 1),
      },
    }),
  );
} finally {
  await stack.stop();
}
