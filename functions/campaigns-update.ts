/** Lambda of `POST /v1/campaigns/update` (decisions §1). */
import { updateCampaignOperation } from '../lib/campaigns/schema';
import { updateCampaign } from '../lib/campaigns/use-cases';
import { apiHandler, campaigns, organizations } from '../lib/root';

export const handler = apiHandler(updateCampaignOperation, (input, { organizationId }) =>
  updateCampaign({ campaigns: campaigns(), organizations: organizations() }, organizationId, input),
);
