/** Lambda of `POST /v1/campaigns/create` (decisions §1). */
import { createCampaignOperation } from '../lib/campaigns/schema';
import { createCampaign } from '../lib/campaigns/use-cases';
import { apiHandler, accountLists, campaigns, organizations } from '../lib/root';

export const handler = apiHandler(createCampaignOperation, (input, { organizationId, signal }) =>
  createCampaign({ campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() }, { organizationId, ...input }, signal),
);
