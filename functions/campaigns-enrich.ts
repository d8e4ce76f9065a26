/** Lambda of `POST /v1/campaigns/enrich` (spec "Enrich a campaign"). */
import { enrichCampaignOperation } from '../lib/campaigns/schema';
import { creditsRemaining, idempotentApiHandler, launchDependencies, enrichCampaign } from '../lib/root';

// The key is verified in the first read (campaign + organization, one BatchGetItem), before any write (lib/http/auth.ts).
export const handler = idempotentApiHandler(
  enrichCampaignOperation,
  (input, { organizationId, requestId, signal, keyCheck, remainingMs, idempotentWork }) =>
    enrichCampaign(launchDependencies(organizationId), organizationId, input.campaignId, new Date(), { requestId, signal, keyCheck, remainingMs, idempotentWork }),
  // The launch settles its transaction's outcome itself, past the deadline if need be: no early time-out answer.
  { keyCheck: 'in-read', headers: (campaign) => creditsRemaining(campaign.credits.remaining), settlesCommit: true },
);
