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
import { prefetchedParts } from './prefetch';
import type { ContactSelection } from '../results/csv';
import { deliverable, deliverAll, type DeliveryPolicyOf } from '../results/deliverable';
import { csvChunks, type ExportCounts } from './rows';
import type { ExportCampaignInput } from './schema';
import type { ExportResult } from './docs';
import { objectKeys } from '../objects';

/** What an export needs. */
export interface ExportDependencies {
  /** The campaign read alone (lib/root.ts `campaignReader`): the export needs nothing else of the campaign store. */
  campaigns: Pick<CampaignStore, 'get'>;
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
 * Result parts the export reads ahead of the one it is writing, into reused buffers: one. The upload, not the reads,
 * sets the export's pace; each part buffer held is ~6 MB (bench `npm run bench:export`, 40,000 accounts × 10: peak
 * RSS 181 MB with 3 ahead in fresh buffers, 163 MB with 2 ahead reused, 144 MB with 1 ahead reused, and 20 % less
 * CPU reused).
 */
export const EXPORT_PREFETCH_PARTS = 1;

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
