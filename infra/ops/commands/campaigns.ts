/**
 * Campaign commands (README.md#operator-cli).
 */
import { defineCommand } from '../command';
import { stores } from '../target';

/** `campaign:cancel --campaign ID`: prints `{"campaignId","status"}`; the same use case as `POST /v1/campaigns/cancel` (docs/launch.md#canceling). */
export const campaignCancel = defineCommand<{ campaign: string }>({
  name: 'campaign:cancel',
  summary: 'stop a running enrichment: full refund, back to draft with lastEnrichment.status = canceled (cannot be undone: --yes)',
  examples: ['npx ops campaign:cancel --campaign camp_… --yes'],
  confirm: ({ campaign }) =>
    `Cancel the enrichment of ${campaign}? Its execution stops, its credits are refunded, and it goes back to draft.`,
  configure: (command) => command.requiredOption('--campaign <id>', 'campaign ID (camp_…)'),
  run: async ({ options }) => {
    const { cancelEnrichment } = await import('../../../lib/enrichment/cancel');
    const { campaigns, enrichment, workflow, objects, operatorAuditItem } = await stores();
    // An operator's retry after a lost answer finds the campaign canceled already and prints the same.
    return cancelEnrichment(
      { campaigns: campaigns(), enrichment: enrichment(), workflow: workflow(), objects: objects() },
      options.campaign,
      new Date(),
      (organizationId, campaignId) => operatorAuditItem({ organizationId, command: 'campaign:cancel', campaignId }),
    );
  },
});
