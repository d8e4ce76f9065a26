/**
 * Figures "results" (docs/results.md): results as they arrive, each budget
 * beside its floor measured in the same run.
 *
 * 1. Launch answered → first account readable: a test key's campaign of
 *    `launchAccounts` accounts (the same state machine, batch size and
 *    FindContacts as live; the test warehouse is computed from the IDs, so no
 *    warehouse import), launched through the API; from the moment the
 *    enrich answer is received, the attempt's sequence head is read in this
 *    process every millisecond until it holds a seq (the figure's resolution: at
 *    10 ms the poll alone could put it past a budget it sits at). Budget: ≤ the time of one
 *    workflow batch; floor: the wall time of the first FindContactsBatch
 *    invocation to finish (the batch whose accounts were readable first).
 * 2. A results page of 1,000 accounts (`POST /v1/campaigns/results`, limit
 *    1,000, a whole stored part): bytes read (DynamoDB and S3 response
 *    bytes, through the local API) and the CPU of its handler, the bundled
 *    function warm in a Node process of its own as a Lambda container runs
 *    it (bench/children/export-lambda.mjs `blocks`), against reading the
 *    same result object bare in that same process (one GetObject through
 *    the bundle's ResultStore into a reused buffer, as the page reads it), in
 *    alternating blocks, each after a full garbage collection, median of
 *    `pageRuns` blocks' ratios. The same pair timed in this process
 *    (bench/lib/in-process.ts, bench/lib/gc.ts), where the whole local
 *    stack's heap is collected, is reported beside it (bench/README.md "The
 *    page figures and garbage collection"), and so are the system share of
 *    each CPU and a 10-account page timed the same way (the same calls and
 *    part read, a small answer: what the page costs beyond its part without
 *    its answer, bench/README.md "Where the page's CPU goes (s53)"). Budget ≤ 1.2 × each.
 * 3. A 20 s long poll on an idle `enriching` campaign (nothing after
 *    `afterSeq`): the DynamoDB and S3 reads its wait adds to the same request
 *    unwaited (≤ 21; the rate limiter's lease reads in neither), and this process's CPU over the 20 s against the same
 *    20 s with no request (no busy loop: ≤ the idle CPU + 0.2 CPU-s), each
 *    window after a full garbage collection.
 * 4. and 5. Streaming a whole result (`POST /v1/campaigns/results/stream`,
 *    JSON Lines, to `end`): the bundled CampaignsResultsStream handler
 *    in its own Node process (bench/children/export-lambda.mjs, as Lambda
 *    runs it: the body written into a response stream as the runtime's
 *    response streaming takes it), peak RSS of the large result
 *    (`streamLarge` accounts × 10 contacts) against a result a tenth of its
 *    size (≤ 1.2 ×: flat; the median of 3 runs each, interleaved), and its
 *    CPU-seconds (best of the 3) against the CSV export of the same result by
 *    the bundled CampaignsExport handler in the same way (≤ 1.5 ×). Full run: 100,000 accounts (the 1,000,000-row export) against
 *    10,000; a quick run says its sizes.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { customAlphabet } from 'nanoid';
import { apiKeys, campaigns, organizations, results as resultStore, sequence } from '../../lib/root';
import { resultPartKey, resultsPrefix } from '../../lib/results/parts';
import { campaignResultsOperation, streamCampaignResultsOperation } from '../../lib/exports/schema';
import { newCampaignId } from '../../lib/ids';
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { expectOk, post, postCounted, PATHS } from '../lib/api';
import { benchAccount, benchEnrichedCampaign, benchOrganization } from '../lib/fixtures';
import { buildBundle } from '../lib/bundle';
import { runExportLambda, runLambdaBlocks, runLambdaOnce } from '../lib/children';
import { median, round, sortedRounded } from '../lib/stats';
import { addSummaries, formatTop, formatTopFrames, summarizeProfile, type CpuProfile } from '../lib/cpu-profile';
import { writeCampaign } from './privacy';
import { inProcessOperation } from '../lib/in-process';
import { asStandardLambdaEnvironment } from '../../infra/local/lambda-context';
import { collectGarbage, timedBlock } from '../lib/gc';
import { PREFETCH_PARTS } from '../../lib/exports/prefetch';
import { ENRICHMENT_BATCH_SIZE } from '../../lib/enrichment/workflow';
import { functionIdOf } from '../../infra/routes';

/** How often figure 1 reads the sequence head (ms): its resolution (the figure sits at its floor, one batch's time). */
const HEAD_POLL_MS = 1;

