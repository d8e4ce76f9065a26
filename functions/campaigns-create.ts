/** Lambda of `POST /v1/campaigns/create` (docs/campaigns.md). */
import { createCampaignOperation } from '../lib/campaigns/schema';
import {
  idempotentApiHandler,
  accountLists,
  campaigns,
  organizations,
  uploadReadDependencies,
  createCampaign,
  createCampaignOnce,
  readUploadedAccountIds,
  testStorageQuota,
} from '../lib/root';

// Under an Idempotency-Key, a create that wrote its campaign answers that campaign again (docs/idempotency.md).
export const handler = idempotentApiHandler(
  createCampaignOperation,
  async ({ accountIds, accountIdsUploadId, ...input }, { organizationId, signal, idempotentWork, auditItem }) =>
    createCampaignOnce({ campaigns: campaigns() }, organizationId, idempotentWork, async (workItem) =>
      createCampaign(
        { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists(), storageQuota: testStorageQuota },
        {
          organizationId,
          ...input,
          // The schema lets exactly one source through (docs/campaigns.md#large-account-lists-upload-first).
          accountIds:
            accountIds ??
            (await readUploadedAccountIds(uploadReadDependencies(), organizationId, accountIdsUploadId!, 'accountIdsUploadId', signal)),
        },
        signal,
        workItem,
        auditItem,
      ),
    ),
);
