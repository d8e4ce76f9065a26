/**
 * Each test file's own table (vitest.config.ts `setupFiles`): before the file's
 * modules load, `TABLE_NAME` names a new, empty table created on the run's
 * DynamoDB Local (test/support/global-setup.ts) from the same definition as
 * every table (infra/local/table.ts); after the file's last hook it is
 * deleted. Processes the file spawns (the operator CLI, an MCP server)
 * inherit the name.
 *
 * Why: one emulator serves every file. In one shared table a file that reads
 * the whole table (a Scan proving nothing of an organization leaked, or no
 * raw identifier anywhere) walked every other file's items: late in a full
 * run that walk took about 30 s, twice per test, and slowed every file's
 * workflows while it ran (issue #37: `test-mode` 136 s in the suite, 10 s
 * alone). A table per file costs what the file writes, a scan sees only the
 * file's own items, and the emulator's memory is given back when each file
 * ends. Tests still make their own organizations: files run three at a time
 * and tests of a file share its table.
 */
import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';

const shared = process.env.TABLE_NAME!;
process.env.TABLE_NAME = `${shared}-${randomUUID().slice(0, 8)}`;

// Imported only now: nothing reads the table's name before it is this file's.
const { dynamodb } = await import('../../lib/aws');
const { ensureTable } = await import('../../infra/local/table');
await ensureTable(dynamodb, process.env.TABLE_NAME);

afterAll(async () => {
  await dynamodb.send(new DeleteTableCommand({ TableName: process.env.TABLE_NAME }));
  process.env.TABLE_NAME = shared;
});
