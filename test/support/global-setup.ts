/**
 * Starts the local stack's emulators once for the whole test run (on free
 * ports, in memory), with the table and the bucket, and points every test
 * worker's environment at them. Each test file serves its own API
 * (test/support/api.ts) and works in its own table, named after this one
 * (test/support/own-table.ts); files share the bucket, and each test
 * isolates itself by creating its own organizations. It also names the
 * folder where the first test that needs the demo data folder builds it
 * (test/support/data-folder.ts `fillWithDemoData`); removed at the end.
 */
import { rmSync } from 'node:fs';
import { startLocalStack, type LocalStack } from '../../infra/local/stack';
import { SEEDED_TEMPLATE_ENV, stackDataFolder } from './data-folder';

let stack: LocalStack | undefined;
let template: string | undefined;

export async function setup(): Promise<void> {
  stack = await startLocalStack({ tableName: 'campaign-enrichment-test', bucketName: 'campaign-enrichment-test', api: false });
  // The run's demo data folder, built by the first test that asks for it (test/support/data-folder.ts fillWithDemoData).
  template = stackDataFolder('cea-demo-data-');
  process.env[SEEDED_TEMPLATE_ENV] = template;
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  if (template) rmSync(template, { recursive: true, force: true });
}
