/**
 * Starts the local stack's emulators once for the whole test run (on free
 * ports, in memory), with the table and the bucket, and points every test
 * worker's environment at them. Each test file serves its own API
 * (test/support/api.ts) and works in its own table, named after this one
 * (test/support/own-table.ts); files share the bucket, and each test
 * isolates itself by creating its own organizations.
 */
import { startLocalStack, type LocalStack } from '../../infra/local/stack';

let stack: LocalStack | undefined;

export async function setup(): Promise<void> {
  stack = await startLocalStack({ tableName: 'campaign-enrichment-test', bucketName: 'campaign-enrichment-test', api: false });
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
