/** Lambda of `POST /v1/privacy/erasures/list` (docs/privacy.md). */
import { listErasuresOperation } from '../lib/privacy/schema';
import { apiHandler, privacyDependencies, listErasures } from '../lib/root';

export const handler = apiHandler(listErasuresOperation, (input, { organizationId }) =>
  listErasures(privacyDependencies(), organizationId, input),
);
