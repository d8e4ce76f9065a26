/** Lambda of `POST /v1/org/describe` (spec "Describe organization"). */
import { createApiHandler } from '../lib/http/pipeline';
import { describeOrganizationOperation } from '../lib/organizations/schema';
import { describeOrganization } from '../lib/organizations/describe';
import { organizations } from '../lib/stores';

export const handler = createApiHandler(describeOrganizationOperation, (_input, { organizationId }) =>
  describeOrganization(organizations(), organizationId),
);
