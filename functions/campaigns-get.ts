/** Lambda of `POST /v1/campaigns/get` (spec "Get a campaign"). */
import { createApiHandler } from '../lib/http/pipeline';
import { getCampaignOperation } from '../lib/campaigns/schema';
import { getCampaign } from '../lib/campaigns/use-cases';
import { campaigns } from '../lib/stores';

export const handler = createApiHandler(getCampaignOperation, (input, { organizationId }) =>
  getCampaign({ campaigns: campaigns() }, organizationId, input.campaignId),
);
