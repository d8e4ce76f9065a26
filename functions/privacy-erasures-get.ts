/** Lambda of `POST /v1/privacy/erasures/get` (docs/privacy.md). */
import { getErasureOperation } from '../lib/privacy/schema';
import { apiHandler, erasureReader, getErasure } from '../lib/root';

export const handler = apiHandler(getErasureOperation, (input, { organizationId }) =>
  getErasure({ suppressions: erasureReader() }, organizationId, input.id),
);