const TMP_DIR = path.join(import.meta.dirname, '..', 'tmp');
const PAGE = 1_000;
/** Accounts of the page timed beside it: the same calls and part read, an answer a hundredth the size. */
const SMALL_PAGE = 10;
/** The page's function (infra/routes.ts). */
const PAGE_ENTRY = 'functions/campaigns-results.ts';
/**
 * Calls of one timed block (page or bare read), alternating: long enough that the garbage collection one block
 * leaves behind, which runs during the next, is a small share of either (with 4 the blocks' ratios spread 0.2–6 ×
 * under load).
 */
const PAGE_BLOCK = 10;
/** Rounds of the page's child run again with its blocks profiled (where its CPU goes). */
const PROFILED_ROUNDS = 3;
const LONG_POLL_SECONDS = 20;
/** Runs of each streamed result (small and large, interleaved): the peak RSS figure is each one's median. */
const STREAM_RUNS = 3;
/** A long poll looks at the sequence head once a second: 20 looks and the first read (docs/results.md). */
const LONG_POLL_READS = 21;
/** CPU a 20 s wait may add to this process's idle CPU (CPU-s): more would be a busy loop. */
const BUSY_LOOP_SLACK_S = 0.2;
const attemptIdOf = customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21);
const n = (v: number) => Math.round(v).toLocaleString('en-US');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuS = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};
const isRead = (call: CallRecord) => /^(Get|BatchGet|Query|Scan|TransactGet)/.test(call.command) || call.command === 'GetObject';
const bytesOf = (calls: readonly CallRecord[]) => calls.reduce((sum, call) => sum + (call.bytes ?? 0), 0);

/** Options of {@link runResults}. */
export interface ResultsOptions {
  /** Accounts of the launched test campaign (figure 1). */
  launchAccounts: number;
  /** Accounts of the large streamed and exported result (10 contacts each); the small one is a tenth. */
  streamLarge: number;
  /** Pages timed for figure 2. */
  pageRuns: number;
  quick: boolean;
}

