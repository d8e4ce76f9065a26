/**
 * The key-description migration (lib/migrations/api-key-descriptions.ts), against DynamoDB Local
 * in a table of its own: keys issued before key IDs (seeded as the old code wrote them: a key
 * item without `keyId`, no description) get their ID and description once, with every scope;
 * keys/list shows them; a run stopped midway is resumed by running it again; a second run
 * changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import * as keys from '../lib/db/keys';
import { hashApiKey, newApiKey } from '../lib/ids';
import { SCOPES } from '../lib/http/scopes';
import { createApiKeyStore, EARLIER_KEY_NAME, earlierKeyDescriptionItems } from '../lib/organizations/api-keys';
import { transactWrite } from '../lib/db/conditional';
import { createOrganizationStore } from '../lib/organizations/store';
import { migrateApiKeyDescriptions } from '../lib/migrations/api-key-descriptions';
import { ensureTable } from '../infra/local/table';

async function freshTable() {
  const tableName = `keydescriptions-${randomBytes(4).toString('hex')}`;
  await ensureTable(dynamodb, tableName);
  return {
    tableName,
    organizations: createOrganizationStore({ client: ddb, tableName }),
    apiKeys: createApiKeyStore({ client: ddb, tableName }),
  };
}

/** A key item as the code before key IDs wrote it: hash, organization, times; no ID, no scopes, no description. */
async function seedOldKey(tableName: string, organizationId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const secret = newApiKey();
  const keyHash = hashApiKey(secret);
  await ddb.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...keys.apiKey(keyHash), type: 'apiKey', keyHash, organizationId, createdAt: '2026-01-02T03:04:05.000Z', ...extra },
    }),
  );
  return secret;
}

async function allKeys(apiKeys: ReturnType<typeof createApiKeyStore>, organizationId: string) {
  const all = [];
  let after: string | undefined;
  do {
    const page = await apiKeys.page(organizationId, 2, after);
    all.push(...page.keys);
    after = page.next;
  } while (after !== undefined);
  return all;
}

describe('migrateApiKeyDescriptions', () => {
  it('describes each key from before key IDs once, with every scope, so keys/list shows it; idempotent and resumable', async () => {
    const { tableName, organizations, apiKeys } = await freshTable();
    const org = await organizations.create({ name: 'Old keys' });
    const described = await allKeys(apiKeys, org.organization.id);
    expect(described).toHaveLength(1); // the organization's first key, issued with its description
    const active = await seedOldKey(tableName, org.organization.id);
    const revoked = await seedOldKey(tableName, org.organization.id, { revokedAt: '2026-02-01T00:00:00.000Z' });
    const third = await seedOldKey(tableName, org.organization.id);

    const first = await migrateApiKeyDescriptions({ client: ddb, tableName });
    expect(first).toEqual({ keys: 3 });
    expect(await migrateApiKeyDescriptions({ client: ddb, tableName })).toEqual({ keys: 0 });

    const listed = await allKeys(apiKeys, org.organization.id);
    expect(listed).toHaveLength(4);
    const earlier = listed.filter((key) => key.name === EARLIER_KEY_NAME);
    expect(earlier).toHaveLength(3);
    for (const key of earlier) {
      expect(key).toMatchObject({ scopes: [...SCOPES], createdAt: '2026-01-02T03:04:05.000Z', prefix: 'cek_', test: false });
      expect(key.id).toMatch(/^key_/);
    }
    expect(earlier.filter((key) => key.revokedAt === '2026-02-01T00:00:00.000Z')).toHaveLength(1);
    // Each key item names its ID, the one the list shows; the secrets still authenticate as before.
    for (const secret of [active, revoked, third]) {
      const record = await apiKeys.find(secret);
      expect(earlier.map((key) => key.id)).toContain(record?.keyId);
      expect(record?.scopes).toBeUndefined();
    }
    // The key is now managed by its ID: revoking it by ID stops its secret.
    const activeId = (await apiKeys.find(active))!.keyId!;
    await apiKeys.revokeById(org.organization.id, activeId);
    expect((await apiKeys.find(active))?.revokedAt).toEqual(expect.any(String));
  });

  it('resumes a run that stopped midway: the key done is skipped, the rest described', async () => {
    const { tableName, organizations, apiKeys } = await freshTable();
    const org = await organizations.create({ name: 'Interrupted' });
    const secrets = [
      await seedOldKey(tableName, org.organization.id),
      await seedOldKey(tableName, org.organization.id),
      await seedOldKey(tableName, org.organization.id),
    ];
    // A run that died after its first key: that key's transaction, exactly as the migration writes it.
    const { Item } = await ddb.send(
      new GetCommand({ TableName: tableName, Key: keys.apiKey(hashApiKey(secrets[0]!)), ConsistentRead: true }),
    );
    expect((await transactWrite(ddb, { TransactItems: earlierKeyDescriptionItems(tableName, Item!) })).ok).toBe(true);
    const doneId = (await apiKeys.find(secrets[0]!))?.keyId;
    expect(await migrateApiKeyDescriptions({ client: ddb, tableName })).toEqual({ keys: 2 });
    expect((await apiKeys.find(secrets[0]!))?.keyId).toBe(doneId);
    const ids = await Promise.all(secrets.map(async (secret) => (await apiKeys.find(secret))?.keyId));
    expect(new Set(ids).size).toBe(3);
    expect(await allKeys(apiKeys, org.organization.id)).toHaveLength(4);
    expect(await migrateApiKeyDescriptions({ client: ddb, tableName })).toEqual({ keys: 0 });
  });
});
