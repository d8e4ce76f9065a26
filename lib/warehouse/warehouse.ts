/**
 * The warehouse port (README.md#operator-cli) and its embedded default, which keeps
 * accounts and contacts in the service's own table. In production the port
 * is backed by the company's data platform.
 */
import { paginateQuery, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchDelete, batchGet, batchPut } from '../db/batch';
import { batchGetRaw } from '../db/raw-read';
import * as keys from '../db/keys';
import { contactHashes } from './identifiers';
import type { WarehouseAccount, WarehouseAccountFields, WarehouseContact } from './schema';

/** An account without its contacts: its status and the fields a result row carries (the embedded warehouse's account item). */
export type { WarehouseAccountFields };

/** Read access to accounts and contacts. */
export interface Warehouse {
  /**
   * The given accounts without their contacts (status and fields, one read
   * of each account; launch evaluation); unknown IDs are absent from the map.
   */
  getAccountStatuses(accountIds: readonly string[]): Promise<Map<string, WarehouseAccountFields>>;
  /**
   * Accounts with their contacts; unknown IDs are absent from the result.
   * @param known - accounts whose fields were read already (at launch, carried in the workflow's batch
   *   objects): only their contacts are read, and the fields given are returned with them (issue #29).
   */
  getAccounts(accountIds: readonly string[], known?: ReadonlyMap<string, WarehouseAccountFields>): Promise<WarehouseAccount[]>;
}

/** How an import writes (every import of the product writes the whole layout: leave it unset). */
export interface WarehouseImportOptions {
  /**
   * Writes the accounts and their contacts without their identifier-index entries, which only the vendor's
   * erasure reads (about 35 items an account of 10 contacts). For the bench's large fixtures (bench/lib/fixtures.ts)
   * and tests that never run the vendor's erasure (test/enrichment/support.ts `NO_ERASURE`), never for a product
   * path: test/unit/warehouse-import-options.test.ts fails if any other file outside test/ sets it. The vendor's
   * erasure cannot find a person in accounts imported so.
   */
  withoutIdentifierIndex?: true;
}

/** The embedded warehouse also takes imports (operator CLI, demo data). */
export interface EmbeddedWarehouse extends Warehouse {
  /**
   * Upserts accounts (and replaces their contacts) with their identifier-index entries (see {@link WarehouseImportOptions}),
   * keeping the index exact: the stored contacts of the accounts are read first (one strongly consistent BatchGetItem
   * per 100 accounts; nothing to hash for a new account), and the entries of identifiers no new contact of the account
   * holds are deleted after the write.
   */
  importAccounts(accounts: readonly WarehouseAccount[], options?: WarehouseImportOptions): Promise<void>;
  /**
   * Removes every contact holding any of `hashes` (identifier hashes,
   * lib/warehouse/identifiers.ts) from every account (the vendor's erasure,
   * docs/privacy.md), through the identifier index: one Query per hash, one
   * read of each account found, a write of each account that held one (and
   * of the index entries it no longer needs). Reads in proportion to the
   * person's contacts, not the warehouse. An operator's path, never a request's.
   * @returns the removed contacts' IDs.
   */
  removeContacts(hashes: ReadonlySet<string>): Promise<string[]>;
}

/** An account item's fields (the table's own attributes dropped). */
function accountFieldsOf(item: Record<string, unknown>): WarehouseAccountFields {
  const { pk: _pk, sk: _sk, type: _type, ...account } = item;
  return account as WarehouseAccountFields;
}

/** The distinct identifier hashes of a list of contacts. */
const accountHashes = (contacts: readonly WarehouseContact[]): Set<string> => new Set(contacts.flatMap(contactHashes));

/**
 * The items the embedded warehouse stores for one account: the account, its
 * contacts, and one identifier-index entry per distinct identifier hash of
 * its contacts (docs/data-model.md "Entities", the warehouse identifier index: about 3.5 a contact). An
 * import replaces the first two and deletes the index entries of the contacts it drops
 * ({@link EmbeddedWarehouse.importAccounts}).
 * @param options - `withoutIdentifierIndex`: the bench's fixtures and tests that never erase (see {@link WarehouseImportOptions}).
 */
export function warehouseItemsOf(
  { contacts, ...account }: WarehouseAccount,
  options: WarehouseImportOptions = {},
): Record<string, unknown>[] {
  return [
    { ...keys.warehouseAccount(account.accountId), type: 'warehouseAccount', ...account },
    { ...keys.warehouseContacts(account.accountId), type: 'warehouseContacts', accountId: account.accountId, contacts },
    ...[...(options.withoutIdentifierIndex ? [] : accountHashes(contacts))].map((hash) => ({
      ...keys.warehouseIdentifier(hash, account.accountId),
      type: 'warehouseIdentifier',
      accountId: account.accountId,
    })),
  ];
}

/**
 * The embedded warehouse's reads alone ({@link Warehouse}: the same reads as {@link createEmbeddedWarehouse}), for a
 * function that never imports or erases: its bundle then carries none of the import, identifier-index and erasure
 * code (the launch's CampaignsEnrich and the workflow's reads; bench `bundles`).
 */
