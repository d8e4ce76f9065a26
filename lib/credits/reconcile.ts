/**
 * Reconciliation (README.md#operator-cli `credits:reconcile`, docs/launch.md#the-credit-ledger): each
 * organization's balance must equal the sum of its ledger entries, and each
 * campaign's `credits.charged` minus the sum of its entries (issue #31). Run
 * by the operator CLI and, in AWS, on a schedule that publishes the drift as
 * the `LedgerDrift` metric (alarmed when non-zero).
 */
import type { CampaignChargeDrift, LedgerAudit, LedgerStore } from './store';

/** An organization whose balance differs from its ledger. */
export interface LedgerDrift extends Omit<LedgerAudit, 'campaignDrift'> {
  /** balance − ledgerSum (credits). */
  drift: number;
}

/** Result of {@link reconcileCredits}. */
export interface ReconciliationReport {
  /** Organizations checked. */
  organizations: number;
  /** Those whose balance differs from the sum of their entries (empty when all agree). */
  drift: LedgerDrift[];
  /** Campaigns whose `credits.charged` differs from minus the sum of their entries, each named (empty when all agree). */
  campaignDrift: CampaignChargeDrift[];
}

/**
 * Checks one organization, or every organization of the registry.
 * An unknown `organizationId` is not counted (`organizations` 0).
 */
export async function reconcileCredits(
  ledger: Pick<LedgerStore, 'audit' | 'organizationIds'>,
  options: { organizationId?: string } = {},
): Promise<ReconciliationReport> {
  const ids = options.organizationId !== undefined ? [options.organizationId] : await ledger.organizationIds();
  const drift: LedgerDrift[] = [];
  const campaignDrift: CampaignChargeDrift[] = [];
  let organizations = 0;
  for (const organizationId of ids) {
    const audit = await ledger.audit(organizationId);
    if (!audit) continue;
    organizations++;
    const { campaignDrift: campaigns, ...balance } = audit;
    if (balance.balance !== balance.ledgerSum) drift.push({ ...balance, drift: balance.balance - balance.ledgerSum });
    campaignDrift.push(...campaigns);
  }
  return { organizations, drift, campaignDrift };
}

/** Total absolute drift of a report (credits), balances and campaigns': the `LedgerDrift` metric. */
export const totalDrift = (report: ReconciliationReport): number =>
  report.drift.reduce((sum, d) => sum + Math.abs(d.drift), 0) + report.campaignDrift.reduce((sum, d) => sum + Math.abs(d.drift), 0);
