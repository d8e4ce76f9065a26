/** Lambda of `POST /v1/campaigns/enrich` (spec "Enrich a campaign"). */
import { enrichCampaignOperation } from '../lib/campaigns/schema';
import { enrichCampaign } from '../lib/enrichment/launch';
import { apiHandler, launchDependencies } from '../lib/root';

export const handler = apiHandler(enrichCampaignOperation, (input, { organizationId, requestId, signal }) =>
  enrichCampaign(launchDependencies(), organizationId, input.campaignId, new Date(), { requestId, signal }),
);
