/** Lambda of `POST /v1/uploads/create` (docs/campaigns.md#large-account-lists-upload-first): a presigned PUT for a large account list. */
import { createUploadOperation } from '../lib/uploads/schema';
import { idempotentApiHandler, uploadDependencies, createUpload } from '../lib/root';

export const handler = idempotentApiHandler(createUploadOperation, (input, { organizationId, auditItem }) =>
  createUpload(uploadDependencies(), organizationId, input, auditItem && (() => auditItem())),
);
