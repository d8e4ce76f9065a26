/** Lambda of `POST /v1/privacy/suppressions/create` (docs/privacy.md). */
import { createSuppressionsOperation } from '../lib/privacy/schema';
import { idempotentApiHandler, suppressions, createSuppressions } from '../lib/root';

export const handler = idempotentApiHandler(
  createSuppressionsOperation,
  (input, { organizationId, auditItem }) =>
    createSuppressions({ suppressions: suppressions() }, organizationId, input, new Date(), auditItem && (() => auditItem())),
  { personalAnswers: true },
);
