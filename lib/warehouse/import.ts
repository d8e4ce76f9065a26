/**
 * Warehouse import from JSON lines (decisions §7), validated line by line.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { formatIssues } from '../http/issues';
import { WarehouseAccountSchema, type WarehouseAccount } from './schema';
import type { EmbeddedWarehouse } from './warehouse';

/** Accounts written per import round. */
const IMPORT_CHUNK = 1_000;

/**
 * Imports a JSON-lines file into the embedded warehouse.
 * @returns counts of accounts and contacts imported.
 * @throws Error naming the line and field of the first invalid record (nothing after it is written).
 */
export async function importWarehouseFile(warehouse: EmbeddedWarehouse, file: string): Promise<{ accounts: number; contacts: number }> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let pending: WarehouseAccount[] = [];
  let accounts = 0;
  let contacts = 0;
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`line ${lineNumber}: not valid JSON`);
    }
    const parsed = WarehouseAccountSchema.safeParse(value);
    if (!parsed.success) throw new Error(`line ${lineNumber}: ${formatIssues(parsed.error.issues).join('; ')}`);
    pending.push(parsed.data);
    accounts++;
    contacts += parsed.data.contacts.length;
    if (pending.length >= IMPORT_CHUNK) {
      await warehouse.importAccounts(pending);
      pending = [];
    }
  }
  if (pending.length > 0) await warehouse.importAccounts(pending);
  return { accounts, contacts };
}
