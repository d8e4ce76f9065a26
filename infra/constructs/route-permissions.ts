/**
 * Least-privilege grants of an API function, from its route's
 * {@link RoutePermissions} (infra/routes.ts): each permission level maps to an
 * explicit list of actions on explicit resources, so a reader of this file
 * knows everything a function may do.
 */
import { Aws, Stack, Validations, type CfnResource } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { LIMIT_COUNTER_KEY_PATTERN, TABLE_DEFINITION } from '../../lib/db/table';
import { EXPIRING_KEY_PATTERNS } from '../../lib/objects';
import type { RoutePermissions } from '../routes';
import type { ServiceFunction } from './service-function';

/** The stack's resources a route may be granted access to. */
export interface RouteResources {
  readonly table: dynamodb.ITableV2;
  readonly bucket: s3.IBucket;
  /**
   * The enrichment workflow. The stack passes it once the state machine
   * exists; until then a route with `startsWorkflow` fails synthesis (see
   * {@link grantRoutePermissions}).
   */
  readonly stateMachine?: sfn.StateMachine;
  /** The erasure job's queue (docs/privacy.md "The erasure job"); a route with `startsErasures` fails synthesis without it. */
  readonly erasureQueue?: sqs.IQueue;
}

/**
 * DynamoDB actions per table permission. Transactions need no actions of their
 * own: DynamoDB authorizes each item of a transaction by its Get/Put/Update/
 * Delete/ConditionCheck action. Scan is never granted (every access pattern is
 * a key lookup or an index query; docs/data-model.md).
 */
const TABLE_ACTIONS: Record<RoutePermissions['table'], string[]> = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:ConditionCheckItem',
  ],
};

/** S3 object actions per bucket permission. Multipart uploads (lib-storage) are authorized by PutObject. */
const OBJECT_ACTIONS: Record<NonNullable<RoutePermissions['bucket']>, string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject', 's3:AbortMultipartUpload'],
  readWrite: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
};

/**
 * Grants a route's function what its {@link RoutePermissions} declare and
 * nothing else.
 *
 * - `table`: the actions of {@link TABLE_ACTIONS} on the table and on each of
 *   its indexes by name (from `TABLE_DEFINITION`), no `index/*` wildcard.
 * - `bucket`: object actions on the bucket's objects (only those matching
 *   `bucketKeys` when given); readers also get `s3:ListBucket` so a missing
 *   key answers 404 `NoSuchKey`, not 403.
 * - `deletesObjects`: `s3:DeleteObject` on the objects of `EXPIRING_KEY_PATTERNS`
 *   (lib/objects.ts: attempts and evaluations, never account lists or
 *   exports) and `s3:ListBucket`.
 * - `startsWorkflow`: `states:StartExecution` on the state machine and its ARN
 *   in `STATE_MACHINE_ARN` (lib/config.ts).
 * - `stopsWorkflow`: `states:StopExecution` on the executions of that state
 *   machine only, and its ARN in `STATE_MACHINE_ARN`.
 *
 * - `startsErasures`: `sqs:SendMessage` on the erasure queue and its URL in
 *   `ERASURE_QUEUE_URL` (lib/config.ts).
 *
 * @throws Error when a route starts or stops workflows but `resources.stateMachine` is absent, or starts erasures without `resources.erasureQueue`.
 */
