/**
 * Figures "privacy" (docs/privacy.md): what erasure and suppression cost.
 *
 * 1. Erasure: an organization holding `campaigns` enriched campaigns and
 *    `rows` stored result rows (10 contacts an account, 1,000 accounts a
 *    part, written through ResultStore.putPart as FindContacts writes them);
 *    the person is one contact in every tenth campaign. The erasure job
 *    (lib/privacy/erasure.ts `runErasure`, the code the AWS queue's worker and
 *    the local stack run) is timed from start to `completed` (≤ 60 s), and
 *    every read of a stored result object is counted per key (≤ 1 each).
 * 2. Export: the same campaign of `exportRows` rows stored for two
 *    organizations, one with 10,000 suppressions in force, exported by the
 *    bundled CampaignsExport handler in its own process (bench/lib/children.ts,
 *    as `scale` measures it), CPU-seconds, the two interleaved run by run
 *    (≤ 1.1 ×). Best of three each.
 * 3. Results page: `POST /v1/campaigns/results` (a default page) on those
 *    campaigns, its handler invoked in this process as Lambda invokes it
 *    (bench/lib/in-process.ts), CPU per page in blocks of 10 pages, the two
 *    organizations' blocks in turn, each after a full garbage collection,
 *    the median of `pageRuns` blocks' ratios after one warm-up block each
 *    (≤ 1.1 ×).
 *    The vendor's erasure of another person held in every tenth campaign
 *    (lib/privacy/vendor.ts `eraseEverywhere`, what `ops privacy:erase` runs,
 *    without writing its global suppression, which would stay in force for
 *    the figures after it): the result objects it reads, against the objects
 *    that hold the person (≤ those, once each), found through the copy index
 *    the parts were written with.
 * 4. FindContacts' suppression check: the read units of the two compact sets'
 *    versions and, after a change, the sets (the organization's with 10,000
 *    entries, and the global one), once per batch, per account of a batch (≤ 0.1).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { customAlphabet } from 'nanoid';
import { ddb } from '../../lib/aws';
import * as keys from '../../lib/db/keys';
import { newCampaignId } from '../../lib/ids';
import { ENRICHMENT_BATCH_SIZE } from '../../lib/enrichment/workflow';
import { resultPartKey, resultsPrefix } from '../../lib/results/parts';
import { copyIndexTtl } from '../../lib/privacy/copies';
import { eraseEverywhere } from '../../lib/privacy/vendor';
import { hashIdentifier } from '../../lib/warehouse/identifiers';
import { runErasure } from '../../lib/privacy/erasure';
import { GLOBAL_SCOPE } from '../../lib/privacy/store';
import { timedBlock } from '../lib/gc';
import { campaigns, copyIndex, erasureJobDependencies, results, sequence, suppressions, vendorErasureDependencies } from '../../lib/root';
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { campaignResultsOperation } from '../../lib/exports/schema';
import { inProcessOperation, type InProcessOperation } from '../lib/in-process';
import { asStandardLambdaEnvironment } from '../../infra/local/lambda-context';
import { benchAccount, benchEnrichedCampaign, benchOrganization } from '../lib/fixtures';
import { buildBundle } from '../lib/bundle';
import { runExportLambda } from '../lib/children';
import { median, round, sortedRounded } from '../lib/stats';
import { formatTop, formatTopFrames, profileInProcess, summarizeProfile } from '../lib/cpu-profile';
import { pendingErasure } from '../../test/support/erasures';

/** Accounts a stored part holds (a FindContacts batch). */
const PART_ACCOUNTS = ENRICHMENT_BATCH_SIZE;
const CONTACTS = 10;
const SUPPRESSIONS = 10_000;
/** Pages of one timed block of the results page figure (as the `results` module times its page). */
const PAGE_BLOCK = 10;
const TMP_DIR = path.join(import.meta.dirname, '..', 'tmp');
const attemptIdOf = customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21);

