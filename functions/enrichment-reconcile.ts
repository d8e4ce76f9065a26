/**
 * The enrichment reconciler's Lambda (lib/enrichment/reconcile.ts): invoked
 * every 5 minutes by EventBridge Scheduler (every organization) and by an
 * EventBridge rule when an enrichment execution ends ABORTED, FAILED or
 * TIMED_OUT (that execution's organization). Publishes the repairs and the
 * capacity drift as metrics (`EnrichmentsRepaired`, `CapacityDrift`).
 */
import { reconcileDependencies, emitMetrics, logger, reconcileEnrichments } from '../lib/root';

/** The EventBridge event of an execution status change (its `detail.input` is the execution input). */
interface ExecutionStatusChange {
  'detail-type'?: string;
  detail?: { input?: string; status?: string; executionArn?: string };
}

export const handler = async (event: ExecutionStatusChange = {}) => {
  let organizationId: string | undefined;
  if (event['detail-type'] === 'Step Functions Execution Status Change' && event.detail?.input) {
    try {
      organizationId = (JSON.parse(event.detail.input) as { organizationId?: string }).organizationId;
    } catch {
      // An input we cannot read: reconcile everyone.
    }
  }
  const report = await reconcileEnrichments(reconcileDependencies(), organizationId ? { organizationId } : {});
  for (const drift of report.capacityDrift) logger.error('Capacity held differs from the enriching campaigns', { ...drift });
  emitMetrics({
    EnrichmentsRepaired: report.repairs.length,
    CapacityDrift: report.capacityDrift.reduce((sum, d) => sum + Math.abs(d.enrichingAccounts - d.expected), 0),
  });
  logger.info('Enrichment reconciliation', {
    organizations: report.organizations,
    enriching: report.enriching,
    repairs: report.repairs.length,
    capacityDrift: report.capacityDrift.length,
  });
  return { organizations: report.organizations, enriching: report.enriching, repairs: report.repairs, capacityDrift: report.capacityDrift };
};
