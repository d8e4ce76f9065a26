/** Lambda of `POST /v1/campaigns/quote` (decisions §11): the launch evaluation, writing nothing. */
import { config } from '../lib/config';
import { quoteCampaignOperation } from '../lib/enrichment/schema';
import { quoteCampaign } from '../lib/enrichment/quote';
import { apiHandler, accountHistory, accountLists, campaigns, enrichment, organizations, warehouse } from '../lib/root';

export const handler = apiHandler(quoteCampaignOperation, (input, { organizationId }) =>
  quoteCampaign(
    {
      campaigns: campaigns(),
      organizations: organizations(),
      accountLists: accountLists(),
      warehouse: warehouse(),
      accountHistory: accountHistory(),
      enrichment: enrichment(),
      creditsPerAccount: config.creditsPerAccount,
    },
    organizationId,
    input.campaignId,
  ),
);
