/** Lambda of `POST /v1/keys/list` (docs/authentication.md). */
import { listKeysOperation } from '../lib/organizations/schema';
import { apiHandler, apiKeyPager, listKeys } from '../lib/root';

export const handler = apiHandler(listKeysOperation, (input, { organizationId }) =>
  listKeys({ apiKeys: apiKeyPager() }, organizationId, input),
);
