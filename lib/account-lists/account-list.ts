/**
 * Campaign account lists: parsing uploads and storing lists in S3
 * (docs/campaigns.md; docs/data-model.md). A list of 100,000 IDs is up to ~13 MB,
 * so it lives in one S3 object, never in the table.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { CsvError, parse as parseStream } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { InvalidRequestError } from '../errors';
import { isUploadedFile } from '../http/form';
import { formatIssues } from '../http/issues';
import { AccountIdSchema } from './schema';
import { objectKeys } from '../objects';

/** First cells that mark a header row rather than an account (compared case-insensitively). */
export const ACCOUNT_ID_HEADERS = ['account_id', 'id'] as const;

/**
 * Longest line of an account-ID file, in bytes (docs/limits.md): an ID is at
 * most 128 characters, so a longer line is refused at once, naming it, and
 * the parser never holds more than this of one line, whatever the file.
 */
export const MAX_LINE_BYTES = 4_096;

/**
 * csv-parse options of every account-ID file reader (one parser, sync or
 * streamed). `max_record_size` is in bytes, checked before each byte is added
 * to the line: a limit of 4,095 refuses the 4,097th byte, so a line of 4,096
 * bytes passes and one of 4,097 does not.
 */
const CSV_OPTIONS = {
  bom: true,
  relax_column_count: true,
  skip_empty_lines: true,
  trim: true,
  info: true,
  max_record_size: MAX_LINE_BYTES - 1,
} as const;

/** A parsed CSV record with its position (csv-parse `info`). */
interface CsvRecord {
  record: string[];
  info: { lines: number };
}

/**
 * The row rule of account-ID files, shared by the sync and the streamed
 * reader: first column, rows whose first cell is blank skipped, and the first
 * remaining row dropped when it is a header (`account_id` or `id`).
 * @returns a function that takes records in file order and returns each one's row, or undefined for a skipped one.
 */
function accountIdRowReader(): (record: CsvRecord) => AccountIdRow | undefined {
  let first = true;
  return ({ record, info }) => {
    const id = record[0] ?? '';
    if (id === '') return undefined;
    const header = first && (ACCOUNT_ID_HEADERS as readonly string[]).includes(id.toLowerCase());
    first = false;
    return header ? undefined : { id, line: info.lines };
  };
}

/** The 400 of a file that is not parseable CSV, naming `field` (and the line, for a line over {@link MAX_LINE_BYTES}). */
const unreadable = (field: string, error: Error) => {
  if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
    const line = (error as CsvError & { lines?: number }).lines ?? 1;
    return new InvalidRequestError(
      `${field}: line ${line} is longer than ${MAX_LINE_BYTES} bytes; a file holds one account ID (at most 128 characters) a line.`,
      [`${field}: line ${line}: longer than ${MAX_LINE_BYTES} bytes`],
    );
  }
  return new InvalidRequestError(`${field} could not be read as CSV.`, [`${field}: ${error.message}`]);
};

/**
 * Reads account IDs from a CSV or text upload: first column, one ID a line,
 * an optional header row whose first cell is `account_id` or `id` (any
 * letter case; not counted as an account), blank lines skipped, surrounding
 * space trimmed.
 * @throws InvalidRequestError when the file is not parseable CSV.
 */
export function parseAccountIdsFile(text: string): string[] {
  return parseAccountIdRows(text).map((row) => row.id);
}

/** An account ID of an uploaded list, with the (1-based) line it is on. */
export interface AccountIdRow {
  id: string;
  line: number;
}

/**
 * {@link parseAccountIdsFile} with line numbers, so a caller that validates
 * each ID (the operator CLI's imports) can name the line of a bad one.
 * @throws InvalidRequestError when the file is not parseable CSV.
 */
export function parseAccountIdRows(text: string): AccountIdRow[] {
  let records: CsvRecord[];
  try {
    records = parseSync(text, CSV_OPTIONS) as unknown as CsvRecord[];
  } catch (error) {
    throw unreadable('accountIdsFile', error as Error);
  }
  const read = accountIdRowReader();
  return records.map(read).filter((row) => row !== undefined);
}

/**
 * {@link parseAccountIdRows} over a stream (an uploaded file of up to 50 MB,
 * docs/campaigns.md#large-account-lists-upload-first): the same parser and row rule, one row at a time. Stopping
 * the iteration early destroys `source`.
 * @param field - the request field a CSV error is reported under.
 * @throws InvalidRequestError when the file is not parseable CSV (the message names the line).
 */
