/** Lambda of `POST /v1/keys/create` (docs/authentication.md). */
import { createKeyOperation } from '../lib/organizations/schema';
import { apiHandler, apiKeyIssuer, createKey } from '../lib/root';

export const handler = apiHandler(createKeyOperation, (input, { organizationId, keyCheck, auditItem }) =>
  createKey({ apiKeys: apiKeyIssuer() }, { organizationId, keyCheck, ...(auditItem ? { auditItem: () => auditItem() } : {}) }, input),
);
