/** Lambda of `POST /v1/campaigns/results` (docs/results.md): the contacts of a campaign as they arrive. */
import { campaignResultsOperation } from '../lib/exports/schema';
import { apiHandler, campaignOrganizationReader, results, sequenceReader, deliveryPolicy, listCampaignResults } from '../lib/root';

export const handler = apiHandler(
  campaignResultsOperation,
  (input, { organizationId, signal, keyCheck }) =>
    listCampaignResults(
      { campaigns: campaignOrganizationReader(), results: results(), sequence: sequenceReader(), deliveryPolicy },
      organizationId,
      input,
      { signal, keyCheck },
    ),
  { keyCheck: 'in-read' },
);
