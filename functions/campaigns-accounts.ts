/** Lambda of `POST /v1/campaigns/accounts` (docs/launch.md#per-account-outcomes): why each account was or was not enriched. */
import { campaignAccountsOperation } from '../lib/enrichment/schema';
import {
  apiHandler,
  campaignOrganizationReader,
  outcomes,
  setting,
  cursorSecretSetting,
  listCampaignAccounts,
  deliveryPolicy,
  results,
} from '../lib/root';

// The key is verified in the campaign read (campaign + organization, one BatchGetItem beside the manifest; lib/http/auth.ts).
export const handler = apiHandler(
  campaignAccountsOperation,
  (input, { organizationId, keyCheck }) =>
    listCampaignAccounts(
      {
        campaigns: campaignOrganizationReader(),
        outcomes: outcomes(),
        cursorSecret: setting(cursorSecretSetting),
        deliveryPolicy,
        results: results(),
      },
      organizationId,
      input,
      keyCheck,
    ),
  { keyCheck: 'in-read' },
);
