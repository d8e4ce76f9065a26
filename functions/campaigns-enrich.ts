/** Lambda of `POST /v1/campaigns/enrich` (spec "Enrich a campaign"). */
import { createApiHandler } from '../lib/http/pipeline';
import { enrichCampaignOperation } from '../lib/campaigns/schema';
import { enrichCampaign } from '../lib/enrichment/launch';
import { launchDependencies } from '../lib/enrichment/dependencies';

export const handler = createApiHandler(enrichCampaignOperation, (input, { organizationId, requestId }) =>
  enrichCampaign(launchDependencies(), organizationId, input.campaignId, new Date(), requestId),
);
