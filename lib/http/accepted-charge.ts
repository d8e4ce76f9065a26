/**
 * The launch bound to an accepted charge (docs/agents.md "What the
 * confirmation looks like"): the MCP server passes the credits the user
 * accepted to the enrich function in a field of the operation's event.
 * API Gateway never sets such a field, so no HTTP request can: only a caller
 * allowed to invoke the function itself (the MCP function's role; the local
 * stack's MCP server in its own process) binds a launch.
 */

/** The event field of the accepted charge (whole credits). */
export const ACCEPTED_CHARGE_FIELD = 'acceptedCharge';

/** The accepted charge an operation event carries, or `undefined` (no field, or not a whole number of credits ≥ 0). */
export function acceptedChargeOf(event: object): number | undefined {
  const value = (event as Record<string, unknown>)[ACCEPTED_CHARGE_FIELD];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
