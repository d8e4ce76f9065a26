/** Lambda of `POST /v1/privacy/erasures/create` (docs/privacy.md). */
import { createErasureOperation } from '../lib/privacy/schema';
import { jsonIdempotentApiHandler, erasureCreateDependencies, createErasure } from '../lib/root';

export const handler = jsonIdempotentApiHandler(
  createErasureOperation,
  (input, { organizationId, auditItem }) =>
    createErasure(erasureCreateDependencies(), organizationId, input, new Date(), auditItem && (() => auditItem())),
  { personalAnswers: true },
);
