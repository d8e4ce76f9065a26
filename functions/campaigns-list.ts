/** Lambda of `POST /v1/campaigns/list` (spec "List campaigns"). */
import { createApiHandler } from '../lib/http/pipeline';
import { listCampaignsOperation } from '../lib/campaigns/schema';
import { listCampaigns } from '../lib/campaigns/use-cases';
import { campaigns } from '../lib/stores';

export const handler = createApiHandler(listCampaignsOperation, (input, { organizationId }) =>
  listCampaigns({ campaigns: campaigns() }, organizationId, input),
);