/** Options of {@link runPrivacy}. */
export interface PrivacyOptions {
  /** Campaigns of the erasure's organization. */
  campaigns: number;
  /** Stored result rows across them. */
  rows: number;
  /** Rows of the exported campaign. */
  exportRows: number;
  /** Blocks of results pages timed per condition. */
  pageRuns: number;
}

/**
 * Writes an enriched campaign whose parts hold `accounts` accounts (first
 * contact of account 0 replaced by `person` when given), readable through
 * the sequence as FindContacts makes its batches readable.
 */
export async function writeCampaign(organizationId: string, label: string, accounts: number, person?: string): Promise<string> {
  const ttl = copyIndexTtl(new Date(), 86_400);
  const campaignId = newCampaignId();
  const attemptId = `att_${attemptIdOf()}`;
  const prefix = resultsPrefix(organizationId, campaignId, attemptId);
  const parts = Math.ceil(accounts / PART_ACCOUNTS);
  const now = Date.now();
  await campaigns().create(benchEnrichedCampaign({ organizationId, campaignId, attemptId, name: label, accounts, contacts: CONTACTS }));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < parts; index = next++) {
        const count = Math.min(PART_ACCOUNTS, accounts - index * PART_ACCOUNTS);
        const batch = Array.from({ length: count }, (_, i) => {
          const { status: _status, ...account } = benchAccount(
            `acc_${campaignId.slice(4, 10)}_${String(index * PART_ACCOUNTS + i).padStart(7, '0')}`,
            index * PART_ACCOUNTS + i,
            CONTACTS,
          );
          return account;
        });
        if (person && index === 0) batch[0]!.contacts[0] = { ...batch[0]!.contacts[0]!, email: person };
        // As FindContacts writes a live organization's part: the part, then its copy index.
        await copyIndex().record(resultPartKey(prefix, index), await results().putPart(prefix, index, batch), ttl);
        const outcome = await sequence().assign(
          {
            organizationId,
            campaignId,
            attemptId,
            batchIndex: index,
            accounts: count,
            found: count,
            expiresAt: Math.floor(now / 1000) + 86_400,
          },
          [],
          () => [],
        );
        if (!outcome.ok) throw new Error('The bench campaign batch could not be made readable');
      }
    }),
  );
  return campaignId;
}

/** Suppresses `count` random hashes (and nothing of the campaign) for the organization, 1,000 at a time. */
async function suppressRandom(organizationId: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 1_000) {
    const entries = Array.from({ length: Math.min(1_000, count - done) }, () => ({
      type: 'email' as const,
      hash: randomBytes(32).toString('hex'),
    }));
    await suppressions().suppress(organizationId, entries, 'opt_out', 'customer', new Date());
  }
}

/** `results` with each part read counted per key in `reads`. */
const countingReads = <T extends { readPart(key: string): Promise<Uint8Array> }>(results: T, reads: Map<string, number>): T => ({
  ...results,
  readPart: (key: string) => {
    reads.set(key, (reads.get(key) ?? 0) + 1);
    return results.readPart(key);
  },
});

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

