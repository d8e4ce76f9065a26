/**
 * The published contract of the upload operation beyond what its handler
 * needs (docs/campaigns.md#large-account-lists-upload-first): the response shape (also the TypeScript type of what
 * it returns), summary, description and examples. Only the OpenAPI document
 * (lib/contract/openapi.ts) imports its values.
 */
import * as z from 'zod/mini';
import { count, timestamp } from '../schemas';
import { documentOperation } from '../http/operation';
import { MAX_UPLOAD_BYTES, createUploadOperation, uploadId } from './schema';

/** `data` of `POST /v1/uploads/create`. */
export const UploadSchema = z
  .strictObject({
    uploadId: uploadId(),
    url: z.url().check(z.meta({ description: 'Presigned S3 URL: PUT the file to it, the raw bytes as the body (no form encoding).' })),
    expiresAt: timestamp().check(
      z.meta({
        description:
          'When the URL stops accepting the PUT (15 minutes by default). Campaign create accepts the upload until 1 hour (by default) after it was created.',
      }),
    ),
    maxBytes: count().check(
      z.meta({
        description: 'Largest file campaign create reads, in bytes; a larger one is refused by create.',
        example: MAX_UPLOAD_BYTES,
      }),
    ),
  })
  .check(z.meta({ id: 'Upload' }));

/** An upload as the API returns it. */
export type Upload = z.infer<typeof UploadSchema>;

/** The upload operation, documented. */
export const uploadOperationDocs = [
  documentOperation(createUploadOperation, {
    summary: 'Upload a large account list',
    description:
      'For account lists too large for a request body (4 MiB multipart, 5 MiB JSON): returns a presigned S3 URL (valid 15 minutes, in your organization\'s own storage). PUT the file to it (the `accountIdsFile` format: text or CSV, one ID a line, first column, optional header row `account_id` or `id`), e.g. `curl --upload-file ids.csv "$url"`, then call campaign create with `accountIdsUploadId` instead of `accountIds`. Size: the PUT itself is not limited, but create reads at most `maxBytes` (50 MB) and refuses a larger file; a file is usable by create for 1 hour after this call (by default) and is deleted after 1 day. The file may be used by several creates; PUT again before the URL expires to replace it.',
    response: UploadSchema,
    errors: ['invalid_request', 'revoked_api_key'],
    example: { contentType: 'text/csv' },
    responseExample: {
      uploadId: 'upl_5tGk8Lm2Np4Qr6St8Vw1X',
      url: 'https://campaign-enrichment-data.s3.eu-west-1.amazonaws.com/uploads/org_4fJ8kQ2mN7pR9sT3vW5xY/upl_5tGk8Lm2Np4Qr6St8Vw1X?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Signature=9c2e4a6b8d0f1e3c5a7b9d1f3e5c7a9b2d4f6e8a0c2b4d6f8e1a3c5b7d9f0e2a',
      expiresAt: '2026-11-22T09:45:00.000Z',
      maxBytes: MAX_UPLOAD_BYTES,
    },
  }),
];
