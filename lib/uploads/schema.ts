/**
 * Schemas of the upload flow (docs/campaigns.md#large-account-lists-upload-first): `POST /v1/uploads/create`
 * presigns an S3 PUT for an account-ID file that campaign create then reads
 * (`accountIdsUploadId`). The response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { UPLOAD_ID_PATTERN } from '../ids';
import { treeShakable } from '../schemas';
import { defineOperation } from '../http/operation';

/** Largest uploaded file create reads, in bytes (docs/campaigns.md#large-account-lists-upload-first: at most 50 MB). */
export const MAX_UPLOAD_BYTES = 50_000_000;

/** Content types an upload may declare: those of the `accountIdsFile` part (docs/campaigns.md). */
export const UPLOAD_CONTENT_TYPES = ['text/csv', 'text/plain'] as const;

/** An upload ID: `upl_` + 21 base58 characters. */
export const uploadId = () =>
  z
    .string()
    .check(
      z.regex(UPLOAD_ID_PATTERN, { error: 'must be an upload ID: "upl_" followed by 21 base58 characters' }),
      z.meta({ example: 'upl_5tGk8Lm2Np4Qr6St8Vw1X' }),
    );

/** `POST /v1/uploads/create` body. */
export const CreateUploadRequest = /* @__PURE__ */ treeShakable(() =>
  z.strictObject({
    contentType: z.optional(z.enum(UPLOAD_CONTENT_TYPES)).check(
      z.meta({
        description:
          'The `Content-Type` the PUT will carry. Given, it is part of the signature: the PUT must send exactly this header. Omitted, the PUT may send any content type (or none, as `curl --upload-file` does).',
      }),
    ),
  }),
);

/** Validated create-upload request. */
export type CreateUploadInput = z.output<typeof CreateUploadRequest>;

export const createUploadOperation = /* @__PURE__ */ defineOperation({
  operationId: 'createUpload',
  audited: true,
  scope: 'campaigns:write',
  idempotent: true,
  path: '/v1/uploads/create',
  request: CreateUploadRequest,
});
