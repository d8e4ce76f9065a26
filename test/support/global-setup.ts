/**
 * Starts the real emulators once for the whole test run (on free ports),
 * creates the table and the bucket, and points every test worker's
 * environment at them. Tests share the table; each isolates itself by
 * creating its own organizations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startDynamoDbLocal, startS3Local, type RunningEmulator } from '../../infra/local/emulators';
import { applyLocalEnvironment } from '../../infra/local/environment';

let emulators: RunningEmulator[] = [];
let s3Dir: string | undefined;

export async function setup(): Promise<void> {
  s3Dir = mkdtempSync(path.join(tmpdir(), 'cea-s3-'));
  const bucketName = 'campaign-enrichment-test';
  const [dynamodbLocal, s3Local] = await Promise.all([startDynamoDbLocal(), startS3Local({ dataDir: s3Dir, buckets: [bucketName] })]);
  emulators = [dynamodbLocal, s3Local];
  applyLocalEnvironment({
    dynamodbEndpoint: dynamodbLocal.endpoint,
    s3Endpoint: s3Local.endpoint,
    tableName: 'campaign-enrichment-test',
    bucketName,
    cursorSecret: randomBytes(32).toString('hex'),
  });
  const { dynamodb } = await import('../../lib/aws');
  const { ensureTable } = await import('../../infra/local/table');
  await ensureTable(dynamodb, 'campaign-enrichment-test');
}

export async function teardown(): Promise<void> {
  await Promise.allSettled(emulators.map((e) => e.stop()));
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
}
