/** Lambda of `POST /v1/campaigns/accounts` (docs/launch.md#per-account-outcomes): why each account was or was not enriched. */
import { campaignAccountsOperation } from '../lib/enrichment/schema';
import { apiHandler, campaigns, outcomes, config, listCampaignAccounts, deliveryPolicy, results } from '../lib/root';

export const handler = apiHandler(campaignAccountsOperation, (input, { organizationId }) =>
  listCampaignAccounts(
    { campaigns: campaigns(), outcomes: outcomes(), cursorSecret: config.cursorSecret, deliveryPolicy, results: results() },
    organizationId,
    input,
  ),
);
