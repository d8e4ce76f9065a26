/**
 * Objects by key prefix of the data bucket: listing every key under one
 * (result parts, recency markers, CRM lists), and deleting every object under
 * one, what the enrichment's storage expiry uses (lib/enrichment/attempt-objects.ts;
 * docs/data-model.md "Lifetime of stored data"). Keys come from lib/objects.ts.
 */
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** S3's page size for both ListObjectsV2 and DeleteObjects. */
export const DELETE_PAGE_SIZE = 1_000;

/**
 * Every key under `prefix`, in S3's order (ascending UTF-8 bytes), listed a
 * page of up to 1,000 keys at a time (ListObjectsV2 with its continuation
 * token).
 * @param options.startAfter - list only the keys after this one (S3 `StartAfter`, sent on the first page only).
 * @returns the keys (strings), none when nothing is under the prefix.
 */
export async function listKeys(
  client: S3Client,
  bucketName: string,
  prefix: string,
  options: { startAfter?: string } = {},
): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: bucketName,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : options.startAfter ? { StartAfter: options.startAfter } : {}),
      }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** Thrown when S3 refused to delete some keys of a page (the first key and S3's code are in the message). */
export class PrefixDeleteError extends Error {
  override name = 'PrefixDeleteError';
}

/** Deletion of objects by prefix. */
export interface PrefixStore {
  /**
   * Deletes every object whose key starts with `prefix`, a page of up to
   * 1,000 keys at a time (one ListObjectsV2, then one DeleteObjects per page).
   * Idempotent: an empty prefix costs one list call and deletes nothing.
   * @param prefix - must end with `/` (a guard against deleting a sibling's objects).
   * @returns the number of objects deleted.
   * @throws PrefixDeleteError when S3 reports keys it did not delete; Error for a prefix not ending in `/`.
   */
  deletePrefix(prefix: string): Promise<number>;
}

/** Builds the S3 implementation of {@link PrefixStore}. */
export function createPrefixStore({ client, bucketName }: { client: S3Client; bucketName: string }): PrefixStore {
  return {
    async deletePrefix(prefix) {
      if (!prefix.endsWith('/') || prefix === '/') throw new Error(`deletePrefix: "${prefix}" is not a folder prefix`);
      let deleted = 0;
      // Each page is listed from the start: the previous page's keys are gone, so no continuation token is needed
      // (and none is left dangling over keys that no longer exist).
      for (;;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: prefix, MaxKeys: DELETE_PAGE_SIZE }));
        const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
        if (keys.length === 0) return deleted;
        const { Errors } = await client.send(new DeleteObjectsCommand({ Bucket: bucketName, Delete: { Objects: keys, Quiet: true } }));
        if (Errors && Errors.length > 0) {
          throw new PrefixDeleteError(
            `S3 did not delete ${Errors.length} of ${keys.length} objects under ${prefix} (first: ${Errors[0]!.Key}: ${Errors[0]!.Code} ${Errors[0]!.Message ?? ''})`,
          );
        }
        deleted += keys.length;
        if (!page.IsTruncated) return deleted;
      }
    },
  };
}
