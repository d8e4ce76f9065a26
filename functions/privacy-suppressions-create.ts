/** Lambda of `POST /v1/privacy/suppressions/create` (docs/privacy.md). */
import { createSuppressionsOperation } from '../lib/privacy/schema';
import { idempotentApiHandler, suppressions, createSuppressions } from '../lib/root';

export const handler = idempotentApiHandler(
  createSuppressionsOperation,
  (input, { organizationId }) => createSuppressions({ suppressions: suppressions() }, organizationId, input),
  { personalAnswers: true },
);
