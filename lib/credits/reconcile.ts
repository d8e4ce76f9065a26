/**
 * Reconciliation (decisions §8 `credits:reconcile`, §11): each
 * organization's balance must equal the sum of its ledger entries. Run by
 * the operator CLI and, in AWS, on a schedule that publishes the drift as the
 * `LedgerDrift` metric (alarmed when non-zero).
 */
import type { LedgerAudit, LedgerStore } from './store';

/** An organization whose balance differs from its ledger. */
export interface LedgerDrift extends LedgerAudit {
  /** balance − ledgerSum (credits). */
  drift: number;
}

/** Result of {@link reconcileCredits}. */
export interface ReconciliationReport {
  /** Organizations checked. */
  organizations: number;
  /** Those whose balance differs from the sum of their entries (empty when all agree). */
  drift: LedgerDrift[];
}

/**
 * Checks one organization, or every organization of the registry.
 * An unknown `organizationId` is not counted (`organizations` 0).
 */
export async function reconcileCredits(ledger: Pick<LedgerStore, 'audit' | 'organizationIds'>, options: { organizationId?: string } = {}): Promise<ReconciliationReport> {
  const ids = options.organizationId !== undefined ? [options.organizationId] : await ledger.organizationIds();
  const drift: LedgerDrift[] = [];
  let organizations = 0;
  for (const organizationId of ids) {
    const audit = await ledger.audit(organizationId);
    if (!audit) continue;
    organizations++;
    if (audit.balance !== audit.ledgerSum) drift.push({ ...audit, drift: audit.balance - audit.ledgerSum });
  }
  return { organizations, drift };
}

/** Total absolute drift of a report (credits): the `LedgerDrift` metric. */
export const totalDrift = (report: ReconciliationReport): number => report.drift.reduce((sum, d) => sum + Math.abs(d.drift), 0);