export function grantRoutePermissions(fn: ServiceFunction, permissions: RoutePermissions, resources: RouteResources): void {
  const { table, bucket, stateMachine, erasureQueue } = resources;

  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'Table',
      actions: TABLE_ACTIONS[permissions.table],
      resources: [table.tableArn, ...TABLE_DEFINITION.indexes.map((index) => `${table.tableArn}/index/${index.indexName}`)],
    }),
  );

  const acknowledge = (patterns: readonly string[]) => {
    for (const pattern of patterns) {
      Validations.of(fn.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(bucket)}.Arn>/${pattern}]`,
        reason:
          'Object keys are generated per organization, campaign and export at run time; access is limited to the objects of this one bucket (under this key pattern).',
      });
    }
  };
  if (permissions.bucket) {
    const patterns = permissions.bucketKeys ?? ['*'];
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BucketObjects',
        actions: OBJECT_ACTIONS[permissions.bucket],
        resources: patterns.map((pattern) => bucket.arnForObjects(pattern)),
      }),
    );
    acknowledge(patterns);
  }
  if (permissions.deletesObjects) {
    // s3:DeleteObject also authorizes each key of a DeleteObjects (multi-object delete) call.
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BucketDeletes',
        actions: ['s3:DeleteObject'],
        resources: EXPIRING_KEY_PATTERNS.map((pattern) => bucket.arnForObjects(pattern)),
      }),
    );
    acknowledge(EXPIRING_KEY_PATTERNS);
  }
  if ((permissions.bucket && permissions.bucket !== 'write') || permissions.deletesObjects) {
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'BucketList', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  }

  if (permissions.startsWorkflow) {
    if (!stateMachine) {
      throw new Error(`${fn.node.path} starts enrichment executions, but the stack defines no state machine yet`);
    }
    stateMachine.grantStartExecution(fn);
    fn.addEnvironment('STATE_MACHINE_ARN', stateMachine.stateMachineArn);
  }
  if (permissions.stopsWorkflow) {
    if (!stateMachine) {
      throw new Error(`${fn.node.path} stops enrichment executions, but the stack defines no state machine yet`);
    }
    const stack = Stack.of(fn);
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'StopExecutions',
        actions: ['states:StopExecution'],
        resources: [`arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${stateMachine.stateMachineName}:*`],
      }),
    );
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${stack.getLogicalId(stateMachine.node.defaultChild as CfnResource)}.Name>:*]`,
      reason: 'Executions are named after enrichment attempts at run time; access is limited to executions of this one state machine.',
    });
    fn.addEnvironment('STATE_MACHINE_ARN', stateMachine.stateMachineArn);
  }
  if (permissions.startsErasures) {
    if (!erasureQueue) throw new Error(`${fn.node.path} starts erasure jobs, but the stack defines no erasure queue yet`);
    erasureQueue.grantSendMessages(fn.role);
    fn.addEnvironment('ERASURE_QUEUE_URL', erasureQueue.queueUrl);
  }
}

/**
 * Lets an API function count its requests (docs/limits.md, lib/http/rate-limit.ts):
 * a `read` route may update its organizations' limit counters (partitions matching
 * `LIMIT_COUNTER_KEY_PATTERN`) and no other item; a `readWrite` route already may.
 */
export function grantLimitCounters(fn: ServiceFunction, permissions: RoutePermissions, table: dynamodb.ITableV2): void {
  if (permissions.table !== 'read') return;
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'LimitCounters',
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [LIMIT_COUNTER_KEY_PATTERN] } },
    }),
  );
}

/** Logical ID of a bucket of this app, as cdk-nag spells it in finding IDs. */
function logicalIdOf(bucket: s3.IBucket): string {
  const cfnBucket = bucket.node.defaultChild as s3.CfnBucket;
  return cfnBucket.stack.resolve(cfnBucket.logicalId) as string;
}

/**
 * The permissions of a function that runs several routes' handlers (the MCP
 * function, docs/agents.md): each grant any of them has, table and bucket
 * access widened to cover them all, bucket keys the union (every object when
 * one route is not limited).
 */
export function mergedPermissions(all: readonly RoutePermissions[]): RoutePermissions {
  const buckets = all.filter((permissions) => permissions.bucket);
  const bucketAccess = new Set(buckets.map((permissions) => permissions.bucket));
  const bucket: RoutePermissions['bucket'] =
    bucketAccess.size === 0 ? undefined : bucketAccess.size === 1 ? [...bucketAccess][0] : 'readWrite';
  const keys = buckets.some((permissions) => !permissions.bucketKeys)
    ? undefined
    : [...new Set(buckets.flatMap((permissions) => permissions.bucketKeys ?? []))];
  return {
    table: all.some((permissions) => permissions.table === 'readWrite') ? 'readWrite' : 'read',
    ...(bucket ? { bucket } : {}),
    ...(bucket && keys ? { bucketKeys: keys } : {}),
    ...(all.some((permissions) => permissions.deletesObjects) ? { deletesObjects: true } : {}),
    ...(all.some((permissions) => permissions.startsWorkflow) ? { startsWorkflow: true } : {}),
    ...(all.some((permissions) => permissions.stopsWorkflow) ? { stopsWorkflow: true } : {}),
    ...(all.some((permissions) => permissions.startsErasures) ? { startsErasures: true } : {}),
  };
}
