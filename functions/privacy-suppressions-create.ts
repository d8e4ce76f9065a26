/** Lambda of `POST /v1/privacy/suppressions/create` (docs/privacy.md). */
import { createSuppressionsOperation } from '../lib/privacy/schema';
import { jsonIdempotentApiHandler, suppressions, createSuppressions } from '../lib/root';

export const handler = jsonIdempotentApiHandler(
  createSuppressionsOperation,
  (input, { organizationId, auditItem }) =>
    createSuppressions({ suppressions: suppressions() }, organizationId, input, new Date(), auditItem && (() => auditItem())),
  { personalAnswers: true },
);
