/** Lambda of `POST /v1/campaigns/get` (spec "Get a campaign"). */
import { getCampaignOperation } from '../lib/campaigns/schema';
import { getCampaign } from '../lib/campaigns/use-cases';
import { apiHandler, campaigns } from '../lib/root';

export const handler = apiHandler(getCampaignOperation, (input, { organizationId }) =>
  getCampaign({ campaigns: campaigns() }, organizationId, input.campaignId),
);
