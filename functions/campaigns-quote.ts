/** Lambda of `POST /v1/campaigns/quote` (decisions §11): the launch evaluation, writing nothing. */
import { createApiHandler } from '../lib/http/pipeline';
import { config } from '../lib/config';
import { quoteCampaignOperation } from '../lib/enrichment/schema';
import { quoteCampaign } from '../lib/enrichment/quote';
import { accountHistory, accountLists, campaigns, enrichment, organizations, warehouse } from '../lib/stores';

export const handler = createApiHandler(quoteCampaignOperation, (input, { organizationId }) =>
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
