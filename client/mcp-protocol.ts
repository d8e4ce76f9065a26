/**
 * What the API's MCP server and the stdio bridge agree on beyond the MCP
 * specification (docs/agents.md): one owner for both sides.
 */

/**
 * The `_meta` key of a `tools/call` of `enrich_campaign` that binds the
 * launch to the credits the user accepted (the quote's `credits.required`):
 * the API refuses, charging nothing, a launch that would charge another amount.
 */
export const ACCEPTED_CHARGE_META = 'campaign-enrichment/acceptedCharge';

/**
 * The tool error of a bound launch whose evaluation changed since the quote:
 * nothing was charged; `details: {accepted, charge}`. Ask the user again.
 * Only the MCP server answers it (the HTTP API has no bound launch).
 */
export const CHARGE_CHANGED_CODE = 'charge_changed';

/**
 * The tools the stdio bridge and the server's tasks call by name: each is
 * its operation's operationId in snake_case (lib/contract/mcp.ts `toolName`;
 * test/mcp-unit.test.ts fails when one differs).
 */
export const TOOL_NAMES = {
  enrich: 'enrich_campaign',
  quote: 'quote_campaign',
  get: 'get_campaign',
  cancel: 'cancel_campaign',
  results: 'list_campaign_results',
} as const;
