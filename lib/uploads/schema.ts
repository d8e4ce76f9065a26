/**
 * Schemas of the upload flow (decisions §14): `POST /v1/uploads/create`
 * presigns an S3 PUT for an account-ID file that campaign create then reads
 * (`accountIdsUploadId`). The same schemas validate requests and generate
 * the OpenAPI document.
 */
import * as z from 'zod/mini';
import { UPLOAD_ID_PATTERN } from '../ids';
import { count, timestamp } from '../schemas';
import { defineOperation } from '../http/operation';

/** Largest uploaded file create reads, in bytes (decisions §14: at most 50 MB). */
export const MAX_UPLOAD_BYTES = 50_000_000;

/** Content types an upload may declare: those of the `accountIdsFile` part (decisions §1). */
export const UPLOAD_CONTENT_TYPES = ['text/csv', 'text/plain'] as const;

/** An upload ID: `upl_` + 21 base58 characters. */
export const uploadId = () =>
  z.string().check(z.regex(UPLOAD_ID_PATTERN, { error: 'must be an upload ID: "upl_" followed by 21 base58 characters' }), z.meta({ example: 'upl_5tGk8Lm2Np4Qr6St8Vw1X' }));

/** `POST /v1/uploads/create` body. */
export const CreateUploadRequest = z.strictObject({
  contentType: z.optional(z.enum(UPLOAD_CONTENT_TYPES)).check(z.meta({ description: 'The `Content-Type` the PUT will carry. Given, it is part of the signature: the PUT must send exactly this header. Omitted, the PUT may send any content type (or none, as `curl --upload-file` does).' })),
});

/** Validated create-upload request. */
export type CreateUploadInput = z.output<typeof CreateUploadRequest>;

/** `data` of `POST /v1/uploads/create`. */
export const UploadSchema = z
  .strictObject({
    uploadId: uploadId(),
    url: z.url().check(z.meta({ description: 'Presigned S3 URL: PUT the file to it, the raw bytes as the body (no form encoding).' })),
    expiresAt: timestamp().check(z.meta({ description: 'When the URL stops accepting the PUT (15 minutes by default). Campaign create accepts the upload until 1 hour (by default) after it was created.' })),
    maxBytes: count().check(z.meta({ description: 'Largest file campaign create reads, in bytes; a larger one is refused by create.', example: MAX_UPLOAD_BYTES })),
  })
  .check(z.meta({ id: 'Upload' }));

/** An upload as the API returns it. */
export type Upload = z.infer<typeof UploadSchema>;

export const createUploadOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createUpload',
  idempotent: true,
  path: '/v1/uploads/create',
  summary: 'Upload a large account list',
  description:
    'For account lists too large for a request body (4 MiB multipart, 5 MiB JSON): returns a presigned S3 URL (valid 15 minutes, in your organization\'s own storage). PUT the file to it (the `accountIdsFile` format: text or CSV, one ID a line, first column, optional header row `account_id` or `id`), e.g. `curl --upload-file ids.csv "$url"`, then call campaign create with `accountIdsUploadId` instead of `accountIds`. Size: the PUT itself is not limited, but create reads at most `maxBytes` (50 MB) and refuses a larger file; a file is usable by create for 1 hour after this call (by default) and is deleted after 1 day. The file may be used by several creates; PUT again before the URL expires to replace it.',
  request: CreateUploadRequest,
  response: UploadSchema,
  errors: ['invalid_request', 'revoked_api_key'],
  example: { contentType: 'text/csv' },
  responseExample: {
    uploadId: 'upl_5tGk8Lm2Np4Qr6St8Vw1X',
    url: 'https://campaign-enrichment-data.s3.eu-west-1.amazonaws.com/uploads/org_4fJ8kQ2mN7pR9sT3vW5xY/upl_5tGk8Lm2Np4Qr6St8Vw1X?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Signature=9c2e4a6b8d0f1e3c5a7b9d1f3e5c7a9b2d4f6e8a0c2b4d6f8e1a3c5b7d9f0e2a',
    expiresAt: '2026-11-22T09:45:00.000Z',
    maxBytes: MAX_UPLOAD_BYTES,
  },
});
