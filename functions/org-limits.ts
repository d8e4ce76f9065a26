/** Lambda of `POST /v1/org/limits` (docs/limits.md). */
import { describeLimitsOperation } from '../lib/organizations/schema';
import { apiHandler, describeLimits, limitDependencies } from '../lib/root';

// The key is verified in the organization read (its list of active keys), beside the month's spend.
export const handler = apiHandler(
  describeLimitsOperation,
  (_input, { organizationId, keyCheck }) => describeLimits(limitDependencies(), organizationId, { keyCheck }),
  { keyCheck: 'in-read' },
);
