/**
 * The launch dependencies of this deployment, from the shared stores and the
 * settings. (Each workflow task handler passes its step only what it uses.)
 */
import { config } from '../config';
import { accountHistory, accountLists, campaigns, enrichment, organizations, outcomes, warehouse, workflow } from '../stores';
import type { LaunchDependencies } from './launch';

/** Dependencies of {@link enrichCampaign}. */
export const launchDependencies = (): LaunchDependencies => ({
  campaigns: campaigns(),
  organizations: organizations(),
  accountLists: accountLists(),
  warehouse: warehouse(),
  accountHistory: accountHistory(),
  enrichment: enrichment(),
  workflow: workflow(),
  outcomes: outcomes(),
  creditsPerAccount: config.creditsPerAccount,
  launchLockSeconds: config.launchLockSeconds,
});
