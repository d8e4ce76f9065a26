/** Lambda of `POST /v1/campaigns/results/stream` (docs/results.md "The stream"): the results as JSON Lines or Server-Sent Events, through a function URL with response streaming in AWS. */
import { streamCampaignResultsOperation } from '../lib/exports/schema';
import {
  streamingApiHandler,
  campaignOrganizationReader,
  results,
  sequenceReader,
  deliveryPolicy,
  streamCampaignResults,
  resultsStreamTiming,
} from '../lib/root';

export const handler = streamingApiHandler(streamCampaignResultsOperation, (input, { organizationId, headers }) =>
  streamCampaignResults(
    { campaigns: campaignOrganizationReader(), results: results(), sequence: sequenceReader(), deliveryPolicy },
    organizationId,
    input,
    headers,
    resultsStreamTiming(),
  ),
);
