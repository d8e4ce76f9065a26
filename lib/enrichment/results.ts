/**
 * Enrichment results in S3: one JSON-lines part per workflow batch, each line
 * an enriched account with its contacts, so export never needs the warehouse
 * again (docs/data-model.md).
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { WarehouseAccount } from '../warehouse/schema';
import { objectKeys } from '../objects';

/** Prefix of an attempt's result parts (lib/objects.ts). */
export const resultsPrefix = objectKeys.resultsPrefix;

/** Object key of one result part. */
export const resultPartKey = (prefix: string, index: number) => `${prefix}part-${String(index).padStart(6, '0')}.jsonl`;

/** An enriched account as stored in the results (the warehouse account without its status). */
export type EnrichedAccount = Omit<WarehouseAccount, 'status'>;

/** Storage of result parts. */
export interface ResultStore {
  /** Writes (or rewrites, idempotently) one part. */
  putPart(prefix: string, index: number, accounts: readonly EnrichedAccount[]): Promise<void>;
  /** Keys of every part under a prefix, in index order. */
  listParts(prefix: string): Promise<string[]>;
  /** Reads one part as a stream of text. */
  readPart(key: string): Promise<NodeJS.ReadableStream>;
}

/** Builds the S3 implementation of {@link ResultStore}. */
export function createResultStore({ client, bucketName }: { client: S3Client; bucketName: string }): ResultStore {
  return {
    async putPart(prefix, index, accounts) {
      await client.send(
        new PutObjectCommand({
          Bucket: bucketName,
          Key: resultPartKey(prefix, index),
          Body: accounts.map((account) => JSON.stringify(account)).join('\n'),
          ContentType: 'application/x-ndjson',
        }),
      );
    },
    async listParts(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: prefix, ContinuationToken: token }));
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async readPart(key) {
      const { Body } = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
      return Body as NodeJS.ReadableStream;
    },
  };
}
