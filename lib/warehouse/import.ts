/**
 * Warehouse import from JSON lines (README.md#operator-cli): the whole file is
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

/** Bad lines an {@link ImportFileError} names at most; the rest are counted ("and N more"). */
export const MAX_NAMED_BAD_LINES = 20;

/** One line of an import file that cannot be imported. */
export interface BadLine {
  /** 1-based line number. */
  line: number;
  /** What is wrong with it (field path and reason). */
  problem: string;
}

/**
 * The lines of an import file that cannot be imported, found while
 * validating the whole file, before any write: nothing of the file has been
 * written. Names the first {@link MAX_NAMED_BAD_LINES} bad lines, in file
 * order, and counts the others.
 */
export class ImportFileError extends Error {
  /** The bad lines named (at most {@link MAX_NAMED_BAD_LINES}). */
  readonly lines: BadLine[];
  /**
   * @param file - the file as the caller named it.
   * @param bad - the bad lines, in file order (a single one: its line and problem).
   * @param more - bad lines found beyond `bad`, not named.
   */
  constructor(
    readonly file: string,
    bad: BadLine | readonly BadLine[],
    readonly more = 0,
  ) {
    const all = Array.isArray(bad) ? [...(bad as BadLine[])] : [bad as BadLine];
    const lines = all.slice(0, MAX_NAMED_BAD_LINES);
    const unnamed = more + all.length - lines.length;
    const count = lines.length + unnamed;
    super(
      count === 1
        ? `${file}: line ${lines[0]!.line}: ${lines[0]!.problem}`
        : `${file}: ${count} bad lines, nothing written:\n${lines.map(({ line, problem }) => `  line ${line}: ${problem}`).join('\n')}${unnamed > 0 ? `\n  … and ${unnamed} more` : ''}`,
    );
    this.name = 'ImportFileError';
    this.lines = lines;
    this.more = unnamed;
  }
}

/** Collects the bad lines of a file while it is read; {@link BadLines.check} throws them all at the end. */
export class BadLines {
  readonly #named: BadLine[] = [];
  #more = 0;
  constructor(readonly file: string) {}
  /** Records a bad line (named while fewer than {@link MAX_NAMED_BAD_LINES} are). */
  add(line: number, problem: string): void {
    if (this.#named.length < MAX_NAMED_BAD_LINES) this.#named.push({ line, problem });
    else this.#more++;
  }
  /** @throws ImportFileError when any line was bad. */
  check(): void {
    if (this.#named.length > 0) throw new ImportFileError(this.file, this.#named, this.#more);
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
 * @throws ImportFileError, once the whole file is read, naming every line that is not JSON or not a warehouse account (up to {@link MAX_NAMED_BAD_LINES}).
 */
async function* readAccounts(file: string): AsyncGenerator<{ account: WarehouseAccount; bytesRead: number }> {
  useEnglishIssueMessages();
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  const bad = new BadLines(file);
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
      bad.add(lineNumber, 'not valid JSON');
      continue;
    }
    const parsed = WarehouseAccountSchema.safeParse(value);
    if (!parsed.success) bad.add(lineNumber, formatIssues(parsed.error.issues).join('; '));
    else yield { account: parsed.data, bytesRead };
  }
  bad.check();
}

/**
 * Validates a whole JSON-lines file and counts it, writing nothing.
 * @returns the counts of the file.
 * @throws ImportFileError naming the bad lines.
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
 * @throws ImportFileError naming the invalid lines (nothing written).
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
