/** Lambda of `POST /v1/campaigns/update` (decisions §1). */
import { createApiHandler } from '../lib/http/pipeline';
import { updateCampaignOperation } from '../lib/campaigns/schema';
import { updateCampaign } from '../lib/campaigns/use-cases';
import { campaigns, organizations } from '../lib/stores';

export const handler = createApiHandler(updateCampaignOperation, (input, { organizationId }) =>
  updateCampaign({ campaigns: campaigns(), organizations: organizations() }, organizationId, input),
);
