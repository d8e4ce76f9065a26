/**
 * Credit ledger commands (README.md#operator-cli, docs/launch.md#the-credit-ledger): reconciliation.
 */
import { FailedWithResult, defineCommand } from '../command';
import { stores } from '../target';

/** `credits:reconcile`: prints `{"organizations","drift"}`; exit 1 when any balance differs from its ledger. */
export const creditsReconcile = defineCommand<{ org?: string }>({
  name: 'credits:reconcile',
  examples: ['npx ops credits:reconcile', 'npx ops credits:reconcile --org org_…'],
  summary: "check that each smb balance equals the sum of its ledger entries, and each campaign's credits.charged minus the sum of its entries (exit 1 on drift)",
  details: 'Prints {"organizations","drift":[{organizationId,balance,ledgerSum,entries,drift}],"campaignDrift":[{organizationId,campaignId,charged,ledgerCharged,drift}]}; exits 1 naming each drifting organization and campaign on stderr.',
  configure: (command) => command.option('--org <id>', 'only this organization'),
  run: async ({ options }) => {
    const { ledger } = await stores();
    const { reconcileCredits } = await import('../../../lib/credits/reconcile');
    const report = await reconcileCredits(ledger(), options.org !== undefined ? { organizationId: options.org } : {});
    if (report.drift.length > 0 || report.campaignDrift.length > 0) {
      const lines = [
        ...report.drift.map((d) => `${d.organizationId}: balance ${d.balance} credits, ledger ${d.ledgerSum} credits (drift ${d.drift})`),
        ...report.campaignDrift.map((d) => `${d.organizationId} campaign ${d.campaignId}: charged ${d.charged} credits, ledger ${d.ledgerCharged} credits (drift ${d.drift})`),
      ];
      throw new FailedWithResult(lines.join('; '), { ...report });
    }
    return { ...report };
  },
});
