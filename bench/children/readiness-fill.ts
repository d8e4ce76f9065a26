/**
 * Child of the readiness figure (bench/figures/readiness.ts): fills a data
 * folder of the local stack up to a number of table items, as a stack used
 * for a while would hold them — warehouse accounts (two items each: the
 * account and its contacts) and organizations, each with its key, ledger
 * and draft campaigns — plus, in the demo organization, `ENRICHED` campaigns
 * stored `enriched` whose workflows a restart lost (laid out by the product's
 * use cases and steps: test/support/enriched-campaigns.ts), then stops. Run
 * on the project's Node with tsx:
 *
 *   node --import tsx bench/children/readiness-fill.ts DATA_DIR ITEMS [ENRICHED]
 *
 * Prints one JSON line: `{ "items": <table items after the fill>, "enriched": <campaigns enriched> }`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { startLocalStack } from '../../infra/local/stack';
import { generateDemoWarehouse } from '../../infra/local/demo-warehouse';
import { warehouseItemsOf } from '../../lib/warehouse/warehouse';
import { LOCAL_STATE_MACHINE_ARN } from '../../infra/local/step-functions';
import type { DemoSeed } from '../../infra/local/seed';

const [dataDir, itemsArgument, enrichedArgument = '0'] = process.argv.slice(2);
const target = Number(itemsArgument);
const enrichedWanted = Number(enrichedArgument);
if (!dataDir || !Number.isSafeInteger(target) || !Number.isSafeInteger(enrichedWanted))
  throw new Error('usage: readiness-fill.ts DATA_DIR ITEMS [ENRICHED]');

// The attempts name the local state machine's executions, as a launch of `npm start` does (none will exist at the restart).
process.env.STATE_MACHINE_ARN = LOCAL_STATE_MACHINE_ARN;
const stack = await startLocalStack({ dataDir, api: false });
try {
  const { ddb, dynamodb } = await import('../../lib/aws');
  const { batchPut } = await import('../../lib/db/batch');
  const { campaignItem } = await import('../../lib/campaigns/item');
  const { newCampaignId } = await import('../../lib/ids');
  const { embeddedWarehouse, organizations } = await import('../../lib/root');
  const { tableName } = stack.endpoints;

  /** Items in the table now: DynamoDB Local's ItemCount is exact and current (a Scan counting 100,000 items took minutes). */
  const count = async () => (await dynamodb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.ItemCount ?? 0;

  // 100 organizations of 20 draft campaigns each (the reconciler walks every organization at start).
  for (let o = 0; o < 100; o++) {
    const { organization } = await organizations().create({
      name: `Readiness ${o}`,
      smbCredits: 1_000,
      researchAgentCredits: 10,
      maxEnrichingAccounts: 5_000,
    });
    const campaigns = Array.from({ length: 20 }, (_, i) => {
      const id = newCampaignId();
      return campaignItem({
        id,
        organizationId: organization.id,
        name: `Campaign ${i}`,
        status: 'draft',
        createdVia: 'api',
        excludeEnrichedWithinDays: null,
        createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
        accountsRequested: 100,
        accountsObjectKey: `campaigns/${organization.id}/${id}/accounts.txt`,
        accountsEligible: null,
        accountsExcluded: null,
        creditsCharged: 0,
        lastEnrichment: null,
      });
    });
    await batchPut(ddb, tableName, campaigns);
  }
  // Enriched campaigns of the demo organization (three demo accounts each).
  const { seedEnrichedDemoCampaigns } = await import('../../test/support/enriched-campaigns');
  const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoSeed;
  const enriched = await seedEnrichedDemoCampaigns(demo.organizationId, enrichedWanted);
  // Warehouse accounts (IDs after the demo's) up to the target.
  let next = 100_000;
  for (let missing = target - (await count()); missing > 0; missing = target - (await count())) {
    // Items an account makes (its account and contacts items and its identifier index entries, lib/warehouse/warehouse.ts).
    const perAccount = warehouseItemsOf(generateDemoWarehouse(1, next)[0]!).length;
    const accounts = generateDemoWarehouse(Math.max(1, Math.ceil(missing / perAccount)), next).map((account, i) => ({
      ...account,
      accountId: `acc_fill_${next + i}`,
    }));
    next += accounts.length;
    for (let i = 0; i < accounts.length; i += 5_000) await embeddedWarehouse().importAccounts(accounts.slice(i, i + 5_000));
  }
  console.log(JSON.stringify({ items: await count(), enriched: enriched.length }));
} finally {
  await stack.stop();
}
