/**
 * A table of its own for a test that scans (the one-off migrations read the
 * whole table): created from the same definition as the shared table
 * (infra/local/table.ts), holding only what the test puts in it, deleted
 * afterwards. A scan then costs the test's own items, not every other test's,
 * and finds nothing another test left.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ddb, dynamodb } from '../../lib/aws';
import { config } from '../../lib/config';
import { batchGet, batchPut } from '../../lib/db/batch';
import * as keys from '../../lib/db/keys';
import { ensureTable } from '../../infra/local/table';

/**
 * Runs `run` with the name of a new, empty table holding a copy of each
 * given organization's item from the shared table (the history keeps its
 * split state there), then deletes the table.
 * @param organizationIds - organizations made by the test (test/support/api.ts `newOrganization`).
 * @returns what `run` returns.
 */
export async function withScratchTable<T>(organizationIds: readonly string[], run: (tableName: string) => Promise<T>): Promise<T> {
  const tableName = `${config.tableName}-scratch-${randomUUID()}`;
  await ensureTable(dynamodb, tableName);
  try {
    const organizations = await batchGet(
      ddb,
      config.tableName,
      organizationIds.map((id) => keys.organization(id)),
    );
    if (organizations.length !== organizationIds.length)
      throw new Error(`Organizations missing from ${config.tableName}: ${organizationIds.join(', ')}`);
    await batchPut(ddb, tableName, organizations);
    return await run(tableName);
  } finally {
    await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
  }
}
