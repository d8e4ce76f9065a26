/**
 * Upload records in the single table (docs/campaigns.md#large-account-lists-upload-first; docs/data-model.md
 * "Upload record"): one item per presigned upload, in a partition of its
 * own keyed by organization and upload ID, so another organization's upload
 * ID finds nothing. DynamoDB's TTL deletes a record a day after it stops
 * being usable; code compares `usableUntil` itself (TTL deletes lazily).
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as keys from '../db/keys';
import { transactWrite, type TransactItem } from '../db/conditional';

/** An upload as stored. */
export interface UploadRecord {
  /** `upl_` + 21 base58. */
  uploadId: string;
  organizationId: string;
  /** Where the client PUTs the file (lib/objects.ts `objectKeys.upload`). */
  objectKey: string;
  /** The content type signed into the URL; null when none was. */
  contentType: string | null;
  /** Largest file create reads, in bytes, as promised when the upload was created. */
  maxBytes: number;
  createdAt: string;
  /** When the presigned URL stops accepting the PUT (ISO 8601). */
  urlExpiresAt: string;
  /** Until when campaign create accepts the upload (ISO 8601). */
  usableUntil: string;
}

/** Storage of upload records. */
export interface UploadStore {
  /** Writes a record (a new one, or a replacement: the operator and tests); with `alsoPut` (the request's audit entry, docs/audit.md), in one transaction. */
  put(record: UploadRecord, alsoPut?: readonly TransactItem[]): Promise<void>;
  /** Reads an organization's upload; undefined when it has none of that ID. */
  get(organizationId: string, uploadId: string): Promise<UploadRecord | undefined>;
}

/** Seconds a record stays in the table after it stops being usable (DynamoDB TTL). */
const KEEP_SECONDS = 86_400;

/** Builds the DynamoDB implementation of {@link UploadStore}. */
export function createUploadStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): UploadStore {
  return {
    async put(record, alsoPut = []) {
      const put = {
        TableName: tableName,
        Item: {
          ...keys.upload(record.organizationId, record.uploadId),
          ...record,
          ttl: Math.ceil(Date.parse(record.usableUntil) / 1000) + KEEP_SECONDS,
        },
      };
      if (alsoPut.length === 0) await client.send(new PutCommand(put));
      else if (!(await transactWrite(client, { TransactItems: [{ Put: put }, ...alsoPut] })).ok)
        throw new Error('An item written with the upload already existed; nothing was written');
    },
    async get(organizationId, uploadId) {
      // Strongly consistent: create may read the record right after uploads/create wrote it.
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: keys.upload(organizationId, uploadId), ConsistentRead: true }),
      );
      if (!Item) return undefined;
      const { pk: _pk, sk: _sk, ttl: _ttl, ...record } = Item;
      return record as UploadRecord;
    },
  };
}
