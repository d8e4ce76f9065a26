/** Lambda of `POST /v1/campaigns/enrich` (spec "Enrich a campaign"); the MCP server's bound launch (docs/agents.md) runs the same handler. */
import { enrichCampaignOperation } from '../lib/campaigns/schema';
import { creditsRemaining, idempotentApiHandler, launchDependencies, enrichCampaign, LaunchChargeChangedError } from '../lib/root';

/**
 * The enrich handler. With `expectedCharge` (the MCP server's launch bound to
 * the credits the user accepted; no HTTP request sets it) a launch whose
 * evaluation would charge another amount charges nothing and answers
 * `{ chargeChanged: { accepted, charge } }` as its data.
 * The key is verified in the first read (campaign + organization, one BatchGetItem), before any write (lib/http/auth.ts).
 */
export const enrichHandler = (expectedCharge?: number) =>
  idempotentApiHandler(
    enrichCampaignOperation,
    async (input, { organizationId, requestId, signal, keyCheck, remainingMs, idempotentWork, auditItem }) => {
      try {
        return await enrichCampaign(launchDependencies(organizationId), organizationId, input.campaignId, new Date(), {
          requestId,
          signal,
          keyCheck,
          remainingMs,
          idempotentWork,
          expectedCharge,
          auditItem,
        });
      } catch (error) {
        if (error instanceof LaunchChargeChangedError) return { chargeChanged: { accepted: error.expected, charge: error.charge } };
        throw error;
      }
    },
    // The launch settles its transaction's outcome itself, past the deadline if need be: no early time-out answer.
    {
      keyCheck: 'in-read',
      headers: (answer) => ('credits' in answer ? creditsRemaining(answer.credits.remaining) : {}),
      settlesCommit: true,
    },
  );

export const handler = enrichHandler();
