/** Lambda of `POST /v1/campaigns/accounts` (decisions §11): why each account was or was not enriched. */
import { config } from '../lib/config';
import { campaignAccountsOperation } from '../lib/enrichment/schema';
import { listCampaignAccounts } from '../lib/enrichment/accounts';
import { apiHandler, campaigns, outcomes } from '../lib/root';

export const handler = apiHandler(campaignAccountsOperation, (input, { organizationId }) =>
  listCampaignAccounts({ campaigns: campaigns(), outcomes: outcomes(), cursorSecret: config.cursorSecret }, organizationId, input),
);
