/**
 * Credit ledger commands (README.md#operator-cli, docs/launch.md#the-credit-ledger): reconciliation.
 */
import { FailedWithResult, UsageError, defineCommand } from '../command';
import { organizationOf, stores, TEST_OPTION } from '../target';

/** `credits:reconcile`: prints `{"organizations","drift"}`; exit 1 when any balance differs from its ledger. */
export const creditsReconcile = defineCommand<{ org?: string; test?: boolean }>({
  name: 'credits:reconcile',
  examples: ['npx ops credits:reconcile', 'npx ops credits:reconcile --org org_…', 'npx ops credits:reconcile --org org_… --test'],
  summary:
    "check that each smb balance equals the sum of its ledger entries, and each campaign's credits.charged minus the sum of its entries (exit 1 on drift)",
  details:
    'Prints {"organizations","drift":[{organizationId,balance,ledgerSum,entries,drift}],"campaignDrift":[{organizationId,campaignId,charged,ledgerCharged,drift}]}; exits 1 naming each drifting organization and campaign on stderr.',
  configure: (command) => command.option('--org <id>', 'only this organization').option(...TEST_OPTION),
  run: async ({ options }) => {
    if (options.test && options.org === undefined)
      throw new UsageError('--test needs --org (the live organization whose test twin to check).');
    const { ledger } = await stores();
    const { reconcileCredits } = await import('../../../lib/credits/reconcile');
    const org = options.org;
    const organizationId = org !== undefined ? await organizationOf({ org, test: options.test }) : undefined;
    const found = await reconcileCredits(ledger(), organizationId !== undefined ? { organizationId } : {});
    // A twin's report names the live ID given with --org (docs/test-mode.md).
    const named = <T extends { organizationId: string }>(rows: T[]): T[] =>
      rows.map((row) => (options.test && row.organizationId === organizationId ? { ...row, organizationId: org! } : row));
    const report = { ...found, drift: named(found.drift), campaignDrift: named(found.campaignDrift) };
    if (report.drift.length > 0 || report.campaignDrift.length > 0) {
      const lines = [
        ...report.drift.map((d) => `${d.organizationId}: balance ${d.balance} credits, ledger ${d.ledgerSum} credits (drift ${d.drift})`),
        ...report.campaignDrift.map(
          (d) =>
            `${d.organizationId} campaign ${d.campaignId}: charged ${d.charged} credits, ledger ${d.ledgerCharged} credits (drift ${d.drift})`,
        ),
      ];
      throw new FailedWithResult(lines.join('; '), { ...report });
    }
    return { ...report };
  },
});
