/**
 * The import option that leaves out the warehouse identifier index (lib/warehouse/warehouse.ts
 * `WarehouseImportOptions`) exists for the bench's large fixtures and tests that never erase, no product path: an account imported so cannot be
 * found by the vendor's erasure (docs/data-model.md "Entities", the warehouse identifier index).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { warehouseItemsOf } from '../../lib/warehouse/warehouse';
import { contactHashes } from '../../lib/warehouse/identifiers';
import { blankAccount, blankContact, type WarehouseAccount } from '../../lib/warehouse/schema';

const account: WarehouseAccount = {
  ...blankAccount('acc_import_options'),
  contacts: [1, 2, 3].map((c) => ({
    ...blankContact(`con_import_options_${c}`),
    email: `person${c}@example.com`,
    mobilePhone: `+1555000000${c}`,
  })),
};

describe('the import without the identifier index', () => {
  it('writes the account and contacts items exactly as the full import does, and no index entry', () => {
    const full = warehouseItemsOf(account);
    const lean = warehouseItemsOf(account, { withoutIdentifierIndex: true });
    const indexEntries = full.filter((item) => item.type === 'warehouseIdentifier');
    expect(indexEntries).toHaveLength(new Set(account.contacts.flatMap(contactHashes)).size);
    expect(indexEntries.length).toBeGreaterThan(0);
    expect(lean).toEqual(full.filter((item) => item.type !== 'warehouseIdentifier'));
    expect(lean.map((item) => item.type)).toEqual(['warehouseAccount', 'warehouseContacts']);
  });

  it('is named outside test/ by the bench fixtures alone (and its definition): no product path, CLI or demo import leaves the index out', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = execFileSync('git', ['ls-files', '*.ts', '*.mts', '*.js', '*.mjs', '*.cjs'], { cwd: root, encoding: 'utf8' }).split('\n');
    const users = files.filter(
      (file) => file !== '' && !file.startsWith('test/') && readFileSync(path.join(root, file), 'utf8').includes('withoutIdentifierIndex'),
    );
    expect(users.sort()).toEqual(['bench/lib/fixtures.ts', 'lib/warehouse/warehouse.ts']);
  });
});
