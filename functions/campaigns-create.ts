/** Lambda of `POST /v1/campaigns/create` (decisions §1, §14). */
import { createCampaignOperation } from '../lib/campaigns/schema';
import { idempotentApiHandler, accountLists, campaigns, organizations, uploadReadDependencies, createCampaign, readUploadedAccountIds } from '../lib/root';

export const handler = idempotentApiHandler(createCampaignOperation, async ({ accountIds, accountIdsUploadId, ...input }, { organizationId, signal }) =>
  createCampaign(
    { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() },
    {
      organizationId,
      ...input,
      // The schema lets exactly one source through (decisions §14).
      accountIds: accountIds ?? (await readUploadedAccountIds(uploadReadDependencies(), organizationId, accountIdsUploadId!, 'accountIdsUploadId', signal)),
    },
    signal,
  ),
);
