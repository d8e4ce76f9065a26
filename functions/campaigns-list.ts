/** Lambda of `POST /v1/campaigns/list` (docs/pagination.md). */
import { listCampaignsOperation } from '../lib/campaigns/schema';
import { apiHandler, campaignLister, listCampaigns } from '../lib/root';

// The key is read beside the list Query, in parallel (lib/http/auth.ts).
export const handler = apiHandler(
  listCampaignsOperation,
  (input, { organizationId, keyCheck }) => listCampaigns({ campaigns: campaignLister() }, organizationId, input, keyCheck),
  {
    keyCheck: 'in-read',
  },
);
