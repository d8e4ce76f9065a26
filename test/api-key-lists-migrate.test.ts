/**
 * The API-key list migration (lib/migrations/api-key-lists.ts), against
 * DynamoDB Local in a table of its own: organizations stored before they
 * listed their active keys get the list of exactly their keys not revoked,
 * once; a list that keys written by older code left wrong is repaired; and a
 * key revoked while an organization is migrated is not listed.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { hashApiKey, newApiKey } from '../lib/ids';
import { createApiKeyStore } from '../lib/organizations/api-keys';
import { migrateApiKeyLists } from '../lib/migrations/api-key-lists';
import { createOrganizationStore } from '../lib/organizations/store';
import { ensureTable } from '../infra/local/table';
import { asBeforeTheList } from './support/api-key-lists';

async function freshTable() {
  const tableName = `keylists-${randomBytes(4).toString('hex')}`;
  await ensureTable(dynamodb, tableName);
  return {
    tableName,
    organizations: createOrganizationStore({ client: ddb, tableName }),
    apiKeys: createApiKeyStore({ client: ddb, tableName }),
  };
}

async function listOf(tableName: string, organizationId: string): Promise<{ hashes: string[]; since: unknown }> {
  const { Item } = await ddb.send(new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }));
  return { hashes: [...((Item?.activeApiKeys as Set<string> | undefined) ?? [])].sort(), since: Item?.activeApiKeysSince };
}

describe('migrateApiKeyLists', () => {
  it("lists each old organization's keys not revoked (none: an empty list), leaves listed organizations alone, and is idempotent", async () => {
    const { tableName, organizations, apiKeys } = await freshTable();
    // Old, three keys, the first revoked.
    const old = await organizations.create({ name: 'Old' });
    const second = await apiKeys.create(old.organization.id);
    const third = await apiKeys.create(old.organization.id);
    await apiKeys.revoke(old.apiKey);
    await asBeforeTheList(old.organization.id, tableName);
    // Old, its only key revoked.
    const revokedOnly = await organizations.create({ name: 'Old, no active key' });
    await apiKeys.revoke(revokedOnly.apiKey);
    await asBeforeTheList(revokedOnly.organization.id, tableName);
    // Listed already.
    const listed = await organizations.create({ name: 'Listed' });
    const listedBefore = await listOf(tableName, listed.organization.id);

    expect(await migrateApiKeyLists({ client: ddb, tableName })).toEqual({ organizations: 2, keys: 2, removed: 0 });
    const oldList = await listOf(tableName, old.organization.id);
    expect(oldList.hashes).toEqual([hashApiKey(second), hashApiKey(third)].sort());
    expect(typeof oldList.since).toBe('string');
    const emptyList = await listOf(tableName, revokedOnly.organization.id);
    expect(emptyList.hashes).toEqual([]);
    expect(typeof emptyList.since).toBe('string');
    expect(await listOf(tableName, listed.organization.id)).toEqual(listedBefore);

    expect(await migrateApiKeyLists({ client: ddb, tableName })).toEqual({ organizations: 0, keys: 0, removed: 0 });
    expect(await listOf(tableName, old.organization.id)).toEqual(oldList);
  });

  it('repairs a list that older code left wrong: a key revoked without leaving the list, a key issued without joining it', async () => {
    const { tableName, organizations } = await freshTable();
    const org = await organizations.create({ name: 'Skewed' });
    // As a version without the list would: revoke by the key item alone, issue by the key item alone.
    await ddb.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.apiKey(hashApiKey(org.apiKey)),
        UpdateExpression: 'SET revokedAt = :now',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      }),
    );
    const issuedElsewhere = newApiKey();
    await ddb.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.apiKey(hashApiKey(issuedElsewhere)),
          type: 'apiKey',
          keyHash: hashApiKey(issuedElsewhere),
          organizationId: org.organization.id,
          createdAt: new Date().toISOString(),
        },
      }),
    );
    const before = await listOf(tableName, org.organization.id);
    expect(before.hashes).toEqual([hashApiKey(org.apiKey)]);

    expect(await migrateApiKeyLists({ client: ddb, tableName })).toEqual({ organizations: 1, keys: 1, removed: 1 });
    // Still complete from the same time; only its members changed.
    expect(await listOf(tableName, org.organization.id)).toEqual({ hashes: [hashApiKey(issuedElsewhere)], since: before.since });
    expect(await migrateApiKeyLists({ client: ddb, tableName })).toEqual({ organizations: 0, keys: 0, removed: 0 });
  });

  it('a key revoked while its organization is migrated is not listed (the transaction checks every listed key, and is done again)', async () => {
    const { tableName, organizations, apiKeys } = await freshTable();
    const org = await organizations.create({ name: 'Racing' });
    const other = await apiKeys.create(org.organization.id);
    await asBeforeTheList(org.organization.id, tableName);
    // Just before the migration's first transaction for the organization is sent, the first key is revoked.
    let revoked = false;
    const name = 'revokeDuringMigration';
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        if (!revoked && context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes('activeApiKeysSince')) {
          revoked = true;
          await apiKeys.revoke(org.apiKey);
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      expect(await migrateApiKeyLists({ client: ddb, tableName })).toEqual({ organizations: 1, keys: 1, removed: 0 });
    } finally {
      ddb.middlewareStack.remove(name);
    }
    expect(revoked).toBe(true);
    expect((await listOf(tableName, org.organization.id)).hashes).toEqual([hashApiKey(other)]);
  });
});
