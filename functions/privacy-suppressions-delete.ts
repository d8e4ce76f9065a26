/** Lambda of `POST /v1/privacy/suppressions/delete` (docs/privacy.md). */
import { deleteSuppressionOperation } from '../lib/privacy/schema';
import { idempotentApiHandler, suppressions, deleteSuppression } from '../lib/root';

export const handler = idempotentApiHandler(deleteSuppressionOperation, (input, { organizationId, auditItem }) =>
  deleteSuppression({ suppressions: suppressions() }, organizationId, input.id, auditItem && (() => auditItem())),
);
