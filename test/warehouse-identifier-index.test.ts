/**
 * The warehouse's identifier index (docs/data-model.md "Entities", the warehouse identifier index;
 * lib/warehouse/warehouse.ts): the import writes one entry per distinct
 * identifier hash of each account's contacts, and the vendor's erasure
 * (`ops privacy:erase`, `removeContacts`) finds the person through it: one
 * Query per identifier hash and one read of each account that holds the
 * person, never a Scan, however large the warehouse. An import that drops a
 * contact deletes the contact's entries. Counted on the wire
 * (SDK middleware), against DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ddb, dynamodb } from '../lib/aws';
import { config } from '../lib/config';
import * as keys from '../lib/db/keys';
import { createEmbeddedWarehouse, warehouseItemsOf } from '../lib/warehouse/warehouse';
import { contactHashes, hashIdentifier } from '../lib/warehouse/identifiers';
import { blankAccount, blankContact, type WarehouseAccount } from '../lib/warehouse/schema';
import { ensureTable } from '../infra/local/table';

const tableName = `${config.tableName}-whindex-${randomUUID()}`;
const warehouse = createEmbeddedWarehouse({ client: ddb, tableName });
const P = randomUUID().slice(0, 8);
const PERSON_EMAIL = `Ann.Person.${P}@Example.com`;

/** 300 accounts of 5 contacts; the person is a contact of accounts 7 and 250 (two warehouse contacts, one email). */
const accounts: WarehouseAccount[] = Array.from({ length: 300 }, (_, a) => ({
  ...blankAccount(`acc_idx_${P}_${a}`),
  name: `Company ${a}`,
  country: 'US',
  contacts: Array.from({ length: 5 }, (_, c) => ({
    ...blankContact(`con_${P}_${a}_${c}`),
    email: (a === 7 || a === 250) && c === 2 ? PERSON_EMAIL.toLowerCase() : `p${a}.${c}@x${P}.example`,
    mobilePhone: c % 2 === 0 ? `+1555${String(a * 10 + c).padStart(7, '0')}` : null,
    linkedinUrl: `https://www.linkedin.com/in/p-${P}-${a}-${c}`,
  })),
}));

/** Every command sent to this test's table while `run` runs: its name and the keys or partitions it read. */
async function commandsDuring<T>(run: () => Promise<T>): Promise<{ result: T; commands: { name: string; reads: number }[] }> {
  const commands: { name: string; reads: number }[] = [];
  const name = `count-${randomUUID()}`;
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; RequestItems?: Record<string, { Keys?: unknown[] } | unknown[]> };
      const batch = input.RequestItems?.[tableName];
      if (input.TableName === tableName || batch !== undefined)
        commands.push({
          name: context.commandName ?? '',
          reads: Array.isArray(batch) ? 0 : ((batch as { Keys?: unknown[] } | undefined)?.Keys?.length ?? (input.TableName ? 1 : 0)),
        });
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), commands };
  } finally {
    ddb.middlewareStack.remove(name);
  }
}

beforeAll(async () => {
  await ensureTable(dynamodb, tableName);
  await warehouse.importAccounts(accounts);
});
afterAll(async () => {
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
});

