/**
 * The warehouse port (decisions §7) and its embedded default, which keeps
 * accounts and contacts in the service's own table. In production the port
 * is backed by the company's data platform.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchPut } from '../db/batch';
import { keys } from '../db/table';
import type { AccountStatus, WarehouseAccount } from './schema';

/** Read access to accounts and contacts. */
export interface Warehouse {
  /** Statuses of the given accounts; unknown IDs are absent from the map. */
  getAccountStatuses(accountIds: readonly string[]): Promise<Map<string, AccountStatus>>;
  /** Accounts with their contacts; unknown IDs are absent from the result. */
  getAccounts(accountIds: readonly string[]): Promise<WarehouseAccount[]>;
}

/** The embedded warehouse also takes imports (operator CLI, demo data). */
export interface EmbeddedWarehouse extends Warehouse {
  /** Upserts accounts (and replaces their contacts). */
  importAccounts(accounts: readonly WarehouseAccount[]): Promise<void>;
}

/** Builds the embedded (DynamoDB) warehouse. */
export function createEmbeddedWarehouse({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): EmbeddedWarehouse {
  return {
    async getAccountStatuses(accountIds) {
      const items = await batchGet(client, tableName, accountIds.map((id) => keys.warehouseAccount(id)), ['accountId', 'status']);
      return new Map(items.map((item) => [String(item.accountId), item.status as AccountStatus]));
    },

    async getAccounts(accountIds) {
      const items = await batchGet(client, tableName, accountIds.flatMap((id) => [keys.warehouseAccount(id), keys.warehouseContacts(id)]));
      const accounts = new Map<string, WarehouseAccount>();
      const contacts = new Map<string, WarehouseAccount['contacts']>();
      for (const item of items) {
        if (item.sk === 'ACCOUNT') {
          const { pk: _pk, sk: _sk, type: _type, ...account } = item;
          accounts.set(String(item.accountId), { ...(account as Omit<WarehouseAccount, 'contacts'>), contacts: [] });
        } else contacts.set(String(item.accountId), item.contacts as WarehouseAccount['contacts']);
      }
      return accountIds.flatMap((id) => {
        const account = accounts.get(id);
        return account ? [{ ...account, contacts: contacts.get(id) ?? [] }] : [];
      });
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
