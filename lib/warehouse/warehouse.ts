/**
 * The warehouse port (README.md#operator-cli) and its embedded default, which keeps
 * accounts and contacts in the service's own table. In production the port
 * is backed by the company's data platform.
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchPut } from '../db/batch';
import { scanItems } from '../db/query';
import { keys } from '../db/table';
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

/** The embedded warehouse also takes imports (operator CLI, demo data). */
export interface EmbeddedWarehouse extends Warehouse {
  /** Upserts accounts (and replaces their contacts). */
  importAccounts(accounts: readonly WarehouseAccount[]): Promise<void>;
  /**
   * Removes every contact `matches` accepts from every account (the vendor's erasure, docs/privacy.md): one Scan
   * of the contact items, each holding a match rewritten without it. An operator's path, never a request's.
   * @returns the removed contacts' IDs.
   */
  removeContacts(matches: (contact: WarehouseContact) => boolean): Promise<string[]>;
}

/** An account item's fields (the table's own attributes dropped). */
function accountFieldsOf(item: Record<string, unknown>): WarehouseAccountFields {
  const { pk: _pk, sk: _sk, type: _type, ...account } = item;
  return account as WarehouseAccountFields;
}

/** Builds the embedded (DynamoDB) warehouse. */
export function createEmbeddedWarehouse({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): EmbeddedWarehouse {
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
      const items = await batchGet(
        client,
        tableName,
        accountIds.flatMap((id) =>
          known?.has(id) ? [keys.warehouseContacts(id)] : [keys.warehouseAccount(id), keys.warehouseContacts(id)],
        ),
      );
      const accounts = new Map<string, WarehouseAccount>();
      const contacts = new Map<string, WarehouseAccount['contacts']>();
      for (const [id, fields] of known ?? []) accounts.set(id, { ...fields, contacts: [] });
      for (const item of items) {
        if (item.sk === 'ACCOUNT') accounts.set(String(item.accountId), { ...accountFieldsOf(item), contacts: [] });
        else contacts.set(String(item.accountId), item.contacts as WarehouseAccount['contacts']);
      }
      return accountIds.flatMap((id) => {
        const account = accounts.get(id);
        return account ? [{ ...account, contacts: contacts.get(id) ?? [] }] : [];
      });
    },

    async removeContacts(matches) {
      const removed: string[] = [];
      for await (const item of scanItems(client, tableName, '#type = :type', { ':type': 'warehouseContacts' })) {
        const contacts = (item.contacts ?? []) as WarehouseContact[];
        const kept = contacts.filter((contact) => !matches(contact));
        if (kept.length === contacts.length) continue;
        for (const contact of contacts) if (!kept.includes(contact)) removed.push(contact.contactId);
        await client.send(new PutCommand({ TableName: tableName, Item: { ...item, contacts: kept } }));
      }
      return removed;
    },

    async importAccounts(accounts) {
      await batchPut(
        client,
        tableName,
        accounts.flatMap(({ contacts, ...account }) => [
          { ...keys.warehouseAccount(account.accountId), type: 'warehouseAccount', ...account },
          { ...keys.warehouseContacts(account.accountId), type: 'warehouseContacts', accountId: account.accountId, contacts },
        ]),
      );
    },
  };
}
