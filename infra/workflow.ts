/**
 * The enrichment workflow (Step Functions), defined once. The CDK stack
 * deploys it with the real task functions; the local stack renders the very
 * same construct (with placeholder function ARNs) and runs the resulting ASL
 * with aws-local-stepfunctions.
 *
 *   FindContacts (Map over batches: FindContactsBatch, each reading its own batch object)
 *   → CompleteEnrichment → FinishRecording (the account history: the eligible
 *   accounts written into their history shards) → WaitForResultsExpiry (until resultsExpireAt)
 *   → ExpireResults (`expired`; the campaign's stored objects deleted) → Done
 *   FindContacts or CompleteEnrichment failing (after retries of transient
 *   errors) → CompensateAttempt (refund; result parts and batch objects deleted) → EnrichmentFailed
 */
import { App, Duration, Stack, type Stack as StackType } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import type { RoutePermissions } from './routes';

/** The workflow's task functions: state name, handler file, permissions. */
export const WORKFLOW_TASKS = {
  findContacts: {
    state: 'FindContactsBatch',
    entry: 'functions/workflow-find-contacts.ts',
    functionId: 'WorkflowFindContacts',
    permissions: { table: 'readWrite', bucket: 'readWrite', deletesObjects: true },
  },
  complete: {
    state: 'CompleteEnrichment',
    entry: 'functions/workflow-complete.ts',
    functionId: 'WorkflowComplete',
    permissions: { table: 'readWrite' },
  },
  finishRecording: {
    state: 'FinishRecording',
    entry: 'functions/workflow-finish-recording.ts',
    functionId: 'WorkflowFinishRecording',
    permissions: { table: 'readWrite', bucket: 'read', bucketKeys: ['campaigns/*'] },
  },
  expire: {
    state: 'ExpireResults',
    entry: 'functions/workflow-expire.ts',
    functionId: 'WorkflowExpire',
    permissions: { table: 'readWrite', deletesObjects: true },
  },
  compensate: {
    state: 'CompensateAttempt',
    entry: 'functions/workflow-compensate.ts',
    functionId: 'WorkflowCompensate',
    permissions: { table: 'readWrite', deletesObjects: true },
  },
} as const satisfies Record<string, { state: string; entry: string; functionId: string; permissions: RoutePermissions }>;

/** Key of a workflow task. */
export type WorkflowTask = keyof typeof WORKFLOW_TASKS;

/** Errors worth retrying: Lambda service hiccups and DynamoDB/S3 throttling that outlived the SDK's own retries. */
export const TRANSIENT_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'InternalServerError',
  'ServiceUnavailable',
  'SlowDown',
];

/**
 * Account batches processed at once by each Map state. Chosen from
 * `scripts/measure-map-concurrency.ts` and the shared limits in AWS
 * (docs/deploy.md "Workflow concurrency"): locally throughput does not grow
 * with it (the emulators are the limit; at 16 DynamoDB Local spends about
 * twice the CPU for the same accounts); in AWS each batch reads ~500
 * DynamoDB read units (its contacts items) in ~1 s, so 8 per campaign stays
 * far under a fresh on-demand table's 12,000 units/s with room for launch
 * evaluations (which share the table under the API's deadline), and 8
 * Lambdas per campaign leave the account's 1,000 concurrent executions to
 * ~100 campaigns and the API.
 */
export const MAP_CONCURRENCY = 8;

/** Properties of {@link EnrichmentWorkflow}. */
export interface EnrichmentWorkflowProps {
  functions: Record<WorkflowTask, lambda.IFunction>;
  /** Execution log group (logging level ALL); omitted for the local rendering. */
  logGroup?: logs.ILogGroup;
  /** X-Ray tracing of executions. */
  tracing?: boolean;
}

