/** Lambda of `POST /v1/campaigns/create` (decisions §1). */
import { createApiHandler } from '../lib/http/pipeline';
import { createCampaignOperation } from '../lib/campaigns/schema';
import { createCampaign } from '../lib/campaigns/use-cases';
import { accountLists, campaigns, organizations } from '../lib/stores';

export const handler = createApiHandler(createCampaignOperation, (input, { organizationId }) =>
  createCampaign({ campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() }, { organizationId, ...input }),
);
