/**
 * Lays out enriched campaigns (test/support/enriched-campaigns.ts) in a
 * running `npm start` stack's data folder, from a child process: this test
 * worker's own environment points at the shared test table, the child's at
 * the folder's stack (its endpoints.json). Three demo accounts a campaign
 * (`seedEnrichedDemoCampaigns`).
 *
 *   node --import tsx test/support/enriched-campaigns-child.ts DATA_DIR ORGANIZATION_ID COUNT
 *
 * Prints one JSON line: `{ "campaignIds": [...] }` (COUNT of them).
 */
import { applyLocalEnvironment, readLocalEndpoints } from '../../infra/local/environment';

const [dataDir, organizationId, countArgument] = process.argv.slice(2);
const count = Number(countArgument);
const endpoints = dataDir ? readLocalEndpoints(dataDir) : undefined;
if (!endpoints || !organizationId || !Number.isSafeInteger(count))
  throw new Error('usage: enriched-campaigns-child.ts DATA_DIR ORGANIZATION_ID COUNT (a running stack’s data folder)');
applyLocalEnvironment(endpoints);
// Modules that build AWS clients load only once the environment points at the stack.
const { seedEnrichedDemoCampaigns } = await import('./enriched-campaigns');
console.log(JSON.stringify({ campaignIds: await seedEnrichedDemoCampaigns(organizationId, count) }));
