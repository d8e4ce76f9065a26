/**
 * The launch and step dependencies of this deployment, from the shared stores
 * and the settings.
 */
import { config } from '../config';
import { accountHistory, accountLists, campaigns, enrichment, organizations, results, warehouse, workflow } from '../stores';
import type { LaunchDependencies } from './launch';
import type { StepDependencies } from './steps';

/** Dependencies of {@link enrichCampaign}. */
export const launchDependencies = (): LaunchDependencies => ({
  campaigns: campaigns(),
  organizations: organizations(),
  accountLists: accountLists(),
  warehouse: warehouse(),
  accountHistory: accountHistory(),
  enrichment: enrichment(),
  workflow: workflow(),
  creditsPerAccount: config.creditsPerAccount,
  launchLockSeconds: config.launchLockSeconds,
});

/** Dependencies of the workflow steps. */
export const stepDependencies = (): StepDependencies => ({
  campaigns: campaigns(),
  accountLists: accountLists(),
  warehouse: warehouse(),
  accountHistory: accountHistory(),
  enrichment: enrichment(),
  results: results(),
  resultsAccessPeriodSeconds: config.resultsAccessPeriodSeconds,
});
