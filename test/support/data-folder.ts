/**
 * Data folders for the stacks a test spawns (`npm start` with `DATA_DIR` or
 * `--data-dir`, `startLocalStack({ dataDir })`): a new empty folder on a
 * memory-backed file system when the machine has one (`/dev/shm`), else in
 * the system's temporary folder.
 *
 * Why: with a data folder DynamoDB Local keeps its table in an SQLite file
 * and syncs it to disk on every write. A first start writes the demo
 * warehouse (3,000 accounts, each with its contacts and identifier index
 * entries): on a disk shared with other jobs that took over 8 min at load
 * 20 (issue #37), against 50 s in memory at the same load. What the tests
 * prove does not change: the folder's files outlive a `kill -9` of the
 * stack, and the next start reads them back, on either file system.
 */
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Where data folders go: `/dev/shm` if it is writable, else the system's temporary folder. */
function parentFolder(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * Makes a new, empty folder named `<prefix>XXXXXX` for a spawned stack's data; the caller removes it.
 * @returns its absolute path.
 */
export function stackDataFolder(prefix: string): string {
  return mkdtempSync(path.join(parentFolder(), prefix));
}