export function createWarehouseReader({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): Warehouse {
  return {
    async getAccountStatuses(accountIds) {
      // The whole account item: a read unit is charged on the item's size, not on the attributes returned, and the fields go into the batch objects.
      const items = await batchGet(
        client,
        tableName,
        accountIds.map((id) => keys.warehouseAccount(id)),
      );
      return new Map(items.map((item) => [String(item.accountId), accountFieldsOf(item)]));
    },

    async getAccounts(accountIds, known) {
      // The contacts items are parsed outside the SDK (lib/db/raw-read.ts: one JSON.parse and one `unmarshall` of the
      // contacts; the SDK's deserializer and the DocumentClient each walked every attribute of every contact, about a
      // third of the workflow's CPU: docs/data-model.md "Warehouse reads"). The account items (only those the caller
      // does not know: none in the workflow, whose batch objects carry them) are read alongside, as whole items.
      const unknown = accountIds.filter((id) => !known?.has(id));
      const [contactItems, accountItems] = await Promise.all([
        batchGetRaw(
          client,
          tableName,
          accountIds.map((id) => keys.warehouseContacts(id)),
          ['accountId', 'contacts'],
        ),
        unknown.length === 0
          ? []
          : batchGet(
              client,
              tableName,
              unknown.map((id) => keys.warehouseAccount(id)),
            ),
      ]);
      const accounts = new Map<string, WarehouseAccountFields>(known);
      for (const item of accountItems) accounts.set(String(item.accountId), accountFieldsOf(item));
      const contacts = new Map<string, WarehouseAccount['contacts']>();
      for (const item of contactItems) contacts.set(String(item.accountId), item.contacts as WarehouseAccount['contacts']);
      return accountIds.flatMap((id) => {
        const account = accounts.get(id);
        return account ? [{ ...account, contacts: contacts.get(id) ?? [] }] : [];
      });
    },
  };
}

/** Builds the embedded (DynamoDB) warehouse: the reads of {@link createWarehouseReader}, imports and the vendor's erasure. */
export function createEmbeddedWarehouse({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): EmbeddedWarehouse {
  return {
    ...createWarehouseReader({ client, tableName }),

    async removeContacts(hashes) {
      // The accounts the index names for any of the hashes.
      const accountIds = new Set<string>();
      for (const hash of hashes) {
        const pages = paginateQuery(
          { client },
          {
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': keys.warehouseIdentifierPartition(hash) },
            ConsistentRead: true,
          },
        );
        for await (const page of pages) for (const item of page.Items ?? []) accountIds.add(String(item.accountId));
      }
      if (accountIds.size === 0) return [];
      const items = await batchGet(
        client,
        tableName,
        [...accountIds].map((id) => keys.warehouseContacts(id)),
        undefined,
        { consistentRead: true },
      );
      const removed: string[] = [];
      const staleEntries: Record<string, unknown>[] = [];
      const held = new Set<string>();
      for (const item of items) {
        const accountId = String(item.accountId);
        held.add(accountId);
        const contacts = (item.contacts ?? []) as WarehouseContact[];
        const kept: WarehouseContact[] = [];
        const gone: WarehouseContact[] = [];
        for (const contact of contacts) (contactHashes(contact).some((hash) => hashes.has(hash)) ? gone : kept).push(contact);
        if (gone.length > 0) {
          await client.send(new PutCommand({ TableName: tableName, Item: { ...item, contacts: kept } }));
          removed.push(...gone.map((contact) => contact.contactId));
        }
        // Entries of the removed contacts' identifiers that no kept contact holds, and entries the account no longer
        // justifies (contacts replaced by a later import): the index keeps only what an account holds.
        const stillHeld = accountHashes(kept);
        for (const hash of new Set([...accountHashes(gone), ...hashes]))
          if (!stillHeld.has(hash)) staleEntries.push(keys.warehouseIdentifier(hash, accountId));
      }
      // Accounts the index names but the warehouse no longer holds.
      for (const accountId of accountIds)
        if (!held.has(accountId)) for (const hash of hashes) staleEntries.push(keys.warehouseIdentifier(hash, accountId));
      await batchDelete(client, tableName, staleEntries);
      return removed;
    },

    async importAccounts(accounts, options) {
      const write = () =>
        batchPut(
          client,
          tableName,
          accounts.flatMap((account) => warehouseItemsOf(account, options)),
        );
      if (options?.withoutIdentifierIndex) return void (await write());
      // The index entries of contacts this import drops: hashes the stored contacts hold that the new ones do not.
      const incoming = new Map(accounts.map((account) => [account.accountId, account.contacts]));
      const stored = await batchGet(
        client,
        tableName,
        [...incoming.keys()].map((id) => keys.warehouseContacts(id)),
        undefined,
        { consistentRead: true },
      );
      const dropped: Record<string, unknown>[] = [];
      for (const item of stored) {
        const accountId = String(item.accountId);
        const kept = accountHashes(incoming.get(accountId) ?? []);
        for (const hash of accountHashes((item.contacts ?? []) as WarehouseContact[]))
          if (!kept.has(hash)) dropped.push(keys.warehouseIdentifier(hash, accountId));
      }
      await write();
      await batchDelete(client, tableName, dropped);
    },
  };
}
