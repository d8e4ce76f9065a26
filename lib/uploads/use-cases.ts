/**
 * The upload flow (docs/campaigns.md#large-account-lists-upload-first): `POST /v1/uploads/create` presigns a PUT
 * of an account-ID file into the organization's own prefix; campaign create
 * then reads it (`accountIdsUploadId`) with the `accountIdsFile` parser and
 * the limits of docs/campaigns.md, naming the line of a bad ID.
 */
import type { TransactItem } from '../db/conditional';
import { InvalidRequestError } from '../errors';
import { newUploadId } from '../ids';
import { objectKeys } from '../objects';
import { withQuotaUse, type QuotaUse } from '../http/rate-limit';
import { logger } from '../observability';
import { badAccountIdRow, readAccountIdRows } from '../account-lists/account-list';
import { MAX_ACCOUNT_IDS } from '../account-lists/schema';
import { MAX_UPLOAD_BYTES, type CreateUploadInput } from './schema';
import type { Upload } from './docs';
import type { UploadStore } from './store';
import type { UploadPresigner, UploadReader } from './files';

/** What {@link createUpload} needs. */
export interface UploadDependencies {
  uploads: UploadStore;
  presigner: UploadPresigner;
  /** Lifetime of the presigned URL, in seconds (`UPLOAD_URL_TTL_SECONDS`). */
  urlTtlSeconds: number;
  /** How long after its creation campaign create accepts an upload, in seconds (`UPLOAD_TTL_SECONDS`). */
  ttlSeconds: number;
  /**
   * Counts one upload against the organization's uploads per hour (docs/limits.md); throws RateLimitedError
   * (429 `rate_limited`, `policy: "uploads"`) past it, before anything is signed or written. None: no limit.
   */
  quota?: (organizationId: string) => Promise<QuotaUse>;
}

/** What {@link readUploadedAccountIds} needs (campaign create). */
export interface UploadReadDependencies {
  uploads: UploadStore;
  files: UploadReader;
}

/**
 * Creates an upload: a record (organization, object key, limits, lifetimes)
 * and a presigned PUT URL for the object `uploads/<orgId>/<uploadId>`.
 * @returns the upload as the API answers it; `expiresAt` is when the URL stops working.
 */
export async function createUpload(
  deps: UploadDependencies,
  organizationId: string,
  input: CreateUploadInput,
  auditItem?: () => TransactItem,
): Promise<Upload> {
  // Counted now; given back if signing or the record fails (docs/limits.md).
  const use = await deps.quota?.(organizationId);
  return withQuotaUse(
    use,
    async () => {
      const uploadId = newUploadId();
      const objectKey = objectKeys.upload(organizationId, uploadId);
      // Signed at a whole second (the signature's resolution), so expiresAt is exactly when S3 stops honouring the URL.
      const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const expiresAt = new Date(signedAt.getTime() + deps.urlTtlSeconds * 1000).toISOString();
      const url = await deps.presigner.presignPut(objectKey, {
        ...(input.contentType ? { contentType: input.contentType } : {}),
        expiresInSeconds: deps.urlTtlSeconds,
        signedAt,
      });
      await deps.uploads.put(
        {
          uploadId,
          organizationId,
          objectKey,
          contentType: input.contentType ?? null,
          maxBytes: MAX_UPLOAD_BYTES,
          createdAt: signedAt.toISOString(),
          urlExpiresAt: expiresAt,
          usableUntil: new Date(signedAt.getTime() + deps.ttlSeconds * 1000).toISOString(),
        },
        auditItem ? [auditItem()] : [],
      );
      return { uploadId, url, expiresAt, maxBytes: MAX_UPLOAD_BYTES };
    },
    (error) => logger.error('Giving back the upload quota failed', { error }),
  );
}

const refuse = (field: string, problem: string, message = `${field} cannot be used: ${problem}.`) =>
  new InvalidRequestError(message, [`${field}: ${problem}`]);

/**
 * Reads the account IDs of an upload for campaign create: the file's rows
 * (the `accountIdsFile` format), each checked as `accountIds` items are
 * (1..128 characters, no control characters), at most 100,000 IDs
 * (duplicates counted, as in `accountIds`; docs/campaigns.md).
 * @param field - the request field that named the upload (`accountIdsUploadId`), named by every issue.
 * @param signal - the request's deadline: aborts the read.
 * @returns the IDs in file order, duplicates kept.
 * @throws InvalidRequestError for an upload that is unknown or another organization's, expired, never PUT,
 *   larger than its `maxBytes`, not parseable CSV, with a bad ID or too many IDs (naming the line), or empty.
 */
export async function readUploadedAccountIds(
  deps: UploadReadDependencies,
  organizationId: string,
  uploadId: string,
  field: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const upload = await deps.uploads.get(organizationId, uploadId);
  // Another organization's upload is not in this organization's keys: the same answer as an unknown one.
  if (!upload) throw refuse(field, `no upload ${uploadId} in this organization`, `${field} names no upload of this organization.`);
  if (Date.now() >= Date.parse(upload.usableUntil))
    throw refuse(field, `upload ${uploadId} expired at ${upload.usableUntil}; create a new upload`);
  const file = await deps.files.open(upload.objectKey, signal);
  if (!file) throw refuse(field, `nothing was uploaded to upload ${uploadId}; PUT the file to its url first`);
  if (file.contentLength > upload.maxBytes) {
    file.body.destroy();
    throw refuse(field, `the uploaded file has ${file.contentLength} bytes, more than maxBytes (${upload.maxBytes})`);
  }
  const ids: string[] = [];
  for await (const { id, line } of readAccountIdRows(file.body, field)) {
    const bad = badAccountIdRow(field, { id, line });
    if (bad) throw bad;
    if (ids.length === MAX_ACCOUNT_IDS)
      throw refuse(
        field,
        `line ${line}: more than ${MAX_ACCOUNT_IDS} account IDs`,
        `${field}: the file has more than ${MAX_ACCOUNT_IDS} account IDs.`,
      );
    ids.push(id);
  }
  if (ids.length === 0) throw refuse(field, 'the uploaded file holds no account IDs');
  return ids;
}
