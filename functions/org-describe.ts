/** Lambda of `POST /v1/org/describe` (spec "Describe organization"). */
import { describeOrganizationOperation } from '../lib/organizations/schema';
import { describeOrganization } from '../lib/organizations/describe';
import { apiHandler, organizations } from '../lib/root';

export const handler = apiHandler(describeOrganizationOperation, (_input, { organizationId }) =>
  describeOrganization(organizations(), organizationId),
);
