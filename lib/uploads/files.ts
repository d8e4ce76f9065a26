/**
 * Uploaded files in S3 (docs/campaigns.md#large-account-lists-upload-first): presigned PUT URLs under the
 * organization's `uploads/` prefix, and reading a file back as a stream.
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/** An uploaded file opened for reading. */
export interface OpenedFile {
  /** Size in bytes, as S3 stored it. */
  contentLength: number;
  /** The bytes; destroy it to stop reading early. */
  body: Readable;
}

/** Presigns PUTs of uploaded files (uploads/create). */
export interface UploadPresigner {
  /**
   * A presigned PUT URL for `objectKey`, valid `expiresInSeconds` from `signedAt`.
   * @param options.contentType - signed into the URL: the PUT must carry exactly this `Content-Type`.
   */
  presignPut(objectKey: string, options: { contentType?: string; expiresInSeconds: number; signedAt: Date }): Promise<string>;
}

/** Reads uploaded files (campaign create). */
export interface UploadReader {
  /**
   * Opens a file for reading.
   * @returns undefined when nothing was PUT to that key.
   */
  open(objectKey: string, signal?: AbortSignal): Promise<OpenedFile | undefined>;
}

/**
 * Builds the S3 implementation of {@link UploadPresigner}.
 * @param deps.presigner - a client without default request checksums (lib/aws.ts `s3Presigner`).
 */
export function createUploadPresigner({ presigner, bucketName }: { presigner: S3Client; bucketName: string }): UploadPresigner {
  return {
    presignPut(objectKey, { contentType, expiresInSeconds, signedAt }) {
      return getSignedUrl(presigner, new PutObjectCommand({ Bucket: bucketName, Key: objectKey, ContentType: contentType }), {
        expiresIn: expiresInSeconds,
        signingDate: signedAt,
        // The presigner leaves content-type unsigned by default; signed, S3 refuses a PUT with another one.
        ...(contentType ? { signableHeaders: new Set(['content-type']) } : {}),
      });
    },
  };
}

/** Builds the S3 implementation of {@link UploadReader}. */
export function createUploadReader({ s3, bucketName }: { s3: S3Client; bucketName: string }): UploadReader {
  return {
    async open(objectKey, signal) {
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: bucketName, Key: objectKey }), signal ? { abortSignal: signal } : {});
        return { contentLength: object.ContentLength ?? 0, body: object.Body as Readable };
      } catch (error) {
        if ((error as Error).name === 'NoSuchKey') return undefined;
        throw error;
      }
    },
  };
}
