/** Lambda of `POST /v1/keys/revoke` (docs/authentication.md). */
import { revokeKeyOperation } from '../lib/organizations/schema';
import { apiHandler, apiKeys, revokeKey } from '../lib/root';

export const handler = apiHandler(revokeKeyOperation, (input, { organizationId, auditItem }) =>
  revokeKey({ apiKeys: apiKeys() }, organizationId, input, auditItem && (() => auditItem())),
);