/** The enrichment state machine. */
export class EnrichmentWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;

  constructor(scope: Construct, id: string, props: EnrichmentWorkflowProps) {
    super(scope, id);
    const task = (key: WorkflowTask, options: Partial<tasks.LambdaInvokeProps> = {}) =>
      new tasks.LambdaInvoke(this, WORKFLOW_TASKS[key].state, {
        lambdaFunction: props.functions[key],
        payloadResponseOnly: true,
        retryOnServiceExceptions: false,
        ...options,
      }).addRetry({
        errors: TRANSIENT_ERRORS,
        interval: Duration.seconds(1),
        maxAttempts: 5,
        backoffRate: 2,
        jitterStrategy: sfn.JitterType.FULL,
      });

    const attempt = {
      organizationId: sfn.JsonPath.stringAt('$.organizationId'),
      campaignId: sfn.JsonPath.stringAt('$.campaignId'),
      attemptId: sfn.JsonPath.stringAt('$.attemptId'),
      // The launching enrich call's X-Request-Id, so every task's log lines carry it (docs/idempotency.md#request-ids).
      requestId: sfn.JsonPath.stringAt('$.requestId'),
    };

    const compensate = task('compensate', {
      payload: sfn.TaskInput.fromObject({ ...attempt, reason: 'failed' }),
      resultPath: sfn.JsonPath.DISCARD,
    }).next(new sfn.Fail(this, 'EnrichmentFailed', { error: 'EnrichmentFailed', causePath: '$.error.Cause' }));

    const findContacts = new sfn.Map(this, 'FindContacts', {
      itemsPath: '$.batches',
      maxConcurrency: MAP_CONCURRENCY,
      itemSelector: {
        ...attempt,
        eligibleObjectKey: sfn.JsonPath.stringAt('$.eligibleObjectKey'),
        batch: sfn.JsonPath.stringAt('$$.Map.Item.Value'),
      },
      resultPath: '$.batchResults',
    })
      .itemProcessor(task('findContacts'))
      .addCatch(compensate, { resultPath: '$.error' });

    const complete = task('complete', {
      payload: sfn.TaskInput.fromObject({ ...attempt, batchResults: sfn.JsonPath.listAt('$.batchResults') }),
      resultPath: '$.completion',
    }).addCatch(compensate, { resultPath: '$.error' });

    const finishRecording = task('finishRecording', { payload: sfn.TaskInput.fromObject(attempt), resultPath: sfn.JsonPath.DISCARD });
    const waitForExpiry = new sfn.Wait(this, 'WaitForResultsExpiry', { time: sfn.WaitTime.timestampPath('$.completion.resultsExpireAt') });
    const expire = task('expire', {
      payload: sfn.TaskInput.fromObject({ ...attempt, resultsExpireAt: sfn.JsonPath.stringAt('$.completion.resultsExpireAt') }),
      resultPath: sfn.JsonPath.DISCARD,
    });

    const definition = findContacts
      .next(complete)
      .next(finishRecording)
      .next(waitForExpiry)
      .next(expire)
      .next(new sfn.Succeed(this, 'Done'));

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: props.tracing ?? false,
      ...(props.logGroup ? { logs: { destination: props.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true } } : {}),
    });
  }
}

/** Placeholder ARN of a task function in the local rendering. */
export const localFunctionArn = (task: WorkflowTask) => `arn:aws:lambda:us-east-1:000000000000:function:${WORKFLOW_TASKS[task].functionId}`;

/** The state machine's ASL as CDK renders it, with placeholder function ARNs (for the local runner and tests). */
export function renderEnrichmentDefinition(): Record<string, unknown> {
  const stack: StackType = new Stack(new App(), 'LocalEnrichmentWorkflow', { env: { account: '000000000000', region: 'us-east-1' } });
  const functions = Object.fromEntries(
    (Object.keys(WORKFLOW_TASKS) as WorkflowTask[]).map((key) => [
      key,
      lambda.Function.fromFunctionArn(stack, WORKFLOW_TASKS[key].functionId, localFunctionArn(key)),
    ]),
  ) as Record<WorkflowTask, lambda.IFunction>;
  const workflow = new EnrichmentWorkflow(stack, 'Enrichment', { functions });
  const definition = stack.resolve((workflow.stateMachine.node.defaultChild as sfn.CfnStateMachine).definitionString) as unknown;
  if (typeof definition !== 'string')
    throw new Error(`The workflow definition did not resolve to a string: ${JSON.stringify(definition).slice(0, 200)}`);
  return JSON.parse(definition) as Record<string, unknown>;
}