export async function runPrivacy(results_: Results, stack: BenchStack, options: PrivacyOptions): Promise<void> {
  const group = 'privacy';
  const n = (v: number) => v.toLocaleString('en-US');

  // 1. Erasure of one person in an organization of `campaigns` campaigns and `rows` rows.
  {
    const { organizationId } = await benchOrganization('Bench privacy erasure');
    const person = `erased.person.${randomBytes(4).toString('hex')}@example.com`;
    // The vendor's erasure's person (1b): one contact in every tenth campaign, others than the customer's person's.
    const vendorPerson = `vendor.person.${randomBytes(4).toString('hex')}@example.com`;
    let vendorHolding = 0;
    const accountsPerCampaign = Math.ceil(options.rows / CONTACTS / options.campaigns);
    const writeStarted = performance.now();
    let holding = 0;
    let nextCampaign = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = nextCampaign++; i < options.campaigns; i = nextCampaign++) {
          const holds = i % 10 === 0;
          const vendorHolds = i % 10 === 5;
          if (holds) holding++;
          if (vendorHolds) vendorHolding++;
          await writeCampaign(organizationId, `Erasure ${i}`, accountsPerCampaign, holds ? person : vendorHolds ? vendorPerson : undefined);
        }
      }),
    );
    const writeS = (performance.now() - writeStarted) / 1000;
    const id = await pendingErasure(organizationId, person, `BENCH-${randomBytes(4).toString('hex')}`);
    const deps = erasureJobDependencies();
    const readsPerKey = new Map<string, number>();
    const counted = { ...deps, results: countingReads(deps.results, readsPerKey) };
    const started = performance.now();
    const cpu = process.cpuUsage();
    // Profiled (sampling every 1 ms: a few % of overhead) so the figure carries where its time went.
    const { result: done, profile } = await profileInProcess(() => runErasure(counted, organizationId, id));
    const seconds = (performance.now() - started) / 1000;
    const jobCpuS = cpuMs(cpu) / 1000;
    results_.note(
      group,
      `Erasure, CPU of this process by owner (DynamoDB Local and s3rver run in processes of their own: not in it): ${formatTop(summarizeProfile(profile), 8)}.`,
    );
    results_.note(group, `Erasure, busiest lines: ${formatTopFrames(summarizeProfile(profile), 6)}.`);
    if (done?.status !== 'completed') throw new Error(`The bench erasure ended ${done?.status}`);
    if (done.result!.contactsRemoved !== holding)
      throw new Error(`The erasure removed ${done.result!.contactsRemoved} rows, not ${holding}`);
    const objects = Math.ceil(accountsPerCampaign / PART_ACCOUNTS) * options.campaigns;
    results_.add({
      group,
      name: `erasure of one person: ${n(options.campaigns)} campaigns, ${n(accountsPerCampaign * CONTACTS * options.campaigns)} stored result rows, start → completed`,
      value: seconds,
      unit: 's',
      budget: { op: '<=', limit: 60, text: '≤ 60 s local' },
      extra: {
        'job CPU-s (this process, emulators included)': round(jobCpuS, 2),
        'result objects': objects,
        'objects rewritten': done.result!.resultObjectsRewritten,
        'rows removed': done.result!.contactsRemoved,
        'write of the data (s)': round(writeS, 1),
      },
    });
    results_.add({
      group,
      name: 'erasure: reads of one stored result object (most read)',
      value: Math.max(0, ...readsPerKey.values()),
      unit: 'reads',
      budget: { op: '<=', limit: 1, text: 'each object read at most once' },
      extra: { 'objects read': readsPerKey.size, 'result objects': objects },
    });

    // 1b. The vendor's erasure (`ops privacy:erase`) of the other person, over the same stored data (and whatever else
    // the run's table and bucket hold): the result parts it reads against the parts that hold the person (its floor),
    // found through the copy index. Its global suppression is left out (see below).
    {
      const vendor = vendorErasureDependencies();
      const partReads = new Map<string, number>();
      let indexS = 0;
      const countedVendor = {
        ...vendor,
        // Not the global suppression: it would stay in force for the rest of the run (the "none" baselines below and later modules).
        suppressions: { suppress: async () => [] },
        copies: {
          partsHolding: async (hashes: ReadonlySet<string>) => {
            const indexStarted = performance.now();
            const found = await vendor.copies.partsHolding(hashes);
            indexS = (performance.now() - indexStarted) / 1000;
            return found;
          },
        },
        results: countingReads(vendor.results, partReads),
      };
      const vendorStarted = performance.now();
      const report = await eraseEverywhere(countedVendor, [hashIdentifier({ type: 'email', value: vendorPerson })!]);
      const vendorS = (performance.now() - vendorStarted) / 1000;
      if (report.contactsRemoved !== vendorHolding)
        throw new Error(`The vendor's erasure removed ${report.contactsRemoved} rows, not ${vendorHolding}`);
      results_.add({
        group,
        name: `vendor's erasure of one person held in ${n(vendorHolding)} result objects of ${n(objects)} stored: result objects read`,
        value: [...partReads.values()].reduce((sum, reads) => sum + reads, 0),
        unit: 'reads',
        budget: { op: '<=', limit: vendorHolding, text: 'the objects holding the person, once each' },
        floor: { value: vendorHolding, unit: 'reads', what: 'the result objects that hold the person' },
        extra: {
          'seconds, start → done (warehouse, index, rewrites)': round(vendorS, 2),
          'seconds in the copy index lookup': round(indexS, 3),
          'stored result objects of the organization': objects,
        },
      });
    }
  }

  // 2 and 3. Export and results page, with none and with 10,000 suppressions.
  {
    // Two organizations with the same stored result, one with the 10,000 suppressions: every run of one is
    // followed by the same run of the other, so the shared machine's load weighs on both alike.
    const plain = await benchOrganization('Bench privacy export', options.exportRows, options.exportRows);
    const suppressed = await benchOrganization('Bench privacy export suppressed', options.exportRows, options.exportRows);
    const accounts = Math.ceil(options.exportRows / CONTACTS);
    const plainCampaign = await writeCampaign(plain.organizationId, 'Export', accounts);
    const suppressedCampaign = await writeCampaign(suppressed.organizationId, 'Export', accounts);
    const { organizationId } = suppressed;
    await suppressRandom(organizationId, SUPPRESSIONS);
    await buildBundle('CampaignsExport', { entry: 'functions/campaigns-export.ts' }, path.join(TMP_DIR, 'bundles'));
    const bundle = path.join(TMP_DIR, 'bundles', 'CampaignsExport', 'index.mjs');
    const exportCpuS = async (apiKey: string, campaignId: string) => {
      const { outcome, stdout, stderr } = await runExportLambda({ bundle, apiKey, campaignId });
      // Its log lines (stdout) name the cause of a 500.
      if (outcome.statusCode !== 200)
        throw new Error(`The export answered ${outcome.statusCode}: ${outcome.body}\n${stdout.slice(-4000)}\n${stderr}`);
      return outcome.cpuMs / 1000;
    };
    // The page's handler invoked in this process as Lambda invokes it (bench/lib/in-process.ts), as the `results`
    // module measures its page: the local HTTP server's writing of the answer and the client's parse of it are not
    // the server's CPU, and a single page per sample let whichever page a collection fell in set the figure.
    const pageOf = (apiKey: string, campaignId: string) =>
      asStandardLambdaEnvironment(() => inProcessOperation(campaignResultsOperation.path, apiKey, { campaignId }));
    const plainPage = await pageOf(plain.apiKey, plainCampaign);
    const suppressedPage = await pageOf(suppressed.apiKey, suppressedCampaign);
    // Major collections that fell in each organization's blocks (bench/lib/gc.ts), reported beside the figure.
    const majorsIn = { none: [] as number[], suppressed: [] as number[] };
    // After a full collection: the garbage of the block before (the other organization's, in turn) and of the
    // exports is not charged to this one (bench/lib/gc.ts `timedBlock`).
    const pageBlockMs = (operation: InProcessOperation) =>
      asStandardLambdaEnvironment(async () => {
        const block = await timedBlock(PAGE_BLOCK, operation.prepare);
        (operation === plainPage ? majorsIn.none : majorsIn.suppressed).push(block.majors);
        return block.cpuS * 1000;
      });
    // Best of 3 exports each, interleaved.
    const exportsNone: number[] = [];
    const exportsSuppressed: number[] = [];
    for (let run = 0; run < 3; run++) {
      exportsNone.push(await exportCpuS(plain.apiKey, plainCampaign));
      exportsSuppressed.push(await exportCpuS(suppressed.apiKey, suppressedCampaign));
    }
    const exportNone = Math.min(...exportsNone);
    const exportSuppressed = Math.min(...exportsSuppressed);
    // One warm-up block each (a process keeps the policy it built, lib/privacy/deliverable.ts), then blocks of
    // PAGE_BLOCK pages, the two organizations' in turn, the order alternating; the figure is the median of the
    // blocks' ratios.
    const blocks: { none: number; suppressed: number }[] = [];
    for (let run = 0; run < options.pageRuns + 1; run++) {
      const block =
        run % 2
          ? { none: await pageBlockMs(plainPage), suppressed: await pageBlockMs(suppressedPage) }
          : { suppressed: await pageBlockMs(suppressedPage), none: await pageBlockMs(plainPage) };
      if (run > 0) blocks.push(block);
    }
    const pageNone = median(blocks.map((b) => b.none));
    const pageSuppressed = median(blocks.map((b) => b.suppressed));
    results_.add({
      group,
      name: `export of ${n(options.exportRows)} rows with ${n(SUPPRESSIONS)} suppressions in force: CPU against none`,
      value: exportSuppressed / exportNone,
      unit: '×',
      budget: { op: '<=', limit: 1.1, text: '≤ 1.1 × the same export with none' },
      floor: { value: round(exportNone, 2), unit: 'CPU-s', what: 'the same export, no suppression (best of 3, interleaved)' },
      extra: { 'CPU-s with suppressions': round(exportSuppressed, 2) },
    });
    results_.add({
      group,
      name: `results page with ${n(SUPPRESSIONS)} suppressions: server CPU against none`,
      value: median(blocks.map((b) => b.suppressed / b.none)),
      unit: '×',
      budget: { op: '<=', limit: 1.1, text: '≤ 1.1 × the same page with none' },
      floor: {
        value: round(pageNone, 2),
        unit: 'ms',
        what: `the same page, no suppression (the handler in process; median of ${options.pageRuns} blocks of ${PAGE_BLOCK}, interleaved)`,
      },
      extra: {
        'ms with suppressions': round(pageSuppressed, 2),
        'ratio of the medians': round(pageSuppressed / pageNone, 2),
        'major collections per block of 10 (median; none, suppressed)': `${median(majorsIn.none)}, ${median(majorsIn.suppressed)}`,
        'ratio per block (sorted)': sortedRounded(blocks.map((b) => b.suppressed / b.none)),
      },
      note: 'the median of the blocks’ ratios; each page the handler invoked in this process as Lambda invokes it (auth, campaign, sequence, the suppression sets’ versions, the part, the answer’s body built), the wait for the S3 server (its own process) included',
    });

    // 4. What FindContacts reads per batch for the check, at most: the two compact sets' versions, then, after a
    // change, the sets themselves (lib/privacy/deliverable.ts `cachedSuppressionPolicies`), strongly consistent.
    const setRead = async (projection: string) => {
      const names = Object.fromEntries(projection.split(', ').map((name) => [`#${name}`, name]));
      const answer = await ddb.send(
        new BatchGetCommand({
          RequestItems: {
            [stack.tableName]: {
              Keys: [keys.suppressionSet(organizationId), keys.suppressionSet(GLOBAL_SCOPE)],
              ProjectionExpression: Object.keys(names).join(', '),
              ExpressionAttributeNames: names,
              ConsistentRead: true,
            },
          },
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      return (answer.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    };
    const versionUnits = await setRead('pk, version');
    const units = versionUnits + (await setRead('pk, version, hashes'));
    results_.add({
      group,
      name: `FindContacts suppression check with ${n(SUPPRESSIONS)} suppressions: read units per enriched account`,
      value: units / ENRICHMENT_BATCH_SIZE,
      unit: 'RU',
      budget: { op: '<=', limit: 0.1, text: '≤ 0.1 read units' },
      extra: { 'read units per batch': units, 'of which the versions': versionUnits, 'accounts per batch': ENRICHMENT_BATCH_SIZE },
      note: 'at most: the versions of the two sets, then the sets after a change (unchanged sets: the versions only)',
    });
  }
}
