/** Lambda of `POST /v1/privacy/suppressions/delete` (docs/privacy.md). */
import { deleteSuppressionOperation } from '../lib/privacy/schema';
import { idempotentApiHandler, suppressionRemover, deleteSuppression } from '../lib/root';

export const handler = idempotentApiHandler(deleteSuppressionOperation, (input, { organizationId, auditItem }) =>
  deleteSuppression({ suppressions: suppressionRemover() }, organizationId, input.id, auditItem && (() => auditItem())),
);
