/** Lambda of `POST /v1/org/usage` (docs/authentication.md "Usage"). */
import { orgUsageOperation } from '../lib/organizations/schema';
import { apiHandler, orgUsage, usageDependencies } from '../lib/root';

export const handler = apiHandler(orgUsageOperation, (input, { organizationId }) => orgUsage(usageDependencies(), organizationId, input));
