/** Lambda of `POST /v1/campaigns/enrich` (docs/launch.md); the MCP server's bound launch (docs/agents.md) runs the same handler. */
import { enrichCampaignOperation } from '../lib/campaigns/schema';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import {
  acceptedChargeOf,
  creditsRemaining,
  idempotentApiHandler,
  launchDependencies,
  enrichCampaign,
  LaunchChargeChangedError,
} from '../lib/root';

/**
 * The enrich handler. With `expectedCharge` (the MCP server's launch bound to
 * the credits the user accepted; no HTTP request sets it) a launch whose
 * evaluation would charge another amount charges nothing and answers
 * `{ chargeChanged: { accepted, charge } }` as its data.
 * The key is verified in the first read (campaign + organization, one BatchGetItem), before any write (lib/http/auth.ts).
 */
const enrichHandler = (expectedCharge?: number) =>
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

const unbound = enrichHandler();

/**
 * The function's handler: a plain launch, or, when the event carries the MCP server's accepted charge
 * (lib/http/accepted-charge.ts; no HTTP request can set it), the launch bound to it.
 */
export const handler = (event: APIGatewayProxyEventV2, context: Context) => {
  const accepted = acceptedChargeOf(event);
  return accepted === undefined ? unbound(event, context) : enrichHandler(accepted)(event, context);
};
