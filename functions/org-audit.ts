/** Lambda of `POST /v1/org/audit` (docs/audit.md). */
import { listAuditOperation } from '../lib/audit/schema';
import { apiHandler, auditDependencies, listAuditEntries } from '../lib/root';

export const handler = apiHandler(
  listAuditOperation,
  (input, { organizationId, keyCheck }) => listAuditEntries(auditDependencies(), organizationId, input, keyCheck),
  { keyCheck: 'in-read' },
);
