/**
 * Campaigns laid out `enriched` through the product's own use cases and
 * steps, without running their workflows: create (lib/campaigns/use-cases.ts),
 * the launch (lib/enrichment/launch.ts: evaluation, the attempt's lists, the
 * charge), then the workflow's Complete and FinishRecording steps
 * (lib/enrichment/steps.ts: refund of accounts without contacts, `enriched`,
 * the account history). The money is exact (`credits:reconcile` finds no
 * drift), the campaigns read `enriched` with their expiry ahead, and no
 * execution exists for them: as after a restart of the local stack
 * (docs/reliability.md "Crash windows"). No result part is written (nothing
 * of the workflow's FindContacts runs); every eligible account counts as one
 * with a contact found.
 *
 * Runs against whatever this process's environment points at (lib/root.ts):
 * the crash-restart test's child (test/support/enriched-campaigns-child.ts)
 * and the readiness bench's folder fill (bench/children/readiness-fill.ts).
 */
import pMap from 'p-map';
import { config } from '../../lib/config';
import {
  accountHistoryFor,
  accountLists,
  campaigns,
  createCampaign,
  enrichCampaign,
  enrichment,
  launchDependencies,
  organizations,
  workflow,
} from '../../lib/root';
import { completeEnrichment, finishRecording } from '../../lib/enrichment/steps';
import { NoEligibleAccountsError } from '../../lib/errors';
import { DEMO_ACCOUNT_COUNT, demoAccountId } from '../../infra/local/demo-warehouse';

/** Campaigns laid out at once: one, as launches of one organization contend for its item. */
const AT_ONCE = 1;

/**
 * Creates one campaign per account list of `accountLists` in `organizationId` and brings each to `enriched`
 * as described above; a list without an eligible account (422 `no_eligible_accounts`) leaves its campaign a draft.
 * @returns the IDs of the campaigns now `enriched`, in the order of `accountLists`.
 */
export async function seedEnrichedCampaigns(organizationId: string, lists: readonly (readonly string[])[]): Promise<string[]> {
  const launch = {
    ...launchDependencies(organizationId),
    // No execution: the campaign's workflow is what a restart lost.
    workflow: { ...workflow(), start: async (input: { attemptId: string }) => workflow().executionArnOf(input.attemptId) },
  };
  const seeded = await pMap(
    lists,
    async (accountIds, i) => {
      const { id: campaignId } = await createCampaign(
        { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() },
        { organizationId, name: `Enriched ${i + 1}`, accountIds },
      );
      try {
        await enrichCampaign(launch, organizationId, campaignId);
      } catch (error) {
        if (error instanceof NoEligibleAccountsError) return undefined;
        throw error;
      }
      const attempt = (await campaigns().get(organizationId, campaignId))!.attempt!;
      await completeEnrichment(
        { campaigns: campaigns(), enrichment: enrichment(), resultsAccessPeriodSeconds: config.resultsAccessPeriodSeconds },
        {
          organizationId,
          campaignId,
          attemptId: attempt.id,
          batchResults: [
            {
              index: 0,
              accounts: attempt.eligible,
              accountsWithContact: attempt.eligible,
              accountsWithMobile: 0,
              contacts: attempt.eligible,
            },
          ],
        },
      );
      await finishRecording(
        { enrichment: enrichment(), accountHistory: accountHistoryFor(organizationId), organizations: organizations() },
        { organizationId, campaignId, attemptId: attempt.id },
      );
      return campaignId;
    },
    { concurrency: AT_ONCE },
  );
  return seeded.filter((id): id is string => id !== undefined);
}

/**
 * `count` enriched campaigns of three demo-warehouse accounts each (infra/local/demo-warehouse.ts), from
 * acc_02001 on, in a data folder's demo organization; a triple without an eligible account is skipped.
 * @returns their IDs.
 * @throws Error when the demo warehouse's 3,000 accounts run out first.
 */
export async function seedEnrichedDemoCampaigns(organizationId: string, count: number): Promise<string[]> {
  const campaignIds: string[] = [];
  for (let next = 2_001; campaignIds.length < count; next += 30) {
    if (next + 29 > DEMO_ACCOUNT_COUNT) throw new Error('the demo warehouse ran out of accounts for enriched campaigns');
    const lists = Array.from({ length: Math.min(10, count - campaignIds.length) }, (_, c) =>
      [0, 1, 2].map((i) => demoAccountId(next + 3 * c + i)),
    );
    campaignIds.push(...(await seedEnrichedCampaigns(organizationId, lists)));
  }
  return campaignIds;
}
