/**
 * Demo data loaded on the first start of the local stack (README.md#set-up):
 * an organization with 10,000 smb credits, 100 research-agent credits and a
 * ceiling of 5,000 enriching accounts, its API key, a test key of its test
 * twin (docs/test-mode.md), and the demo warehouse (infra/local/demo-warehouse.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { apiKeys, embeddedWarehouse, organizations } from '../../lib/root';
import { DEMO_ACCOUNT_COUNT, generateDemoWarehouse } from './demo-warehouse';

/** What `npm start` prints about the demo organization. */
export interface DemoSeed {
  organizationId: string;
  organizationName: string;
  apiKey: string;
  /** A test key of the demo organization's test twin (docs/test-mode.md); data folders seeded before test mode get one on their next start. */
  testApiKey: string;
  /** Accounts in the demo warehouse. */
  warehouseAccounts: number;
}

/** Loads the demo data once per data folder; later starts read it back from `demo.json`. */
export async function seedDemo(dataDir: string): Promise<DemoSeed> {
  const file = path.join(dataDir, 'demo.json');
  if (existsSync(file)) {
    const seed = JSON.parse(readFileSync(file, 'utf8')) as Omit<DemoSeed, 'testApiKey'> & { testApiKey?: string };
    if (await organizations().get(seed.organizationId)) {
      if (seed.testApiKey) return seed as DemoSeed;
      const withTestKey = { ...seed, testApiKey: await testKeyOf(seed.organizationId) };
      writeFileSync(file, JSON.stringify(withTestKey, null, 2));
      return withTestKey;
    }
  }
  await embeddedWarehouse().importAccounts(generateDemoWarehouse());
  const organizationName = 'Acme Demo';
  const { organization, apiKey } = await organizations().create({
    name: organizationName,
    smbCredits: 10_000,
    researchAgentCredits: 100,
    maxEnrichingAccounts: 5_000,
  });
  const seed: DemoSeed = {
    organizationId: organization.id,
    organizationName,
    apiKey,
    testApiKey: await testKeyOf(organization.id),
    warehouseAccounts: DEMO_ACCOUNT_COUNT,
  };
  writeFileSync(file, JSON.stringify(seed, null, 2));
  return seed;
}

/** A new test key of an organization's test twin (created on first use with its test credits, docs/test-mode.md). */
async function testKeyOf(organizationId: string): Promise<string> {
  return apiKeys().create((await organizations().testTwin(organizationId)).id);
}
