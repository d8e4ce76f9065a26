/**
 * Campaign account lists: parsing uploads and storing lists in S3
 * (decisions §1; docs/data-model.md). A list of 100,000 IDs is up to ~13 MB,
 * so it lives in one S3 object, never in the table.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { parse } from 'csv-parse/sync';
import { InvalidRequestError } from '../errors';
import { isUploadedFile } from '../http/form';
import { objectKeys } from '../objects';

/** First cells that mark a header row rather than an account (compared case-insensitively). */
export const ACCOUNT_ID_HEADERS = ['account_id', 'id'] as const;

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
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
  } catch (error) {
    throw new InvalidRequestError('accountIdsFile could not be read as CSV.', [`accountIdsFile: ${(error as Error).message}`]);
  }
  const rows = records.map(({ record, info }) => ({ id: record[0] ?? '', line: info.lines })).filter((row) => row.id !== '');
  if (rows.length > 0 && (ACCOUNT_ID_HEADERS as readonly string[]).includes(rows[0]!.id.toLowerCase())) rows.shift();
  return rows;
}

/**
 * Form hook of create: a multipart file part (or field) `accountIdsFile`
 * becomes `accountIds`.
 * @throws InvalidRequestError when both `accountIds` and `accountIdsFile` are sent.
 */
export function accountIdsFromForm(body: Record<string, unknown>): Record<string, unknown> {
  const { accountIdsFile, ...rest } = body;
  if (accountIdsFile === undefined) return body;
  if (rest.accountIds !== undefined) {
    throw new InvalidRequestError('Send accountIds or accountIdsFile, not both.', ['accountIdsFile: not allowed together with accountIds']);
  }
  const files = Array.isArray(accountIdsFile) ? accountIdsFile : [accountIdsFile];
  const accountIds = files.flatMap((file) => {
    if (isUploadedFile(file)) return parseAccountIdsFile(file.content.toString('utf8'));
    if (typeof file === 'string') return parseAccountIdsFile(file);
    throw new InvalidRequestError('accountIdsFile must be a file part or text.', ['accountIdsFile: must be a file part or text']);
  });
  return { ...rest, accountIds };
}

/** Distinct IDs in first-seen order. */
export const distinctAccountIds = (ids: readonly string[]): string[] => [...new Set(ids)];

/** Storage of account lists (one object per campaign). */
export interface AccountListStore {
  /** Writes a list; returns its object key. */
  put(objectKey: string, accountIds: readonly string[]): Promise<void>;
  /** Reads a list back. */
  get(objectKey: string): Promise<string[]>;
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
  };
}