export async function* readAccountIdRows(source: Readable, field: string): AsyncGenerator<AccountIdRow> {
  const read = accountIdRowReader();
  const records = parseStream(CSV_OPTIONS);
  // Errors of either side reach the loop below (pipeline destroys the parser with them); stopping early destroys both.
  pipeline(source, records).catch(() => undefined);
  try {
    for await (const record of records) {
      const row = read(record as CsvRecord);
      if (row) yield row;
    }
  } catch (error) {
    if (error instanceof CsvError) throw unreadable(field, error);
    throw error;
  } finally {
    records.destroy();
    source.destroy();
  }
}

/**
 * Form hook of create: a multipart file part (or field) `accountIdsFile`
 * becomes `accountIds`. Each ID is checked here, against its file's line
 * ({@link badAccountIdRow}): a bad one is reported as `accountIdsFile` line N,
 * not as the `accountIds[i]` the client never sent.
 * @throws InvalidRequestError when both `accountIds` and `accountIdsFile` are sent, or a line holds a bad ID.
 */
export function accountIdsFromForm(body: Record<string, unknown>): Record<string, unknown> {
  const { accountIdsFile, ...rest } = body;
  if (accountIdsFile === undefined) return body;
  if (rest.accountIds !== undefined) {
    throw new InvalidRequestError('Send accountIds or accountIdsFile, not both.', ['accountIdsFile: not allowed together with accountIds']);
  }
  const files = Array.isArray(accountIdsFile) ? accountIdsFile : [accountIdsFile];
  const accountIds = files.flatMap((file) => {
    let rows: AccountIdRow[];
    if (isUploadedFile(file)) rows = parseAccountIdRows(file.content.toString('utf8'));
    else if (typeof file === 'string') rows = parseAccountIdRows(file);
    else throw new InvalidRequestError('accountIdsFile must be a file part or text.', ['accountIdsFile: must be a file part or text']);
    for (const row of rows) {
      const bad = badAccountIdRow('accountIdsFile', row);
      if (bad) throw bad;
    }
    return rows.map((row) => row.id);
  });
  return { ...rest, accountIds };
}

/**
 * The 400 of a file row whose ID is not an account ID (docs/campaigns.md: 1..128 characters, no control
 * characters), naming `field` and the row's line, or undefined when the ID is one. One rule for every list a
 * file carries: `accountIdsFile` parts and uploads (`accountIdsUploadId`).
 */
export function badAccountIdRow(field: string, { id, line }: AccountIdRow): InvalidRequestError | undefined {
  const parsed = AccountIdSchema.safeParse(id);
  if (parsed.success) return undefined;
  const problems = formatIssues(parsed.error.issues).map((issue) => issue.replace(/^body: /, ''));
  const problem = `line ${line}: account ID ${JSON.stringify(id.length > 140 ? `${id.slice(0, 140)}…` : id)}: ${problems.join('; ')}`;
  return new InvalidRequestError(`${field}: the file has a bad account ID on line ${line}.`, [`${field}: ${problem}`]);
}

/** Distinct IDs in first-seen order. */
export const distinctAccountIds = (ids: readonly string[]): string[] => [...new Set(ids)];

/** Storage of account lists (one object per campaign). */
export interface AccountListStore {
  /** Writes a list; returns its object key. */
  put(objectKey: string, accountIds: readonly string[]): Promise<void>;
  /** Reads a list back. */
  get(objectKey: string): Promise<string[]>;
  /**
   * Streams a list's IDs into `onId`, a chunk at a time (no whole-body
   * string: recency markers and CRM lists of 100,000 IDs are filtered as they
   * arrive, lib/history/store.ts).
   * @throws NoSuchKey when the object does not exist.
   */
  forEachId(objectKey: string, onId: (id: string) => void): Promise<void>;
}

/** Object key of a campaign's account list (lib/objects.ts). */
export const accountListKey = objectKeys.accountList;

/** Builds the S3 implementation of {@link AccountListStore}. */
export function createAccountListStore({ client, bucketName }: { client: S3Client; bucketName: string }): AccountListStore {
  return {
    async put(objectKey, accountIds) {
      await client.send(
        new PutObjectCommand({ Bucket: bucketName, Key: objectKey, Body: accountIds.join('\n'), ContentType: 'text/plain; charset=utf-8' }),
      );
    },
    async get(objectKey) {
      const { Body } = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: objectKey }));
      const text = await Body!.transformToString('utf8');
      return text === '' ? [] : text.split('\n');
    },
    async forEachId(objectKey, onId) {
      const { Body } = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: objectKey }));
      const decoder = new TextDecoder();
      let carry = '';
      for await (const chunk of Body as AsyncIterable<Uint8Array>) {
        const lines = (carry + decoder.decode(chunk, { stream: true })).split('\n');
        carry = lines.pop()!;
        for (const line of lines) if (line !== '') onId(line);
      }
      const last = carry + decoder.decode();
      if (last !== '') onId(last);
    },
  };
}
