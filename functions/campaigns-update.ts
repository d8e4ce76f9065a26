/** Lambda of `POST /v1/campaigns/update` (docs/campaigns.md). */
import { updateCampaignOperation } from '../lib/campaigns/schema';
import { idempotentApiHandler, campaigns, organizationReader, updateCampaign } from '../lib/root';

export const handler = idempotentApiHandler(updateCampaignOperation, (input, { organizationId, auditItem }) =>
  updateCampaign({ campaigns: campaigns(), organizations: organizationReader() }, organizationId, input, auditItem),
);
