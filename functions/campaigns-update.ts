/** Lambda of `POST /v1/campaigns/update` (docs/campaigns.md). */
import { updateCampaignOperation } from '../lib/campaigns/schema';
import { idempotentApiHandler, campaignDraftEditor, organizationCredits, updateCampaign } from '../lib/root';

export const handler = idempotentApiHandler(updateCampaignOperation, (input, { organizationId, auditItem }) =>
  updateCampaign({ campaigns: campaignDraftEditor(), organizations: organizationCredits() }, organizationId, input, auditItem),
);
