/** Lambda of `POST /v1/keys/rotate` (docs/authentication.md). */
import { rotateKeyOperation } from '../lib/organizations/schema';
import { apiHandler, apiKeys, rotateKey } from '../lib/root';

export const handler = apiHandler(rotateKeyOperation, (input, { organizationId, keyCheck, auditItem }) =>
  rotateKey({ apiKeys: apiKeys() }, { organizationId, keyCheck, ...(auditItem ? { auditItem: () => auditItem() } : {}) }, input),
);