export async function runResults(results: Results, stack: BenchStack, options: ResultsOptions): Promise<void> {
  const group = 'results';
  const mode = options.quick ? ' (quick sizes)' : '';

  // 1. Launch answered → first account readable.
  {
    const live = await benchOrganization('Bench results launch', 0);
    const twin = await organizations().testTwin(live.organizationId);
    const testKey = await apiKeys().create(twin.id);
    const N = options.launchAccounts;
    const ids = Array.from({ length: N }, (_, i) => `test_found_${i}`);
    const campaignId = expectOk(
      await post<{ id: string }>(stack, PATHS.create, testKey, JSON.stringify({ name: `Results launch ${n(N)}`, accountIds: ids })),
      'create',
    ).id;
    const invocationsBefore = stack.ledger.invocations.length;
    const enrich = await post(stack, PATHS.enrich, testKey, { campaignId });
    const answeredAt = performance.now();
    if (enrich.status !== 200) throw new Error(`enrich answered ${enrich.status} ${JSON.stringify(enrich.error)}`);
    const attemptId = (await campaigns().get(twin.id, campaignId))?.attempt?.id;
    if (!attemptId) throw new Error('The launched test campaign has no attempt');
    let readableAt = 0;
    let firstSeqs = 0;
    for (const deadline = Date.now() + 10 * 60_000; ;) {
      firstSeqs = await sequence().lastSeq(campaignId, attemptId);
      if (firstSeqs > 0) {
        readableAt = performance.now();
        break;
      }
      if (Date.now() > deadline) throw new Error('No account of the launched campaign became readable');
      await sleep(HEAD_POLL_MS);
    }
    const findContacts = () => stack.ledger.invocations.slice(invocationsBefore).filter((inv) => inv.kind === 'WorkflowFindContacts');
    for (const deadline = Date.now() + 5 * 60_000; findContacts().length === 0;) {
      if (Date.now() > deadline) throw new Error('No FindContactsBatch invocation finished');
      await sleep(10);
    }
    const batch = findContacts()[0]!;
    const valueS = (readableAt - answeredAt) / 1000;
    results.add({
      group,
      name: `launch answered → first account readable, ${n(N)}-account campaign, local`,
      value: valueS,
      unit: 's',
      budget: { op: '<=', limit: round(batch.wallSeconds, 3), text: `≤ one workflow batch (${round(batch.wallSeconds, 2)} s)` },
      floor: { value: round(batch.wallSeconds, 3), unit: 's', what: 'the first FindContactsBatch to finish, its wall time' },
      extra: {
        'ratio to the batch': round(valueS / batch.wallSeconds, 2),
        'head read every (ms)': HEAD_POLL_MS,
        'seqs readable then': firstSeqs,
        'enrich response (s)': round(enrich.ms / 1000, 2),
      },
      note: `a test key's campaign${mode}: the same workflow and batches as live, the test warehouse computed from the IDs`,
    });
    // Let the campaign finish before the next figures share the machine with it.
    for (const deadline = Date.now() + 10 * 60_000; (await campaigns().get(twin.id, campaignId))?.status === 'enriching';) {
      if (Date.now() > deadline) throw new Error('The launched test campaign never finished');
      await sleep(200);
    }
  }

  // Stored results: a large and a small enriched campaign, readable through the sequence as FindContacts leaves them.
  const { organizationId, apiKey } = await benchOrganization('Bench results', 10_000_000, 10_000_000);
  const large = options.streamLarge;
  const small = Math.max(PAGE, Math.round(large / 10));
  const largeId = await writeCampaign(organizationId, 'Results large', large);
  const smallId = await writeCampaign(organizationId, 'Results small', small);

  // 2. A results page of 1,000 accounts against reading its result object bare.
  {
    const record = await campaigns().get(organizationId, largeId);
    const partKey = resultPartKey(resultsPrefix(organizationId, largeId, record!.attempt!.id), 0);
    // The bare read takes the page's own path: into a buffer reused from read to read (lib/exports/prefetch.ts `prefetchedParts`).
    let reused = Buffer.alloc(0);
    const into = (bytes: number) => (reused.length >= bytes ? reused : (reused = Buffer.allocUnsafeSlow(bytes)));
    const page: { bytes: number; reads: number }[] = [];
    const bare: { bytes: number; reads: number }[] = [];
    // Bytes and reads: the page through the local API, its calls recorded.
    for (let run = 0; run < 3; run++) {
      const reply = await postCounted(stack, campaignResultsOperation.path, apiKey, { campaignId: largeId, limit: PAGE });
      if (reply.status !== 200 || reply.data.accounts.length !== PAGE)
        throw new Error(`results answered ${reply.status}: ${JSON.stringify(reply.error)}`);
      const { scope } = await stack.inScope('bare result object', () => resultStore().readPart(partKey, into));
      page.push({ bytes: bytesOf(reply.scope.calls), reads: reply.scope.calls.filter(isRead).length });
      bare.push({ bytes: bytesOf(scope.calls), reads: scope.calls.filter(isRead).length });
    }
    const pageBytes = median(page.map((p) => p.bytes));
    const bareBytes = median(bare.map((p) => p.bytes));
    results.add({
      group,
      name: `results page of ${n(PAGE)} accounts: bytes read against its result object read bare`,
      value: pageBytes / bareBytes,
      unit: '×',
      budget: { op: '<=', limit: 1.2, text: '≤ 1.2 × the object bare' },
      floor: { value: bareBytes, unit: 'B', what: 'GetObject of the page’s result part' },
      extra: {
        'page bytes read': pageBytes,
        'page reads': median(page.map((p) => p.reads)),
        'bare reads': median(bare.map((p) => p.reads)),
      },
    });
    // CPU: the handler invoked in this process as Lambda invokes it (bench/lib/in-process.ts: no local HTTP server
    // writing the answer, no client reading it in this process), against the bare read, in alternating blocks of
    // PAGE_BLOCK each (a block's garbage collection is charged to it, not to the other's next call).
    const operation = await asStandardLambdaEnvironment(() =>
      inProcessOperation(campaignResultsOperation.path, apiKey, { campaignId: largeId, limit: PAGE }),
    );
    const blocks: { page: number; bare: number }[] = [];
    // Major collections that fell in each kind of block (bench/lib/gc.ts `majorCollections`), reported beside the figure.
    const majorsIn = { page: [] as number[], bare: [] as number[] };
    await asStandardLambdaEnvironment(async () => {
      // Each block starts after a full collection: the garbage the other block or an earlier figure left is not
      // charged to it (bench/lib/gc.ts).
      const pageBlock = async () => {
        const block = await timedBlock(PAGE_BLOCK, operation.prepare);
        majorsIn.page.push(block.majors);
        return block.cpuS;
      };
      const bareBlock = async () => {
        const block = await timedBlock(PAGE_BLOCK, () => () => resultStore().readPart(partKey, into));
        majorsIn.bare.push(block.majors);
        return block.cpuS;
      };
      // The first round warms both paths; the order alternates.
      for (let run = 0; run < options.pageRuns + 1; run++) {
        const block = run % 2 ? { page: await pageBlock(), bare: await bareBlock() } : { bare: await bareBlock(), page: await pageBlock() };
        if (run > 0) blocks.push(block);
      }
    });
    const pageCpu = median(blocks.map((b) => b.page));
    const bareCpu = median(blocks.map((b) => b.bare));
    // The budgeted figure: the bundled handler in a Node process of its own, where only the function lives, as a warm
    // Lambda container runs it, against the same part read bare in that same process through the bundle's own S3
    // client (bench/README.md "The page figures and garbage collection": in this process the figure mostly counts
    // V8's full collections of the whole local stack's heap).
    const pageBundle = await buildBundle(
      'CampaignsResultsPage',
      {
        contents:
          `export { handler } from './${PAGE_ENTRY.replace(/\.ts$/, '')}';\n` +
          "import { results } from './lib/root';\n" +
          'export const readPart = (key: string, into: (bytes: number) => Buffer) => results().readPart(key, into);\n',
      },
      path.join(TMP_DIR, 'bundles'),
    );
    // Blocks of pages of `limit` accounts interleaved with the part read bare, in the page bundle's own process.
    const pageBlocks = (limit: number) =>
      runLambdaBlocks({
        bundle: pageBundle.file,
        apiKey,
        functionId: functionIdOf(PAGE_ENTRY),
        path: campaignResultsOperation.path,
        body: { campaignId: largeId, limit },
        blocks: { runs: options.pageRuns, size: PAGE_BLOCK, partKey },
      });
    const { outcome: child, stderr: childLog } = await pageBlocks(PAGE).catch((error: Error) => {
      throw new Error(`The page's child process failed: ${error.message}`);
    });
    if (child.rounds.length !== options.pageRuns) throw new Error(`The page's child measured no blocks\n${childLog}`);
    const childPage = median(child.rounds.map((r) => r.page.cpuMs));
    const childBare = median(child.rounds.map((r) => r.bare.cpuMs));
    // The same child with a page of SMALL_PAGE accounts: the same DynamoDB calls, the same whole part read, an answer
    // of a hundredth the size. Beside the figure: what the page costs beyond its part without its answer (bench/README.md
    // "Where the page's CPU goes (s53)").
    const { outcome: smallChild } = await pageBlocks(SMALL_PAGE);
    const smallPage = median(smallChild.rounds.map((r) => r.page.cpuMs));
    const smallBare = median(smallChild.rounds.map((r) => r.bare.cpuMs));
    results.add({
      group,
      name: `results page of ${n(PAGE)} accounts: CPU against its result object read bare`,
      value: median(child.rounds.map((r) => r.page.cpuMs / r.bare.cpuMs)),
      unit: '×',
      budget: { op: '<=', limit: 1.2, text: '≤ 1.2 × the object bare' },
      floor: {
        value: round(childBare, 1),
        unit: 'ms',
        what: `GetObject of the page’s result part into a reused buffer (the page’s read) in the handler’s own process, median of ${options.pageRuns} blocks of ${PAGE_BLOCK}`,
      },
      extra: {
        'page CPU (ms)': round(childPage, 1),
        'ratio of the medians': round(childPage / childBare, 2),
        'major collections per block of 10 (median; page, bare)': `${median(child.rounds.map((r) => r.page.majors))}, ${median(child.rounds.map((r) => r.bare.majors))}`,
        'ratio per block (sorted)': sortedRounded(child.rounds.map((r) => r.page.cpuMs / r.bare.cpuMs)),
        'answer bytes': child.answerBytes,
        'system CPU per call (median; page, bare) (ms)': `${round(median(child.rounds.map((r) => r.page.sysMs)), 1)}, ${round(median(child.rounds.map((r) => r.bare.sysMs)), 1)}`,
        [`a ${SMALL_PAGE}-account page (the same calls and part read): page / bare CPU (ms)`]: `${round(smallPage, 1)} / ${round(smallBare, 1)}`,
        [`a ${SMALL_PAGE}-account page: ratio (median of blocks)`]: round(
          median(smallChild.rounds.map((r) => r.page.cpuMs / r.bare.cpuMs)),
          2,
        ),
        'in the bench process: ratio (median of blocks)': round(median(blocks.map((b) => b.page / b.bare)), 2),
        'in the bench process: page / bare CPU (ms)': `${round(pageCpu * 1000, 1)} / ${round(bareCpu * 1000, 1)}`,
        'in the bench process: major collections per block (median; page, bare)': `${median(majorsIn.page)}, ${median(majorsIn.bare)}`,
      },
      note:
        'the median of the blocks’ ratios; the bundled handler warm in a Node process of its own (bench/children/export-lambda.mjs ' +
        '`blocks`; auth, campaign and organization, suppression versions, sequence head and ranges, the part, the answer built), ' +
        'interleaved with the bare read in the same process; the S3 server’s serving is in neither (it runs in the bench process). ' +
        'The same pair timed in the bench process (the whole local stack’s heap) is beside it',
    });
    // Where the page's CPU goes: the same child again, its blocks profiled (not timed: profiling slows them), the
    // page's blocks and the bare reads' apart.
    const profileStem = path.join(TMP_DIR, 'results-page');
    for (const file of readdirSync(TMP_DIR)) if (file.startsWith('results-page-')) rmSync(path.join(TMP_DIR, file));
    const { stdout: gcTrace } = await runLambdaOnce({
      bundle: pageBundle.file,
      apiKey,
      functionId: functionIdOf(PAGE_ENTRY),
      path: campaignResultsOperation.path,
      body: { campaignId: largeId, limit: PAGE },
      blocks: { runs: PROFILED_ROUNDS, size: PAGE_BLOCK, partKey, profile: profileStem },
    });
    writeFileSync(`${profileStem}-gc.log`, gcTrace);
    const profiledKind = (kind: 'page' | 'bare') =>
      addSummaries(
        readdirSync(TMP_DIR)
          .filter((file) => file.startsWith(`results-page-${kind}-`))
          .map((file) =>
            summarizeProfile(JSON.parse(readFileSync(path.join(TMP_DIR, file), 'utf8')) as CpuProfile, {
              [`file://${pageBundle.file}`]: `${pageBundle.file}.map`,
            }),
          ),
      );
    const pageProfile = profiledKind('page');
    const bareProfile = profiledKind('bare');
    const calls = PROFILED_ROUNDS * PAGE_BLOCK;
    results.note(
      group,
      `Results page of ${n(PAGE)} accounts, ${calls} pages profiled in the handler’s own process (its child, each block with its full collection before it): ${formatTop(pageProfile, 10)}.`,
    );
    results.note(group, `Its top lines: ${formatTopFrames(pageProfile, 12)}.`);
    results.note(group, `The same part read bare ${calls} times there: ${formatTop(bareProfile, 8)}.`);
    results.note(group, `Its top lines: ${formatTopFrames(bareProfile, 6)}.`);
    results.note(
      group,
      'What the page does beyond the bare read: 4 small DynamoDB reads in two waves (the campaign with its organization, ' +
        'which verifies the API key, beside the suppression sets’ versions; then the sequence head beside the ranges’ Query); per account its stored head and each delivered contact’s stored JSON bytes copied ' +
        'into one buffer (ResultPartReader.writeItem, lib/results/json.ts JsonBytes), decoded once as the answer’s `accounts` ' +
        'text, which the envelope writes as it is (JsonText, lib/http/envelope.ts): nothing is parsed or encoded again, no ' +
        'string is made per contact, and the part and page buffers are reused from page to page. Before CEP4 the page parsed ' +
        '11,000 stored arrays and JSON.stringify-ed the ~3.2 MB answer: 3.6–5 × the bare read.',
    );
  }

  // 3. A 20 s long poll on an idle enriching campaign.
  {
    const campaignId = newCampaignId();
    const attemptId = `att_${attemptIdOf()}`;
    const enriched = benchEnrichedCampaign({
      organizationId,
      campaignId,
      attemptId,
      name: 'Results idle',
      accounts: 2 * PAGE,
      contacts: 10,
    });
    const { completedAt: _c, resultsExpireAt: _r, results: _m, ...enriching } = enriched;
    await campaigns().create({ ...enriching, status: 'enriching' });
    const batch = Array.from({ length: PAGE }, (_, i) => {
      const { status: _status, ...account } = benchAccount(`acc_idle_${campaignId.slice(5, 11)}_${i}`, i, 10);
      return account;
    });
    await resultStore().putPart(resultsPrefix(organizationId, campaignId, attemptId), 0, batch);
    const given = await sequence().assign(
      {
        organizationId,
        campaignId,
        attemptId,
        batchIndex: 0,
        accounts: PAGE,
        found: PAGE,
        expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      },
      [],
      () => [],
    );
    if (!given.ok) throw new Error('The idle campaign’s first batch could not be made readable');
    // Both windows start after a full collection: the garbage of the figures before (a 100,000-account result
    // written, pages read) is not charged to whichever window's allocations happen to start its collection.
    await collectGarbage();
    const idleCpu = process.cpuUsage();
    await sleep(LONG_POLL_SECONDS * 1000);
    const idleS = cpuS(idleCpu);
    await collectGarbage();
    const pollCpu = process.cpuUsage();
    const reply = await postCounted(stack, campaignResultsOperation.path, apiKey, {
      campaignId,
      afterSeq: PAGE,
      waitSeconds: LONG_POLL_SECONDS,
    });
    const pollS = cpuS(pollCpu);
    if (reply.status !== 200 || reply.data.accounts.length !== 0)
      throw new Error(`the long poll answered ${reply.status} with ${reply.data?.accounts?.length} accounts`);
    // The rate limiter's lease reads are left out of both counts: whether a request reads its lease depends on where
    // it falls in the lease's window (docs/limits.md "How the rate is counted"), not on the wait (counted, one full run
    // gave 22 against 20 the run before for the same wait).
    const waitRead = (call: CallRecord) => isRead(call) && call.kind !== 'limiter';
    const reads = reply.scope.calls.filter(waitRead);
    // The same request without waiting: what any answer reads (auth, the campaign, the sequence head).
    const unwaited = await postCounted(stack, campaignResultsOperation.path, apiKey, { campaignId, afterSeq: PAGE });
    if (unwaited.status !== 200) throw new Error(`the page answered ${unwaited.status}`);
    const baseReads = unwaited.scope.calls.filter(waitRead).length;
    results.add({
      group,
      name: `a ${LONG_POLL_SECONDS} s long poll on an idle campaign: reads the wait adds`,
      value: reads.length - baseReads,
      unit: 'reads',
      budget: { op: '<=', limit: LONG_POLL_READS, text: `≤ ${LONG_POLL_READS}` },
      floor: { value: baseReads, unit: 'reads', what: 'the same request with waitSeconds 0' },
      extra: {
        'reads of the whole request': reply.scope.calls.filter(isRead).length,
        'of which the rate limiter’s lease': reply.scope.calls.filter((call) => isRead(call) && call.kind === 'limiter').length,
        'answered after (s)': round(reply.ms / 1000, 1),
      },
      note:
        'the wait reads the sequence head once a second and the campaign once when it ends; the request’s own reads ' +
        '(API key, campaign, head) are any page’s, counted in the floor; the rate limiter’s lease reads are in neither',
    });
    results.add({
      group,
      name: `a ${LONG_POLL_SECONDS} s long poll on an idle campaign: CPU of the server process (no busy loop)`,
      value: pollS,
      unit: 'CPU-s',
      budget: { op: '<=', limit: round(idleS + BUSY_LOOP_SLACK_S, 3), text: `≤ idle + ${BUSY_LOOP_SLACK_S} CPU-s` },
      floor: { value: round(idleS, 3), unit: 'CPU-s', what: `the same process over ${LONG_POLL_SECONDS} s with no request` },
    });
  }

  // 4 and 5. Streaming the whole result: peak RSS (large against small) and CPU against the export of the same result.
  {
    await buildBundle('CampaignsResultsStream', { entry: 'functions/campaigns-results-stream.ts' }, path.join(TMP_DIR, 'bundles'));
    await buildBundle('CampaignsExport', { entry: 'functions/campaigns-export.ts' }, path.join(TMP_DIR, 'bundles'));
    const streamBundle = path.join(TMP_DIR, 'bundles', 'CampaignsResultsStream', 'index.mjs');
    const exportBundle = path.join(TMP_DIR, 'bundles', 'CampaignsExport', 'index.mjs');
    const stream = async (campaignId: string) => {
      const { outcome, stderr } = await runLambdaOnce({
        bundle: streamBundle,
        apiKey,
        functionId: 'CampaignsResultsStream',
        path: streamCampaignResultsOperation.path,
        body: { campaignId },
        headers: { accept: 'application/jsonl' },
      });
      if (outcome.statusCode !== 200 || !outcome.bodyBytes)
        throw new Error(`The stream answered ${outcome.statusCode}: ${outcome.body}\n${stderr}`);
      return outcome;
    };
    const exported = async (campaignId: string) => {
      const { outcome, stderr } = await runExportLambda({ bundle: exportBundle, apiKey, campaignId });
      if (outcome.statusCode !== 200) throw new Error(`The export answered ${outcome.statusCode}: ${outcome.body}\n${stderr}`);
      return outcome;
    };
    // The export: best of two (the machine is shared).
    const best = async <T extends { cpuMs: number }>(fn: () => Promise<T>) => {
      const runs = [await fn(), await fn()];
      return runs.sort((a, b) => a.cpuMs - b.cpuMs)[0]!;
    };
    const atPeak = (outcome: { atPeakMiB: { heapUsed: number; external: number; arrayBuffers: number } }) =>
      [outcome.atPeakMiB.heapUsed, outcome.atPeakMiB.external, outcome.atPeakMiB.arrayBuffers].map((v) => round(v, 1)).join(' / ');
    // Peak RSS: the median of STREAM_RUNS runs of each, interleaved small and large (a run's peak depends on when its
    // garbage collections fall: one run of each spread 1.05–1.5 × on a loaded machine); CPU: the best of them.
    const smallRuns: Awaited<ReturnType<typeof stream>>[] = [];
    const largeRuns: Awaited<ReturnType<typeof stream>>[] = [];
    for (let run = 0; run < STREAM_RUNS; run++) {
      smallRuns.push(await stream(smallId));
      largeRuns.push(await stream(largeId));
    }
    const byPeak = <T extends { peakRssMiB: number }>(runs: T[]) => [...runs].sort((a, b) => a.peakRssMiB - b.peakRssMiB);
    const streamSmall = byPeak(smallRuns)[Math.floor(STREAM_RUNS / 2)]!;
    const streamLarge = byPeak(largeRuns)[Math.floor(STREAM_RUNS / 2)]!;
    const largeCpuMs = Math.min(...largeRuns.map((run) => run.cpuMs));
    // The export's figure is the floor of the CPU budget; a failed export (e.g. its 25 s deadline on a loaded machine) is noted.
    const exportLarge = await best(() => exported(largeId)).catch((error: unknown) => {
      results.note(
        group,
        `The ${n(large * 10)}-row export failed, so the stream's CPU has no floor this run: ${String(error).slice(-600)}`,
      );
      return undefined;
    });
    results.add({
      group,
      name: `streaming the whole ${n(large)}-account result: peak RSS against a ${n(small)}-account result`,
      value: streamLarge.peakRssMiB / streamSmall.peakRssMiB,
      unit: '×',
      budget: { op: '<=', limit: 1.2, text: '≤ 1.2 × (flat)' },
      floor: { value: round(streamSmall.peakRssMiB, 1), unit: 'MiB', what: `streaming the ${n(small)}-account result` },
      extra: {
        'peak RSS (MiB)': round(streamLarge.peakRssMiB, 1),
        'peak RSS of each run, large (MiB)': largeRuns.map((run) => round(run.peakRssMiB, 1)).join(' '),
        'peak RSS of each run, small (MiB)': smallRuns.map((run) => round(run.peakRssMiB, 1)).join(' '),
        'RSS after import (MiB)': round(streamLarge.rssAfterImportMiB, 1),
        'bytes streamed': streamLarge.bodyBytes ?? 0,
        'RSS once a second (MiB)': (streamLarge.rssTimelineMiB ?? []).join(' '),
        'at the peak, large: heap used / external / array buffers (MiB)': atPeak(streamLarge),
        'at the peak, small: heap used / external / array buffers (MiB)': atPeak(streamSmall),
        'small: RSS once a second (MiB)': (streamSmall.rssTimelineMiB ?? []).join(' '),
        'each second, large: largest rss / heap used / external / array buffers (MiB)': (streamLarge.memoryTimelineMiB ?? [])
          .map((second) => second.join('/'))
          .join(' '),
        ...(exportLarge ? { 'the export’s peak RSS (MiB)': round(exportLarge.peakRssMiB, 1) } : {}),
      },
      note: options.quick
        ? `quick sizes: ${n(large)} against ${n(small)} accounts (full: 100,000 against 10,000; the small one holds ${n(Math.ceil(small / ENRICHMENT_BATCH_SIZE))} result parts, more than the ${PREFETCH_PARTS + 1} the stream holds at once)`
        : undefined,
    });
    results.add({
      group,
      name: `streaming the whole ${n(large)}-account result: CPU against its ${n(large * 10)}-row export`,
      value: exportLarge ? largeCpuMs / exportLarge.cpuMs : null,
      unit: '×',
      budget: { op: '<=', limit: 1.5, text: '≤ 1.5 × the export' },
      ...(exportLarge
        ? {
            floor: { value: round(exportLarge.cpuMs / 1000, 2), unit: 'CPU-s', what: `the CSV export of the same result, its own process` },
          }
        : {}),
      extra: {
        'stream CPU-s (best of its runs)': round(largeCpuMs / 1000, 2),
        'stream wall (s)': round(streamLarge.handlerMs / 1000, 1),
      },
      note: options.quick ? `quick sizes: ${n(large)} accounts (full: 100,000, the 1,000,000-row export)` : undefined,
    });
  }
}
