/**
 * Export campaign results as CSV (docs/csv.md;
 * docs/csv.md). The stored result parts hold the rows already encoded
 * (lib/results/parts.ts), so the export downloads them in order, a few
 * parts ahead of the one being written, filters and concatenates their bytes
 * (lib/exports/rows.ts) into a multipart S3 upload with a bounded queue:
 * memory stays flat whatever the campaign size, and a failed upload is
 * aborted and leaves no object behind. Every request writes a fresh object
 * and presigns a fresh URL.
 */
import { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { nanoid } from 'nanoid';
import { emitMetrics, logger } from '../observability';
import { withQuotaUse, type QuotaUse } from '../http/rate-limit';
import { NoEligibleAccountsError, NotFoundError, ResultsExpiredError, ResultsNotReadyError } from '../errors';
import { statusAt } from '../campaigns/model';
import type { CampaignStore } from '../campaigns/store';
import { resultsPrefix, type ResultStore } from '../results/parts';
import type { ContactSelection } from '../results/csv';
import { deliverable, deliverAll, type DeliveryPolicyOf } from '../results/deliverable';
import { csvChunks, type ExportCounts } from './rows';
import type { ExportCampaignInput } from './schema';
import type { ExportResult } from './docs';
import { objectKeys } from '../objects';

/** What an export needs. */
export interface ExportDependencies {
  campaigns: CampaignStore;
  results: ResultStore;
  s3: S3Client;
  bucketName: string;
  /** Lifetime of the presigned URL (seconds). */
  urlTtlSeconds: number;
  /**
   * Counts one export against the organization's exports per hour (docs/limits.md), once the campaign can be
   * exported; throws RateLimitedError (429 `rate_limited`, `policy: "exports"`) past it. None: no limit.
   */
  quota?: (organizationId: string) => Promise<QuotaUse>;
  /** What may be delivered beyond the caller's selection (lib/results/deliverable.ts); none: everything stored. */
  deliveryPolicy?: DeliveryPolicyOf;
  /**
   * Writes the request's audit entry (docs/audit.md): the export changes no item of the table, so its entry is
   * written once the file and its URL exist, before the answer; a failed write fails the export (its quota use is
   * given back). None: not audited.
   */
  auditEntry?: (campaignId: string) => Promise<void>;
}

/** Object key of an export file (lib/objects.ts). */
export const exportObjectKey = objectKeys.export;

/** A download file name from the campaign name and date, e.g. `q4-targets-2026-11-22.csv`. */
export function exportFileName(campaignName: string, at: Date): string {
  const slug = campaignName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `${slug || 'campaign'}-${at.toISOString().slice(0, 10)}.csv`;
}

/** `Content-Disposition` with an ASCII name and the UTF-8 original (RFC 6266). */
function contentDisposition(campaignName: string, at: Date): string {
  const ascii = exportFileName(campaignName, at);
  // Lone surrogates cannot be encoded: make the name well formed first.
  const original = `${
    campaignName
      .toWellFormed()
      .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ')
      .trim() || 'campaign'
  } ${at.toISOString().slice(0, 10)}.csv`;
  // RFC 8187 attr-chars exclude ' ( ) *, which encodeURIComponent leaves as they are.
  const encoded = encodeURIComponent(original).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Result parts the results page and stream read ahead of the one being consumed, into reused buffers: one (each a
 * batch's, ~6 MB for 1,000 accounts × 10 contacts). The stream's answer, not the reads, sets its pace: in AWS a
 * streamed response past its first 6 MB is bandwidth-capped (AWS Lambda docs, "Bandwidth limits for response
 * streaming"), far below one part read a time. Each part held ahead is one more ~6 MB buffer, and the garbage of its
 * read (the socket's 64 KB chunks) in flight at once (bench `npm run bench:stream`, 100,000 accounts against 10,000:
 * peak RSS 148 / 132 MiB with 3 ahead, 107 / 98 MiB with 1).
 */
export const PREFETCH_PARTS = 1;

/**
 * Result parts the export reads ahead of the one it is writing, into reused buffers: one. The upload, not the reads,
 * sets the export's pace; each part buffer held is ~6 MB (bench `npm run bench:export`, 40,000 accounts × 10: peak
 * RSS 181 MB with 3 ahead in fresh buffers, 163 MB with 2 ahead reused, 144 MB with 1 ahead reused, and 20 % less
 * CPU reused).
 */
export const EXPORT_PREFETCH_PARTS = 1;

/**
 * The bytes of every part under a prefix, in index order, with up to `ahead`
 * later parts downloading while the current one is consumed. A read that
 * fails surfaces when its part's turn comes (reads started ahead never
 * reject unobserved).
 *
 * With `reuse`, the parts are read into `ahead + 1` buffers used in turn
 * (each grown to the largest part it held), so reading a whole result
 * allocates the same few buffers whatever its size (the results stream:
 * bench `results`, its peak memory flat). A part's bytes are then valid only
 * until the consumer asks for the next part: a consumer copies what it keeps
 * (the JSON texts do; the export's CSV chunks copy the bytes they keep).
 * The stream and the export both reuse ({@link EXPORT_PREFETCH_PARTS}).
 */
export async function* prefetchedParts(
  results: Pick<ResultStore, 'readPart'>,
  keys: readonly string[],
  ahead = PREFETCH_PARTS,
  reuse = false,
): AsyncGenerator<Uint8Array> {
  const queue: Promise<Uint8Array>[] = [];
  // In use at once: the part handed out and the `ahead` after it (no more than there are parts: a page of one part
  // takes one buffer); read k reuses the buffer of read k - (ahead + 1), which the consumer left when it asked for
  // read k - ahead (the one that started read k). Taken from the process's spare buffers and given back when the
  // reading ends, so the next request reads into them too.
  const buffers: Buffer[] = reuse ? Array.from({ length: Math.min(ahead + 1, Math.max(1, keys.length)) }, takeSparePartBuffer) : [];
  // Grown with an eighth to spare, so parts of about one size do not grow a buffer again and again.
  const bufferOf = (slot: number) => (bytes: number) => {
    if (buffers[slot]!.length < bytes) buffers[slot] = Buffer.allocUnsafeSlow(bytes + (bytes >>> 3));
    return buffers[slot]!;
  };
  let next = 0;
  const fill = (limit: number) => {
    while (next < keys.length && queue.length < limit) {
      const key = keys[next]!;
      const read = reuse ? results.readPart(key, bufferOf(next % buffers.length)) : results.readPart(key);
      next++;
      read.catch(() => undefined);
      queue.push(read);
    }
  };
  try {
    fill(ahead + 1); // the first part and `ahead` after it
    while (queue.length > 0) {
      const bytes = await queue.shift()!;
      fill(ahead); // `ahead` parts after the one handed out
      yield bytes;
    }
  } finally {
    // Reads still running (the consumer stopped early) write into their buffers: those are left to them.
    if (reuse && queue.length === 0) for (const buffer of buffers) giveBackPartBuffer(buffer);
  }
}

/**
 * Part buffers a finished reader left for the next one in this process (the
 * results page and stream: a page then reads into a buffer already
 * allocated, as a bare GetObject into a reused buffer does), largest first,
 * at most {@link SPARE_PART_BYTES_KEPT} bytes in all: kept by bytes, not by
 * count, so what a container holds between requests stays bounded whatever
 * the parts' size (two parts of 1,000 accounts × 10 contacts, ~7 MB each).
 */
const SPARE_PART_BUFFERS: Buffer[] = [];
/** Bytes of spare part buffers a process keeps between readers (see {@link SPARE_PART_BUFFERS}). */
export const SPARE_PART_BYTES_KEPT = 16 * 1024 * 1024;

/** A spare part buffer (the largest kept), or an empty one that the first part read into it replaces. */
const takeSparePartBuffer = (): Buffer => SPARE_PART_BUFFERS.shift() ?? Buffer.alloc(0);

/** Keeps `buffer` for the next reader when it fits in {@link SPARE_PART_BYTES_KEPT} with the ones kept; drops it otherwise. */
function giveBackPartBuffer(buffer: Buffer): void {
  if (buffer.length === 0) return;
  SPARE_PART_BUFFERS.push(buffer);
  SPARE_PART_BUFFERS.sort((a, b) => b.length - a.length);
  let bytes = 0;
  const kept = SPARE_PART_BUFFERS.findIndex((spare) => (bytes += spare.length) > SPARE_PART_BYTES_KEPT);
  if (kept >= 0) SPARE_PART_BUFFERS.length = kept;
}

/** The spare part buffers this process keeps now: how many and their bytes (tests: the bound holds). */
export function sparePartBuffers(): { count: number; bytes: number } {
  return { count: SPARE_PART_BUFFERS.length, bytes: SPARE_PART_BUFFERS.reduce((sum, buffer) => sum + buffer.length, 0) };
}

/**
 * Lifetime of an export URL signed at `signedAt`, in whole seconds: the TTL,
 * cut at the end of the result access period (`resultsExpireAt`), so that no
 * URL downloads the results after it (issue #34). 0 or less: the period is over.
 */
export function urlLifetimeSeconds(ttlSeconds: number, signedAt: Date, resultsExpireAt: string | undefined): number {
  if (resultsExpireAt === undefined) return ttlSeconds;
  return Math.min(ttlSeconds, Math.floor((Date.parse(resultsExpireAt) - signedAt.getTime()) / 1000));
}

/**
 * Writes the CSV file of an enriched campaign and presigns its URL.
 * @returns the export result; `rows` counts accounts and contact rows.
 * @throws NotFoundError, ResultsNotReadyError (409), ResultsExpiredError (410), NoEligibleAccountsError (422, zero accounts).
 */
export async function exportCampaign(
  deps: ExportDependencies,
  organizationId: string,
  input: ExportCampaignInput,
  now = new Date(),
): Promise<ExportResult> {
  const campaign = await deps.campaigns.get(organizationId, input.campaignId);
  if (!campaign) throw new NotFoundError('campaign', input.campaignId);
  const status = statusAt(campaign, now);
  if (status === 'expired') throw new ResultsExpiredError();
  const { attempt, completedAt } = campaign;
  if (status !== 'enriched' || !attempt || !completedAt) throw new ResultsNotReadyError();
  if (!campaign.results || campaign.results.totalAccounts === 0)
    throw new NoEligibleAccountsError(campaign.accountsRequested, 'The campaign has no enriched account to export.');
  // Counted now; given back if the file or its URL fails (docs/limits.md).
  const use = await deps.quota?.(organizationId);
  return withQuotaUse(
    use,
    async () => {
      const selection: ContactSelection = {
        maxContactsPerAccount: input.maxContactsPerAccount,
        hasMobilePhone: input.hasMobilePhone ?? false,
        hasEmail: input.hasEmail ?? false,
      };
      const delivery = deliverable(selection, await (deps.deliveryPolicy ?? deliverAll)(organizationId));
      const counts: ExportCounts = { accounts: 0, contacts: 0, rows: 0 };
      const prefix = resultsPrefix(organizationId, campaign.id, attempt.id);
      const keys = await deps.results.listParts(prefix);

      const key = exportObjectKey(organizationId, campaign.id, nanoid());
      const upload = new Upload({
        client: deps.s3,
        params: {
          Bucket: deps.bucketName,
          Key: key,
          // Chunks of 1 MiB; the upload pulls them as its queue frees up, so the parts are read at the upload's pace.
          Body: Readable.from(csvChunks(prefetchedParts(deps.results, keys, EXPORT_PREFETCH_PARTS, true), delivery, completedAt, counts), {
            highWaterMark: 2,
          }),
          ContentType: 'text/csv; charset=utf-8',
          ContentDisposition: contentDisposition(campaign.name, now),
          ServerSideEncryption: 'AES256',
        },
        // Two 5 MB parts in flight: enough to keep the upload busy, half the buffers (bench: export peak RSS).
        queueSize: 2,
        partSize: 5 * 1024 * 1024,
        leavePartsOnError: false,
      });
      await upload.done();

      emitMetrics({ ExportRows: counts.rows });
      // Signed at a whole second (the signature's resolution), so urlExpiresAt is exactly when S3 stops honouring it.
      const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      // Never beyond the result access period (issue #34): the URL lives min(TTL, resultsExpireAt − now).
      const lifetimeSeconds = urlLifetimeSeconds(deps.urlTtlSeconds, signedAt, campaign.resultsExpireAt);
      if (lifetimeSeconds < 1) throw new ResultsExpiredError();
      const url = await getSignedUrl(deps.s3, new GetObjectCommand({ Bucket: deps.bucketName, Key: key }), {
        expiresIn: lifetimeSeconds,
        signingDate: signedAt,
      });
      // Last, so an entry says 200 only for an export that answers: an answered export always has its entry.
      await deps.auditEntry?.(campaign.id);
      return {
        campaignId: campaign.id,
        url,
        urlExpiresAt: new Date(signedAt.getTime() + lifetimeSeconds * 1000).toISOString(),
        rows: { accounts: counts.accounts, contacts: counts.contacts },
        file: { format: 'csv', encoding: 'utf-8-bom' },
      };
    },
    (error) => logger.error('Giving back the export quota failed', { error, campaignId: input.campaignId }),
  );
}
