/**
 * Records in the copy index (lib/privacy/copies.ts; docs/privacy.md "The
 * vendor's erasure") every result part written before the workflow recorded
 * its parts there, so the vendor's erasure, which reads only the parts the
 * index names, still finds every stored copy. Reads each stored part once
 * (any layout ResultPartReader reads) and writes its index items; the items
 * expire one result access period from now (plus the index's slack), after
 * which no such part is left (docs/lifetimes.md). A test twin's parts are
 * left out, as the workflow leaves them out. Idempotent: a part gives the
 * same items each time.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { setting, resultsAccessPeriodSecondsSetting } from '../config';
import { isTestOrganizationId } from '../ids';
import { OBJECT_PREFIXES, objectKeys } from '../objects';
import { createCopyIndex, copyIndexTtl } from '../privacy/copies';
import { createResultStore } from '../results/parts';
import { listKeys } from '../storage/prefixes';

/** Parts read and indexed at once. */
const CONCURRENCY = 8;

/** A result part's key: `…/attempts/<attempt>/results/part-…` (lib/results/parts.ts `resultPartKey`, and the former `.jsonl` parts). */
const RESULT_PART = /\/results\/part-[^/]+\.(bin|jsonl)$/;

/**
 * Runs the migration.
 * @returns how many parts were indexed.
 */
export async function migrateCopyIndex(
  deps: { client: DynamoDBDocumentClient; tableName: string; s3: S3Client; bucketName: string },
  now = new Date(),
): Promise<{ parts: number }> {
  const results = createResultStore({ client: deps.s3, bucketName: deps.bucketName });
  const copies = createCopyIndex({ client: deps.client, tableName: deps.tableName });
  const parts = (await listKeys(deps.s3, deps.bucketName, OBJECT_PREFIXES.campaigns)).filter((key) => {
    const owner = objectKeys.attemptOf(key);
    return RESULT_PART.test(key) && owner !== undefined && !isTestOrganizationId(owner.organizationId);
  });
  const ttl = copyIndexTtl(now, setting(resultsAccessPeriodSecondsSetting));
  await pMap(parts, async (key) => copies.record(key, await results.readPart(key), ttl), { concurrency: CONCURRENCY });
  return { parts: parts.length };
}
