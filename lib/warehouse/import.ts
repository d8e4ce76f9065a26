/**
 * Warehouse import from JSON lines (decisions §7, §8): the whole file is
 * validated before anything is written, so a bad line anywhere writes
 * nothing and the error names that line.
 *
 * Two passes over the file rather than one held in memory: the first parses
 * and validates every line (and counts), the second parses again and writes
 * in chunks. A file of 100,000 accounts with their contacts never sits in
 * memory at once.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { formatIssues, useEnglishIssueMessages } from '../http/issues';
import { WarehouseAccountSchema, type WarehouseAccount } from './schema';
import type { EmbeddedWarehouse } from './warehouse';

/** Accounts written per import round. */
const IMPORT_CHUNK = 1_000;

/**
 * A line of an import file that cannot be imported. Raised while validating,
 * before any write: nothing of the file has been written.
 */
export class ImportFileError extends Error {
  /**
   * @param file - the file as the caller named it.
   * @param line - 1-based line number of the first bad line.
   * @param problem - what is wrong with it (field path and reason).
   */
  constructor(
    readonly file: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${file}: line ${line}: ${problem}`);
    this.name = 'ImportFileError';
  }
}

/** Progress of an import: `validate` counts bytes read of `total`, `write` counts accounts written of `total`. */
export interface ImportProgress {
  phase: 'validate' | 'write';
  done: number;
  total: number;
}

/** Options of {@link importWarehouseFile}. */
export interface ImportOptions {
  /** Validate and count only; write nothing. */
  dryRun?: boolean;
  /** Called as the import advances (for a progress bar). */
  onProgress?: (progress: ImportProgress) => void;
}

/** Counts of an import file. */
export interface ImportCounts {
  /** Account lines (an account listed twice counts twice; the last line wins). */
  accounts: number;
  /** Contacts over all account lines. */
  contacts: number;
}

/**
 * Reads the valid accounts of a JSON-lines file in order, with the bytes read so far.
 * @throws ImportFileError at the first line that is not JSON or not a warehouse account.
 */
async function* readAccounts(file: string): AsyncGenerator<{ account: WarehouseAccount; bytesRead: number }> {
  useEnglishIssueMessages();
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let lineNumber = 0;
  let bytesRead = 0;
  for await (const line of lines) {
    lineNumber++;
    bytesRead += Buffer.byteLength(line, 'utf8') + 1;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ImportFileError(file, lineNumber, 'not valid JSON');
    }
    const parsed = WarehouseAccountSchema.safeParse(value);
    if (!parsed.success) throw new ImportFileError(file, lineNumber, formatIssues(parsed.error.issues).join('; '));
    yield { account: parsed.data, bytesRead };
  }
}

/**
 * Validates a whole JSON-lines file and counts it, writing nothing.
 * @returns the counts of the file.
 * @throws ImportFileError naming the first bad line.
 */
export async function validateWarehouseFile(file: string, onProgress?: ImportOptions['onProgress']): Promise<ImportCounts> {
  const total = (await stat(file)).size;
  let accounts = 0;
  let contacts = 0;
  let reported = 0;
  for await (const { account, bytesRead } of readAccounts(file)) {
    accounts++;
    contacts += account.contacts.length;
    if (onProgress && bytesRead - reported >= 256 * 1024) {
      reported = bytesRead;
      onProgress({ phase: 'validate', done: Math.min(bytesRead, total), total });
    }
  }
  onProgress?.({ phase: 'validate', done: total, total });
  return { accounts, contacts };
}

/**
 * Imports a JSON-lines file into the embedded warehouse (upserts; an
 * account's contacts are replaced): validates the whole file first, then
 * writes it in chunks of 1,000 accounts.
 *
 * A bad line writes nothing. A failure while writing (DynamoDB unreachable,
 * throttled beyond the retries) can leave earlier chunks written; running
 * the import again is safe, since every write is an upsert.
 *
 * @returns counts of accounts and contacts (imported, or that would be with `dryRun`).
 * @throws ImportFileError naming the first invalid line (nothing written).
 */
export async function importWarehouseFile(warehouse: EmbeddedWarehouse, file: string, options: ImportOptions = {}): Promise<ImportCounts> {
  const counts = await validateWarehouseFile(file, options.onProgress);
  if (options.dryRun) return counts;
  let pending: WarehouseAccount[] = [];
  let written = 0;
  options.onProgress?.({ phase: 'write', done: 0, total: counts.accounts });
  const flush = async () => {
    await warehouse.importAccounts(pending);
    written += pending.length;
    pending = [];
    options.onProgress?.({ phase: 'write', done: written, total: counts.accounts });
  };
  for await (const { account } of readAccounts(file)) {
    pending.push(account);
    if (pending.length >= IMPORT_CHUNK) await flush();
  }
  if (pending.length > 0) await flush();
  return counts;
}
