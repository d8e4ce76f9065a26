/** Lambda of `POST /v1/privacy/suppressions/list` (docs/privacy.md). */
import { listSuppressionsOperation } from '../lib/privacy/schema';
import { apiHandler, suppressionListDependencies, listSuppressions } from '../lib/root';

export const handler = apiHandler(listSuppressionsOperation, (input, { organizationId }) =>
  listSuppressions(suppressionListDependencies(), organizationId, input),
);
