/**
 * AWS SDK clients, created once per process and shared by every use case: DynamoDB's at module scope (nearly
 * every function reads the table), the others on first use. Endpoints can be overridden so the very same code runs against
 * DynamoDB Local, the local S3 endpoint and the local Step Functions endpoint.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';

// Read once; plain values keep the pure client constructions below removable.
const DYNAMODB_ENDPOINT = process.env.DYNAMODB_ENDPOINT || undefined;
const S3_ENDPOINT = process.env.S3_ENDPOINT || undefined;

/** Low-level DynamoDB client (`DYNAMODB_ENDPOINT` overrides the endpoint). */
export const dynamodb = /* @__PURE__ */ new DynamoDBClient({
  endpoint: DYNAMODB_ENDPOINT,
  maxAttempts: 5,
});

/** Document client used by every store: plain JS values in, plain JS values out. */
export const ddb = /* @__PURE__ */ DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true },
});

let s3Client: S3Client | undefined;
/**
 * S3 client (`S3_ENDPOINT` overrides the endpoint; path-style for local endpoints). Built on first use: an S3
 * client's construction (its config resolution, ~1–4 ms) is no part of a cold start that may not touch S3 (bench
 * `bundles`, cold init); every call returns the same client.
 */
export const s3 = (): S3Client =>
  (s3Client ??= new S3Client({
    endpoint: S3_ENDPOINT,
    forcePathStyle: S3_ENDPOINT !== undefined,
  }));

let s3PresignerClient: S3Client | undefined;
/**
 * S3 client that presigns upload URLs (docs/campaigns.md#large-account-lists-upload-first): it adds no default
 * request checksum, which a presigned PUT would otherwise carry as the
 * checksum of an empty body (S3 then refuses the real body with BadDigest). Built on first use, like {@link s3}.
 */
export const s3Presigner = (): S3Client =>
  (s3PresignerClient ??= new S3Client({
    endpoint: S3_ENDPOINT,
    forcePathStyle: S3_ENDPOINT !== undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  }));

let sfnClient: SFNClient | undefined;
/**
 * Step Functions client (`SFN_ENDPOINT` overrides the endpoint). Built on
 * first use: the local endpoint's address is known only once it listens.
 */
export const sfn = (): SFNClient => (sfnClient ??= new SFNClient({ endpoint: process.env.SFN_ENDPOINT || undefined }));

let kmsClient: KMSClient | undefined;
/** KMS client (the erasure receipts' signing key in AWS), built on first use: only the erasure worker and the JWKS function call it. */
export const kms = (): KMSClient => (kmsClient ??= new KMSClient({}));

let sqsClient: SQSClient | undefined;
/** SQS client (erasures/create sends a job to the erasure queue in AWS), built on first use. */
export const sqs = (): SQSClient => (sqsClient ??= new SQSClient({}));
