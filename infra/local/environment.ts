/**
 * Environment of the local stack: the variables every handler reads
 * (lib/config.ts, lib/aws.ts), pointed at the local endpoints. The running
 * stack writes them to `<dataDir>/endpoints.json` so the operator CLI finds
 * it with no flags.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_CREDENTIALS } from './credentials';

/** Default data folder of `npm start`. */
export const DEFAULT_DATA_DIR = path.resolve(import.meta.dirname, '../../.local');

/** Endpoints and names of a running local stack. */
export interface LocalEndpoints {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  sfnEndpoint?: string;
  tableName: string;
  bucketName: string;
  stateMachineArn?: string;
  cursorSecret: string;
  apiUrl?: string;
}

/** Points this process's environment at a local stack. */
export function applyLocalEnvironment(endpoints: LocalEndpoints): void {
  Object.assign(process.env, {
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    DYNAMODB_ENDPOINT: endpoints.dynamodbEndpoint,
    S3_ENDPOINT: endpoints.s3Endpoint,
    TABLE_NAME: endpoints.tableName,
    BUCKET_NAME: endpoints.bucketName,
    CURSOR_SECRET: endpoints.cursorSecret,
    // EMF metrics are for CloudWatch; locally they would only flood stdout.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    ...(endpoints.sfnEndpoint ? { SFN_ENDPOINT: endpoints.sfnEndpoint } : {}),
    ...(endpoints.stateMachineArn ? { STATE_MACHINE_ARN: endpoints.stateMachineArn } : {}),
  });
}

/** Writes the running stack's endpoints for the operator CLI. */
export function writeLocalEndpoints(dataDir: string, endpoints: LocalEndpoints): void {
  writeFileSync(path.join(dataDir, 'endpoints.json'), JSON.stringify(endpoints, null, 2));
}

/** Reads the endpoints of the running local stack, if any. */
export function readLocalEndpoints(dataDir = DEFAULT_DATA_DIR): LocalEndpoints | undefined {
  const file = path.join(dataDir, 'endpoints.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LocalEndpoints) : undefined;
}
