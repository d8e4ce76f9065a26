/** Lambda of `POST /v1/campaigns/get` (docs/openapi.json). */
import { getCampaignOperation } from '../lib/campaigns/schema';
import { apiHandler, campaignOrganizationReader, creditsRemaining, getCampaign } from '../lib/root';

// The key is verified in the campaign read (one BatchGetItem; lib/http/auth.ts).
export const handler = apiHandler(
  getCampaignOperation,
  (input, { organizationId, keyCheck }) =>
    getCampaign({ campaigns: campaignOrganizationReader() }, organizationId, input.campaignId, keyCheck),
  { keyCheck: 'in-read', headers: (campaign) => creditsRemaining(campaign.credits.remaining) },
);
