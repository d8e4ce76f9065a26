/** Lambda of `POST /v1/privacy/erasures/list` (docs/privacy.md). */
import { listErasuresOperation } from '../lib/privacy/schema';
import { apiHandler, erasureListDependencies, listErasures } from '../lib/root';

export const handler = apiHandler(listErasuresOperation, (input, { organizationId }) =>
  listErasures(erasureListDependencies(), organizationId, input),
);
