/**
 * Scheduled Lambda (EventBridge, hourly): checks that every organization's
 * smb balance equals the sum of its ledger entries (docs/launch.md#the-credit-ledger), and every
 * campaign's `credits.charged` minus the sum of its entries (issue #31), and
 * publishes the total absolute drift as the `LedgerDrift` metric (credits),
 * which the `LedgerDrift` alarm watches. Each drifting organization and campaign is logged.
 */
import { ledger, reconcileCredits, totalDrift, emitMetrics, logger } from '../lib/root';

export const handler = async (): Promise<{ organizations: number; drifting: number; driftingCampaigns: number; drift: number }> => {
  const report = await reconcileCredits(ledger());
  for (const drift of report.drift) logger.error('Credit balance differs from its ledger', { ...drift });
  for (const drift of report.campaignDrift) logger.error("A campaign's credits.charged differs from its ledger", { ...drift });
  const drift = totalDrift(report);
  emitMetrics({ LedgerDrift: drift });
  logger.info('Credit reconciliation', {
    organizations: report.organizations,
    drifting: report.drift.length,
    driftingCampaigns: report.campaignDrift.length,
    drift,
  });
  return { organizations: report.organizations, drifting: report.drift.length, driftingCampaigns: report.campaignDrift.length, drift };
};
