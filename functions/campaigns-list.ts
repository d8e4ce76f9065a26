/** Lambda of `POST /v1/campaigns/list` (spec "List campaigns"). */
import { listCampaignsOperation } from '../lib/campaigns/schema';
import { listCampaigns } from '../lib/campaigns/use-cases';
import { apiHandler, campaigns } from '../lib/root';

export const handler = apiHandler(listCampaignsOperation, (input, { organizationId }) =>
  listCampaigns({ campaigns: campaigns() }, organizationId, input),
);
