/** Lambda of `POST /v1/campaigns/quote` (docs/launch.md#quote): the launch evaluation, writing nothing. */
import { quoteCampaignOperation } from '../lib/enrichment/schema';
import { apiHandler, creditsRemaining, evaluationDependencies, quoteCampaign } from '../lib/root';

export const handler = apiHandler(
  quoteCampaignOperation,
  (input, { organizationId, keyCheck }) =>
    quoteCampaign(evaluationDependencies(organizationId), organizationId, input.campaignId, new Date(), keyCheck),
  {
    headers: (quote) => creditsRemaining(quote.credits.available),
  },
);
