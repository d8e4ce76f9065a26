/** Lambda of `POST /v1/campaigns/cancel` (docs/launch.md#canceling). */
import { cancelCampaignOperation } from '../lib/enrichment/schema';
import { cancelCampaign, cancelDependencies, idempotentApiHandler } from '../lib/root';

// The key is verified in the first read (campaign + organization, one BatchGetItem), before any write (lib/http/auth.ts).
export const handler = idempotentApiHandler(
  cancelCampaignOperation,
  (input, { organizationId, keyCheck, auditItem }) =>
    cancelCampaign(cancelDependencies(), organizationId, input.campaignId, { keyCheck, ...(auditItem ? { auditItem } : {}) }),
  { keyCheck: 'in-read' },
);
