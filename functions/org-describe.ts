/** Lambda of `POST /v1/org/describe` (docs/limits.md#reading-your-limits). */
import { describeOrganizationOperation } from '../lib/organizations/schema';
import { apiHandler, creditsRemaining, organizationReader, describeOrganization } from '../lib/root';

// The key is verified in the organization read (one GetItem: its list of active keys; lib/organizations/api-keys.ts).
export const handler = apiHandler(
  describeOrganizationOperation,
  (_input, { organizationId, keyCheck }) => describeOrganization(organizationReader(), organizationId, keyCheck),
  {
    keyCheck: 'in-read',
    headers: (data) => creditsRemaining(data.credits.smb),
  },
);