describe('warehouse identifier index', () => {
  it('is written by the import: one entry per distinct identifier hash of an account', () => {
    const items = warehouseItemsOf(accounts[7]!);
    const distinct = new Set(accounts[7]!.contacts.flatMap(contactHashes));
    expect(items.filter((item) => item.type === 'warehouseIdentifier')).toHaveLength(distinct.size);
    expect(items).toHaveLength(2 + distinct.size);
    expect(items.map((item) => item.pk)).toContain(
      keys.warehouseIdentifierPartition(hashIdentifier({ type: 'email', value: PERSON_EMAIL })!.hash),
    );
    // The entries name hashes only: no raw identifier in any of them.
    for (const item of items.filter((i) => i.type === 'warehouseIdentifier')) expect(JSON.stringify(item)).not.toMatch(/@|linkedin|\+1555/);
  });

  it('finds and removes the person with one Query per identifier and one read per account holding them: no Scan', async () => {
    const email = hashIdentifier({ type: 'email', value: PERSON_EMAIL })!.hash;
    const phone = hashIdentifier({ type: 'phone', value: '+15550000072' })!.hash; // account 7, contact 2's mobile
    const { result: removed, commands } = await commandsDuring(() => warehouse.removeContacts(new Set([email, phone])));
    expect(removed.sort()).toEqual([`con_${P}_250_2`, `con_${P}_7_2`]);
    expect(commands.filter((c) => c.name === 'ScanCommand')).toEqual([]);
    expect(commands.filter((c) => c.name === 'QueryCommand')).toHaveLength(2);
    // One read of each of the two accounts' contacts, nothing else.
    expect(commands.filter((c) => c.name === 'BatchGetItemCommand').reduce((n, c) => n + c.reads, 0)).toBe(2);
    expect(commands.filter((c) => c.name === 'PutItemCommand')).toHaveLength(2);

    // The warehouse no longer holds them; every other contact is still there.
    const after = await warehouse.getAccounts([accounts[7]!.accountId, accounts[250]!.accountId, accounts[8]!.accountId]);
    expect(after.map((a) => a.contacts.length)).toEqual([4, 4, 5]);
    expect(JSON.stringify(after)).not.toContain(PERSON_EMAIL.toLowerCase());

    // The removed contacts' entries are gone (their linkedin URL too); a second erase reads one Query per hash and nothing more.
    const linkedin = hashIdentifier({ type: 'linkedin_url', value: `https://www.linkedin.com/in/p-${P}-7-2` })!.hash;
    const again = await commandsDuring(() => warehouse.removeContacts(new Set([email, linkedin])));
    expect(again.result).toEqual([]);
    expect(again.commands.map((c) => c.name)).toEqual(['QueryCommand', 'QueryCommand']);
  });

  it('loses the entries of the contacts an import drops, and keeps those a kept contact still holds', async () => {
    const accountId = `acc_idx_${P}_drop`;
    const shared = `shared.${P}@example.com`;
    const gone = { ...blankContact(`con_${P}_drop_a`), email: `gone.${P}@example.com`, linkedinUrl: `https://linkedin.com/in/gone-${P}` };
    const sharing = { ...blankContact(`con_${P}_drop_b`), email: shared };
    const kept = { ...blankContact(`con_${P}_drop_c`), email: shared };
    const before: WarehouseAccount = { ...accounts[0]!, accountId, contacts: [gone, sharing, kept] };
    await warehouse.importAccounts([before]);
    const holders = async (hash: string) =>
      (
        (
          await ddb.send(
            new QueryCommand({
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': keys.warehouseIdentifierPartition(hash) },
              ConsistentRead: true,
            }),
          )
        ).Items ?? []
      ).map((item) => item.accountId);
    for (const hash of contactHashes(gone)) expect(await holders(hash)).toEqual([accountId]);

    // A later import keeps only the third contact: the first two's entries go, the shared email's stays.
    await warehouse.importAccounts([{ ...before, contacts: [kept] }]);
    for (const hash of [...contactHashes(gone), ...contactHashes(sharing).filter((h) => !contactHashes(kept).includes(h))])
      expect(await holders(hash)).toEqual([]);
    for (const hash of contactHashes(kept)) expect(await holders(hash)).toEqual([accountId]);
    // An erasure of the dropped person finds no account to read.
    const { result, commands } = await commandsDuring(() => warehouse.removeContacts(new Set(contactHashes(gone))));
    expect(result).toEqual([]);
    expect(commands.filter((c) => c.name === 'BatchGetItemCommand')).toEqual([]);
  });

  it('reads nothing of the warehouse for a person it never held', async () => {
    const stranger = hashIdentifier({ type: 'email', value: `nobody.${P}@example.com` })!.hash;
    const { result, commands } = await commandsDuring(() => warehouse.removeContacts(new Set([stranger])));
    expect(result).toEqual([]);
    expect(commands.map((c) => c.name)).toEqual(['QueryCommand']);
  });
});
