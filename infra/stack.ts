/**
 * The deployed Campaign Enrichment API: one DynamoDB table, one data bucket,
 * an HTTP API with one Lambda per operation (infra/routes.ts), and the CDK app
 * that holds the stack with the cdk-nag AwsSolutions checks.
 *
 * `infra/app.ts` is the CLI's entry point; tests call {@link buildApp}.
 */
import {
  App,
  Aws,
  CfnOutput,
  CfnResource,
  Duration,
  RemovalPolicy,
  Stack,
  Tags,
  Validations,
  type Environment,
  type StackProps,
} from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey, LogGroupLogDestination, type ThrottleSettings } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS_NAMESPACE, RATE_LIMITED_METRIC } from '../lib/observability';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { TABLE_DEFINITION } from '../lib/db/table';
import { SETTINGS } from '../lib/config';
import { EXPIRING_KEY_PATTERNS, OBJECT_PREFIXES } from '../lib/objects';
import { MAX_EXCLUDE_DAYS } from '../lib/campaigns/schema';
import { ServiceFunction, SERVICE_NAME } from './constructs/service-function';
import { Monitoring, type MonitoredRoute } from './constructs/monitoring';
import { grantLimitCounters, grantRoutePermissions, mergedPermissions, type RouteResources } from './constructs/route-permissions';
import { API_ROUTES, DOCS_ROUTES, MCP_ROUTES, SUPPORT_FUNCTIONS, usesCursors, type ApiRoute } from './routes';
import { TOOL_FUNCTIONS_VARIABLE, type ToolFunctions } from '../mcp/lambda-caller';
import { toolName } from '../lib/contract/mcp';
import { EnrichmentWorkflow, WORKFLOW_TASKS, type WorkflowTask } from './workflow';
import { WebhookDelivery } from './webhook-delivery';
import { ApiDistribution, EDGE_REGION, EdgeProtectionStack, type EdgeSettings } from './edge';
import { ORIGIN_VERIFY_SECRET_ENV } from '../lib/http/source-address';
import { ERASURE_LEASE_SECONDS } from '../lib/privacy/store';

/** Timeout of the erasure worker, in minutes (Lambda's longest): a job longer than this resumes on the next receive. */
export const ERASURE_WORKER_TIMEOUT_MINUTES = 15;
/** The queue's visibility timeout, in minutes: a message comes back only after its receive's run and lease are over. */
export const ERASURE_VISIBILITY_MINUTES = ERASURE_WORKER_TIMEOUT_MINUTES * 6;
// A run's lease on its job (lib/privacy/store.ts) outlives the worker that holds it and lapses before the message comes back.
if (!(ERASURE_WORKER_TIMEOUT_MINUTES * 60 < ERASURE_LEASE_SECONDS && ERASURE_LEASE_SECONDS < ERASURE_VISIBILITY_MINUTES * 60))
  throw new Error('ERASURE_LEASE_SECONDS must lie between the erasure worker timeout and the queue visibility timeout');
/** Receives of an erasure job's message before it goes to the dead-letter queue. */
export const ERASURE_MAX_RECEIVES = 5;
/**
 * What the account may do with the receipt key through IAM: administer it
 * and read its public key, never sign (only the worker's own key-policy
 * statement allows kms:Sign).
 */
export const RECEIPT_KEY_ADMIN_ACTIONS = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/** A deployment of the stack. */
export type DeploymentStage = 'dev' | 'prod';

/** What differs between stages. */
export interface StageSettings {
  /** Table, buckets, secret and log groups: kept (prod) or deleted (dev) with the stack. */
  removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection: a table delete fails until it is turned off. */
  deletionProtection: boolean;
  /** Retention of Lambda logs and API access logs. */
  logRetention: logs.RetentionDays;
  /** Retention of S3 server access logs, in days. */
  accessLogDays: number;
  /** `POWERTOOLS_LOG_LEVEL` of every function. */
  logLevel: 'DEBUG' | 'INFO';
  /**
   * Default route throttling of the HTTP API's stage: requests per second
   * (steady state) and burst (token bucket size), applied by API Gateway to
   * each route, so a runaway client cannot exhaust the account's Lambda
   * concurrency (1,000 by default, shared with the workflow) or run up
   * on-demand DynamoDB cost. A request over it gets 429 before any Lambda
   * runs. It sits far above one organization's request rate (docs/limits.md;
   * `SETTINGS.rateLimitRequests` of lib/config.ts): the API's own `rate_limited` refuses one
   * tenant's flood before the stage's throttle, shared by every tenant, is
   * reached. docs/deploy.md ("Throttling") gives the arithmetic and how to
   * change the values.
   */
  throttle: Required<ThrottleSettings>;
  /**
   * Per-source limits of the web ACL in front of the API (infra/edge.ts): anonymous requests and all requests from
   * one IP address, so that no single source spends the stage's throttle; docs/deploy.md ("Edge protection") is
   * generated from them.
   */
  edge: EdgeSettings;
  /**
   * Concurrency reserved for the enrichment workflow's tasks and the webhook
   * functions (docs/limits.md): theirs whatever the API's functions take, and
   * their ceiling. `findContacts`: the Map's batch task; `workflowTask`: each
   * other task. The sum stays well under the account's 1,000 (AWS keeps 100
   * unreserved); docs/deploy.md ("Reserved concurrency").
   */
  reservedConcurrency: { findContacts: number; workflowTask: number; webhookDeliver: number; webhookDispatch: number };
}

/** Settings of each deployment stage; docs/deploy.md ("Throttling", "Reserved concurrency") is generated from them. */
export const STAGES: Record<DeploymentStage, StageSettings> = {
  dev: {
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    logRetention: logs.RetentionDays.ONE_WEEK,
    accessLogDays: 30,
    logLevel: 'DEBUG',
    throttle: { rateLimit: 200, burstLimit: 400 },
    edge: { windowSeconds: 60, anonymousPerAddress: 120, perAddress: 6_000 },
    reservedConcurrency: { findContacts: 16, workflowTask: 2, webhookDeliver: 5, webhookDispatch: 2 },
  },
  prod: {
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    logRetention: logs.RetentionDays.THREE_MONTHS,
    accessLogDays: 365,
    logLevel: 'INFO',
    throttle: { rateLimit: 1_000, burstLimit: 2_000 },
    edge: { windowSeconds: 60, anonymousPerAddress: 120, perAddress: 6_000 },
    reservedConcurrency: { findContacts: 100, workflowTask: 10, webhookDeliver: 50, webhookDispatch: 5 },
  },
};

/** Timeout of a streaming operation's function (seconds): a minute beyond the longest stream (RESULTS_STREAM_MAX_SECONDS' default). */
export const STREAM_FUNCTION_TIMEOUT_SECONDS = (SETTINGS.resultsStreamMaxSeconds.default as number) + 60;

/** Options of {@link CampaignEnrichmentStack}. */
export interface CampaignEnrichmentStackProps extends StackProps {
  readonly stage: DeploymentStage;
  /** The API's routes. @default API_ROUTES */
  readonly routes?: readonly ApiRoute[];
  /** The CloudFront web ACL of {@link EdgeProtectionStack} (ARN), in front of the API's distribution. */
  readonly webAclArn: string;
}

/**
 * Everything the API runs on. Every route of {@link API_ROUTES} becomes a
 * `POST <path>` route of the HTTP API backed by its own {@link ServiceFunction}
 * (construct id = `route.functionId`), granted exactly its `permissions`.
 */
export class CampaignEnrichmentStack extends Stack {
  /** The single table (lib/db/table.ts). */
  readonly table: dynamodb.TableV2;
  /** Account lists, enrichment results and export files. */
  readonly bucket: s3.Bucket;
  readonly api: HttpApi;
  /** The API's published address: CloudFront behind the per-source web ACL (infra/edge.ts). */
  readonly edge: ApiDistribution;
  /** The enrichment state machine and its task functions. */
  readonly workflow: EnrichmentWorkflow;
  /** The function URL of each streaming route (response streaming), by `functionId` (docs/results.md "The stream"). */
  readonly streamUrls: ReadonlyMap<string, lambda.FunctionUrl>;
  /** The function of each route, by `functionId`. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** The docs function (`GET /openapi.json`, `GET /docs`) and the catch-all function (`$default`). */
  readonly supportFunctions: { readonly docs: ServiceFunction; readonly catchAll: ServiceFunction; readonly mcp: ServiceFunction };
  /** The dashboard, the alarms and their SNS topic. */
  readonly monitoring: Monitoring;
  /**
   * The erasure job (docs/privacy.md "The erasure job"): the queue erasures/create sends each job to, its
   * worker and dead-letter queue, the receipts' KMS signing key, and the JWKS function.
   */
  readonly erasures: {
    queue: sqs.Queue;
    deadLetterQueue: sqs.Queue;
    worker: ServiceFunction;
    receiptKey: kms.Key;
    jwks: ServiceFunction;
  };
  /** Webhook delivery (docs/webhooks.md): the stream dispatcher, the delivery state machine and its task, the dispatcher's dead-letter queue. */
  readonly webhooks: { dispatcher: ServiceFunction; deliver: ServiceFunction; delivery: WebhookDelivery; deadLetterQueue: sqs.Queue };

  constructor(scope: Construct, id: string, props: CampaignEnrichmentStackProps) {
    super(scope, id, props);
    const settings = STAGES[props.stage];

    this.table = this.createTable(settings);
    this.bucket = this.createBucket(settings);

    // Signs list cursors (docs/pagination.md).
    const cursorSecret = this.deployTimeSecret('CursorSecret', settings, {
      description: 'Key that signs list cursors of the Campaign Enrichment API',
      length: 64,
      rotation:
        'Rotating the cursor key would void every open list cursor, and the functions read it only at deploy time; rotation needs dual-key verification in lib/http/cursor.ts first.',
    });

    const { api, stage } = this.createApi(settings);
    this.api = api;

    // CloudFront proves a request passed the edge with this value (lib/http/source-address.ts).
    const originSecret = this.deployTimeSecret('OriginSecret', settings, {
      description: 'Header value CloudFront adds to requests it forwards to the Campaign Enrichment API',
      length: 48,
      rotation:
        'The value is read only at deploy time by the distribution and the API functions; rotating it is a redeploy (docs/deploy.md, "Edge protection").',
    });
    this.edge = new ApiDistribution(this, 'Edge', {
      apiEndpoint: api.apiEndpoint,
      webAclArn: props.webAclArn,
      originSecret: originSecret.secretValue.unsafeUnwrap(),
    });

    const environment = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      POWERTOOLS_LOG_LEVEL: settings.logLevel,
    };
    // The cursor secret reaches only the functions that sign or read cursors (infra/routes.ts usesCursors).
    // Every operation records its caller's address (the audit log): the origin secret lets it trust CloudFront's header.
    const routeEnvironment = { ...environment, [ORIGIN_VERIFY_SECRET_ENV]: originSecret.secretValue.unsafeUnwrap() };
    const withCursorSecret = { ...routeEnvironment, CURSOR_SECRET: cursorSecret.secretValue.unsafeUnwrap() };
    // The enrichment workflow: one function per task, the state machine from infra/workflow.ts.
    const taskFunctions = {} as Record<WorkflowTask, ServiceFunction['function']>;
    const monitoredTasks: { label: string; function: ServiceFunction['function'] }[] = [];
    for (const key of Object.keys(WORKFLOW_TASKS) as WorkflowTask[]) {
      const task = WORKFLOW_TASKS[key];
      const fn = new ServiceFunction(this, task.functionId, {
        entry: task.entry,
        description: `Enrichment workflow task ${task.state}`,
        environment,
        timeout: Duration.minutes(5),
        logRetention: settings.logRetention,
        logRemovalPolicy: settings.removalPolicy,
        reservedConcurrentExecutions:
          key === 'findContacts' ? settings.reservedConcurrency.findContacts : settings.reservedConcurrency.workflowTask,
      });
      grantRoutePermissions(fn, task.permissions, { table: this.table, bucket: this.bucket });
      taskFunctions[key] = fn.function;
      monitoredTasks.push({ label: task.functionId, function: fn.function });
    }
    const workflowLogs = new logs.LogGroup(this, 'WorkflowLogs', {
      retention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
    });
    this.workflow = new EnrichmentWorkflow(this, 'Enrichment', { functions: taskFunctions, logGroup: workflowLogs, tracing: true });
    const workflowRole = this.workflow.stateMachine.role;
    Validations.of(workflowRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Step Functions log delivery (logs:CreateLogDelivery and related) and X-Ray tracing actions support no resource-level permissions.',
    });
    for (const fn of Object.values(taskFunctions)) {
      Validations.of(workflowRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(fn.node.defaultChild as CfnResource)}.Arn>:*]`,
        reason:
          'lambda:InvokeFunction on the task function and its versions/aliases (the ":*" qualifier), as CDK grants for LambdaInvoke; no other function.',
      });
    }

    this.erasures = this.createErasureJob(settings, environment, { table: this.table, bucket: this.bucket }, api);
    // Routes with `startsWorkflow` get states:StartExecution and STATE_MACHINE_ARN; with `startsErasures`, sqs:SendMessage and ERASURE_QUEUE_URL.
    const resources: RouteResources = {
      table: this.table,
      bucket: this.bucket,
      stateMachine: this.workflow.stateMachine,
      erasureQueue: this.erasures.queue,
    };

    const functions = new Map<string, ServiceFunction>();
    const monitoredRoutes: MonitoredRoute[] = [];
    const streamUrls = new Map<string, lambda.FunctionUrl>();
    for (const route of props.routes ?? API_ROUTES) {
      const fn = new ServiceFunction(this, route.functionId, {
        entry: route.entry,
        description: `${route.operation.operationId}: POST ${route.operation.path}`,
        environment: usesCursors(route.operation) ? withCursorSecret : routeEnvironment,
        logRetention: settings.logRetention,
        logRemovalPolicy: settings.removalPolicy,
        // A stream pauses after RESULTS_STREAM_MAX_SECONDS (docs/results.md "The stream"); the function outlives it by a minute.
        ...(route.operation.streaming ? { timeout: Duration.seconds(STREAM_FUNCTION_TIMEOUT_SECONDS) } : {}),
      });
      grantRoutePermissions(fn, route.permissions, resources);
      grantLimitCounters(fn, route.permissions, this.table);
      // `rate_limited` answers per organization (docs/limits.md), from the line every answer logs: no metric code in the function.
      new logs.MetricFilter(this, `${route.functionId}RateLimited`, {
        logGroup: fn.logGroup,
        metricNamespace: METRICS_NAMESPACE,
        metricName: RATE_LIMITED_METRIC,
        filterPattern: logs.FilterPattern.all(
          logs.FilterPattern.stringValue('$.message', '=', 'Request completed'),
          logs.FilterPattern.stringValue('$.errorCode', '=', 'rate_limited'),
        ),
        metricValue: '1',
        dimensions: { organizationId: '$.organizationId' },
        unit: cloudwatch.Unit.COUNT,
      });
      functions.set(route.functionId, fn);
      if (route.operation.streaming) {
        // HTTP APIs buffer a Lambda's answer: a streaming operation answers through its own function URL with
        // response streaming (docs/results.md "The stream"; the document names it in the operation's `servers`).
        const url = fn.function.addFunctionUrl({
          authType: lambda.FunctionUrlAuthType.NONE,
          invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
        });
        // AuthType NONE on purpose: the caller authenticates with the organization's API key (Authorization: Bearer
        // cek_…), which the function's request pipeline checks exactly as behind the HTTP API (lib/http/auth.ts:
        // scopes, revocation, rate limits, test mode, the error envelope). IAM auth (SigV4) would need AWS
        // credentials customers do not have. The function reads nothing before the key is verified.
        // (No rule of the AwsSolutions pack this stack validates with covers function URLs, so there is no finding to acknowledge;
        // the serverless pack's LambdaFunctionUrlAuth would be acknowledged with this reason.)
        streamUrls.set(route.functionId, url);
        monitoredRoutes.push({ path: route.operation.path, method: HttpMethod.POST, function: fn.function, functionUrl: true });
        continue;
      }
      api.addRoutes({
        path: route.operation.path,
        methods: [HttpMethod.POST],
        integration: new HttpLambdaIntegration(`${route.functionId}Integration`, fn.function),
      });
      monitoredRoutes.push({ path: route.operation.path, method: HttpMethod.POST, function: fn.function });
    }
    this.streamUrls = streamUrls;
    this.functions = functions;

    // Hourly reconciliation of every balance with its ledger (docs/launch.md#the-credit-ledger): the LedgerDrift metric and alarm.
    const reconcile = new ServiceFunction(this, 'CreditsReconcile', {
      entry: 'functions/credits-reconcile.ts',
      description: 'Scheduled: every smb balance equals the sum of its ledger entries (LedgerDrift metric)',
      environment,
      timeout: Duration.minutes(5),
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
    });
    grantRoutePermissions(reconcile, { table: 'read' }, resources);
    new events.Rule(this, 'CreditsReconcileSchedule', {
      description: 'Runs the credit reconciliation every hour',
      schedule: events.Schedule.rate(Duration.hours(1)),
      targets: [new targets.LambdaFunction(reconcile.function, { retryAttempts: 2 })],
    });
    monitoredTasks.push({ label: 'CreditsReconcile', function: reconcile.function });

    // The enrichment reconciler (lib/enrichment/reconcile.ts): every 5 minutes, and whenever an
    // execution ends ABORTED, FAILED or TIMED_OUT. It starts lost executions and compensates attempts
    // whose execution ended without settling their campaign (docs/reliability.md).
    const enrichmentReconcile = new ServiceFunction(this, 'EnrichmentReconcile', {
      entry: 'functions/enrichment-reconcile.ts',
      description: 'Repairs enrichments a crash or an outside stop left unsettled; reports capacity drift',
      environment,
      timeout: Duration.minutes(4),
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
    });
    grantRoutePermissions(enrichmentReconcile, { table: 'readWrite', startsWorkflow: true, deletesObjects: true }, resources);
    // Reading and stopping executions of this state machine only.
    enrichmentReconcile.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'Executions',
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: [
          `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.workflow.stateMachine.stateMachineName}:*`,
        ],
      }),
    );
    Validations.of(enrichmentReconcile.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${this.getLogicalId(this.workflow.stateMachine.node.defaultChild as CfnResource)}.Name>:*]`,
      reason: 'Executions are named after enrichment attempts at run time; access is limited to executions of this one state machine.',
    });
    const schedulerRole = new iam.Role(this, 'EnrichmentReconcileSchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
      description: 'EventBridge Scheduler invokes the enrichment reconciler',
    });
    new scheduler.Schedule(this, 'EnrichmentReconcileSchedule', {
      description: 'Runs the enrichment reconciler every 5 minutes',
      schedule: scheduler.ScheduleExpression.rate(Duration.minutes(5)),
      target: new schedulerTargets.LambdaInvoke(enrichmentReconcile.function, { retryAttempts: 2, role: schedulerRole }),
    });
    Validations.of(schedulerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(enrichmentReconcile.function.node.defaultChild as CfnResource)}.Arn>:*]`,
      reason:
        'lambda:InvokeFunction on the reconciler function and its versions/aliases (the ":*" qualifier), as CDK grants for the scheduler target; no other function.',
    });
    new events.Rule(this, 'EnrichmentExecutionEnded', {
      description: 'Runs the enrichment reconciler when an enrichment execution ends ABORTED, FAILED or TIMED_OUT',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [this.workflow.stateMachine.stateMachineArn], status: ['ABORTED', 'FAILED', 'TIMED_OUT'] },
      },
      targets: [new targets.LambdaFunction(enrichmentReconcile.function, { retryAttempts: 2 })],
    });
    monitoredTasks.push({ label: 'EnrichmentReconcile', function: enrichmentReconcile.function });

    // The published contract (README.md): GET /openapi.json and GET /docs, one function.
    const docs = new ServiceFunction(this, SUPPORT_FUNCTIONS.docs.functionId, {
      entry: SUPPORT_FUNCTIONS.docs.entry,
      description: `OpenAPI document and API reference: ${DOCS_ROUTES.map((path) => `GET ${path}`).join(', ')}`,
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
      assetFiles: SUPPORT_FUNCTIONS.docs.assetFiles(),
      // The served document names the stream function's URL as its operation's server (docs/results.md "The stream").
      environment: Object.fromEntries([...streamUrls.values()].slice(0, 1).map((url) => [SETTINGS.resultsStreamUrl.env, url.url])),
    });
    for (const path of DOCS_ROUTES) {
      api.addRoutes({
        path,
        methods: [HttpMethod.GET],
        integration: new HttpLambdaIntegration(`${SUPPORT_FUNCTIONS.docs.functionId}Integration${path.replace(/\W/g, '')}`, docs.function),
      });
    }
    // Whatever no route serves (docs/errors.md): 404 not_found, or 405 method_not_allowed on an operation path, in the envelope.
    const catchAll = new ServiceFunction(this, SUPPORT_FUNCTIONS.catchAll.functionId, {
      entry: SUPPORT_FUNCTIONS.catchAll.entry,
      description: 'Catch-all ($default route): 404 not_found / 405 method_not_allowed in the envelope',
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
    });
    new HttpRoute(api, 'CatchAllRoute', {
      httpApi: api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration(`${SUPPORT_FUNCTIONS.catchAll.functionId}Integration`, catchAll.function),
    });
    // The MCP server (docs/agents.md): each tool call invokes its operation's function, the only thing it may do.
    const toolRoutes = MCP_ROUTES.filter((route) => functions.has(route.functionId));
    const toolFunctions: ToolFunctions = Object.fromEntries(
      toolRoutes.map((route) => [toolName(route.operation.operationId), functions.get(route.functionId)!.function.functionName]),
    );
    const mcp = new ServiceFunction(this, SUPPORT_FUNCTIONS.mcp.functionId, {
      entry: SUPPORT_FUNCTIONS.mcp.entry,
      description: `MCP server (Streamable HTTP, stateless): ${SUPPORT_FUNCTIONS.mcp.path}; invokes its tools' functions`,
      environment: { [TOOL_FUNCTIONS_VARIABLE]: JSON.stringify(toolFunctions) },
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
    });
    if (toolRoutes.length > 0)
      mcp.function.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['lambda:InvokeFunction'],
          resources: toolRoutes.map((route) => functions.get(route.functionId)!.function.functionArn),
        }),
      );
    api.addRoutes({
      path: SUPPORT_FUNCTIONS.mcp.path,
      methods: SUPPORT_FUNCTIONS.mcp.methods.map((method) => HttpMethod[method]),
      integration: new HttpLambdaIntegration(`${SUPPORT_FUNCTIONS.mcp.functionId}Integration`, mcp.function),
    });
    this.supportFunctions = { docs, catchAll, mcp };
    this.webhooks = this.createWebhookDelivery(settings, environment, resources);
    monitoredTasks.push(
      { label: 'WebhooksDispatch', function: this.webhooks.dispatcher.function },
      { label: 'WebhooksDeliver', function: this.webhooks.deliver.function },
    );

    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage,
      routes: monitoredRoutes,
      workflowFunctions: monitoredTasks,
      supportFunctions: [
        { label: SUPPORT_FUNCTIONS.catchAll.functionId, function: catchAll.function },
        { label: SUPPORT_FUNCTIONS.docs.functionId, function: docs.function },
        { label: SUPPORT_FUNCTIONS.jwks.functionId, function: this.erasures.jwks.function },
        { label: 'PrivacyErasureWorker', function: this.erasures.worker.function },
      ],
      stateMachine: this.workflow.stateMachine,
      table: this.table,
      webhooks: { stateMachine: this.webhooks.delivery.stateMachine, deadLetterQueue: this.webhooks.deadLetterQueue },
      erasures: { deadLetterQueue: this.erasures.deadLetterQueue },
      removalPolicy: settings.removalPolicy,
    });

    new CfnOutput(this, 'ApiUrl', {
      value: `https://${this.edge.distribution.distributionDomainName}/`,
      description: 'Base URL of the API: the CloudFront distribution behind the per-source web ACL',
    });
    new CfnOutput(this, 'ApiOriginUrl', {
      value: stage.url,
      description: "The HTTP API itself (the distribution's origin; not published)",
    });
    for (const [functionId, url] of this.streamUrls) {
      new CfnOutput(this, `${functionId}Url`, {
        value: url.url,
        description: `Base URL of ${functionId}, a streaming operation (the server of its operation in the OpenAPI document)`,
      });
    }
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The single DynamoDB table (for the operator CLI)' });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName, description: 'The data bucket (for the operator CLI)' });
    new CfnOutput(this, 'StateMachineArn', {
      value: this.workflow.stateMachine.stateMachineArn,
      description: 'The enrichment workflow (for the operator CLI: campaign:cancel)',
    });
    new CfnOutput(this, 'WebhookStateMachineArn', {
      value: this.webhooks.delivery.stateMachine.stateMachineArn,
      description: 'Webhook delivery: one execution per message (docs/webhooks.md)',
    });
    new CfnOutput(this, 'DashboardName', {
      value: this.monitoring.dashboard.dashboardName,
      description: 'The CloudWatch dashboard (docs/deploy.md)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'SNS topic of every alarm: subscribe to be notified',
    });
  }

  /**
   * The erasure job on AWS services (docs/privacy.md "The erasure job"):
   * erasures/create sends one message per job to a queue; its worker runs the
   * job (lib/privacy/erasure.ts), saving progress on the job's item after each
   * chunk of campaigns, so a redelivery (a failed or timed-out run: the
   * visibility timeout is six times the worker's timeout) resumes it; after
   * {@link ERASURE_MAX_RECEIVES} receives the message goes to the dead-letter
   * queue (alarmed). The receipt is signed by an asymmetric KMS key
   * (ECC_NIST_P256, SIGN_VERIFY) whose key policy lets only the worker sign;
   * `GET /.well-known/jwks.json` is served by a function that may only read
   * its public key.
   */
  private createErasureJob(
    settings: StageSettings,
    environment: Record<string, string>,
    resources: RouteResources,
    api: HttpApi,
  ): CampaignEnrichmentStack['erasures'] {
    const common = { logRetention: settings.logRetention, logRemovalPolicy: settings.removalPolicy };
    // Key administration for the account, without kms:Sign: the key policy lets only the worker sign (below).
    const receiptKey = new kms.Key(this, 'ReceiptKey', {
      description: 'Signs erasure receipts (ES256); only the erasure worker may sign (docs/privacy.md)',
      keySpec: kms.KeySpec.ECC_NIST_P256,
      keyUsage: kms.KeyUsage.SIGN_VERIFY,
      removalPolicy: settings.removalPolicy,
      policy: new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            sid: 'KeyAdministration',
            principals: [new iam.AccountRootPrincipal()],
            actions: RECEIPT_KEY_ADMIN_ACTIONS,
            resources: ['*'],
          }),
        ],
      }),
    });
    const keyIds = { RECEIPT_PUBLISHED_KEY_IDS: receiptKey.keyArn };

    const deadLetterQueue = new sqs.Queue(this, 'ErasureJobDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: settings.removalPolicy,
    });
    Validations.of(deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the erasure queue; its messages are alarmed on and replayed by an operator (docs/privacy.md), never consumed automatically.',
    });
    const queue = new sqs.Queue(this, 'ErasureJobs', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.minutes(ERASURE_VISIBILITY_MINUTES),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: ERASURE_MAX_RECEIVES },
      removalPolicy: settings.removalPolicy,
    });

    const worker = new ServiceFunction(this, 'PrivacyErasureWorker', {
      ...common,
      entry: 'functions/privacy-erasure-worker.ts',
      description: 'Erasure job: rewrites stored results without the person, deletes exports and saved answers, signs the receipt',
      environment: { ...environment, ...keyIds, RECEIPT_KEY_ID: receiptKey.keyArn },
      timeout: Duration.minutes(ERASURE_WORKER_TIMEOUT_MINUTES),
    });
    grantRoutePermissions(worker, { table: 'readWrite', bucket: 'readWrite', bucketKeys: [EXPIRING_KEY_PATTERNS[0]] }, resources);
    // The exports of the campaigns that held the person (objects under exports/): deleted so their URLs stop working.
    worker.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ExportDeletes',
        actions: ['s3:DeleteObject'],
        resources: [this.bucket.arnForObjects(`${OBJECT_PREFIXES.exports}*`)],
      }),
    );
    worker.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'ExportList', actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }),
    );
    Validations.of(worker.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.bucket.node.defaultChild as CfnResource)}.Arn>/${OBJECT_PREFIXES.exports}*]`,
      reason:
        'Export files are named per organization, campaign and export at run time; deletes are limited to this bucket’s export files.',
    });
    worker.function.addEventSource(new SqsEventSource(queue, { batchSize: 1, reportBatchItemFailures: true }));
    // Only the worker signs: in the key policy (the account's IAM cannot grant kms:Sign on this key) and in its role.
    receiptKey.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'ErasureWorkerSigns',
        principals: [worker.role],
        actions: ['kms:Sign', 'kms:GetPublicKey'],
        resources: ['*'],
      }),
    );
    worker.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'ReceiptSigning', actions: ['kms:Sign', 'kms:GetPublicKey'], resources: [receiptKey.keyArn] }),
    );

    const jwks = new ServiceFunction(this, SUPPORT_FUNCTIONS.jwks.functionId, {
      ...common,
      entry: SUPPORT_FUNCTIONS.jwks.entry,
      description: `Erasure receipts' public keys: GET ${SUPPORT_FUNCTIONS.jwks.path}`,
      environment: { POWERTOOLS_LOG_LEVEL: settings.logLevel, ...keyIds },
    });
    receiptKey.addToResourcePolicy(
      new iam.PolicyStatement({ sid: 'JwksReadsPublicKey', principals: [jwks.role], actions: ['kms:GetPublicKey'], resources: ['*'] }),
    );
    jwks.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'ReceiptPublicKey', actions: ['kms:GetPublicKey'], resources: [receiptKey.keyArn] }),
    );
    api.addRoutes({
      path: SUPPORT_FUNCTIONS.jwks.path,
      methods: [HttpMethod.GET],
      integration: new HttpLambdaIntegration(`${SUPPORT_FUNCTIONS.jwks.functionId}Integration`, jwks.function),
    });
    return { queue, deadLetterQueue, worker, receiptKey, jwks };
  }

  /**
   * Webhook delivery, driven by AWS services only (docs/webhooks.md): the
   * table's stream (new images) → `WebhooksDispatch` (only INSERTs of event
   * items pass the filter; failures retried 10 times, bisected, then sent to
   * the dead-letter queue — the event also stays in the pending index) →
   * one execution of the delivery state machine per message → `WebhooksDeliver`.
   */
  private createWebhookDelivery(settings: StageSettings, environment: Record<string, string>, resources: RouteResources) {
    const common = { environment, logRetention: settings.logRetention, logRemovalPolicy: settings.removalPolicy };
    const deliver = new ServiceFunction(this, 'WebhooksDeliver', {
      ...common,
      entry: 'functions/webhooks-deliver.ts',
      description: 'Webhook delivery task: one signed attempt of a message (15 s limit), logged',
      timeout: Duration.minutes(1),
      reservedConcurrentExecutions: settings.reservedConcurrency.webhookDeliver,
    });
    grantRoutePermissions(deliver, { table: 'readWrite' }, resources);
    const deliveryLogs = new logs.LogGroup(this, 'WebhookDeliveryLogs', {
      retention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
    });
    const delivery = new WebhookDelivery(this, 'WebhookDelivery', {
      deliverFunction: deliver.function,
      logGroup: deliveryLogs,
      tracing: true,
    });
    const deliveryRole = delivery.stateMachine.role;
    Validations.of(deliveryRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Step Functions log delivery (logs:CreateLogDelivery and related) and X-Ray tracing actions support no resource-level permissions.',
    });
    Validations.of(deliveryRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(deliver.function.node.defaultChild as CfnResource)}.Arn>:*]`,
      reason:
        'lambda:InvokeFunction on the delivery task function and its versions/aliases (the ":*" qualifier), as CDK grants for LambdaInvoke; no other function.',
    });

    const deadLetterQueue = new sqs.Queue(this, 'WebhookDispatchDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: settings.removalPolicy,
    });
    Validations.of(deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the webhook dispatcher; its messages are alarmed on and replayed by an operator, never consumed automatically.',
    });

    const dispatcher = new ServiceFunction(this, 'WebhooksDispatch', {
      ...common,
      entry: 'functions/webhooks-dispatch.ts',
      description: 'Webhook dispatcher: fans each new event out to its endpoints, one delivery execution per message',
      timeout: Duration.minutes(1),
      reservedConcurrentExecutions: settings.reservedConcurrency.webhookDispatch,
    });
    grantRoutePermissions(dispatcher, { table: 'readWrite' }, resources);
    delivery.stateMachine.grantStartExecution(dispatcher);
    dispatcher.addEnvironment('WEBHOOK_STATE_MACHINE_ARN', delivery.stateMachine.stateMachineArn);
    dispatcher.function.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 10,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: 10,
        onFailure: new SqsDlq(deadLetterQueue),
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('INSERT'),
            dynamodb: { Keys: { sk: { S: lambda.FilterRule.beginsWith('EVENT#') } } },
          }),
        ],
      }),
    );
    Validations.of(dispatcher.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams (granted with stream reads by the event source) and the X-Ray actions support no resource-level permissions; the stream reads themselves are on the table stream ARN.',
    });
    return { dispatcher, deliver, delivery, deadLetterQueue };
  }

  /** The single table, built from the same TABLE_DEFINITION as the local table (infra/local/table.ts). */
  private createTable(settings: StageSettings): dynamodb.TableV2 {
    const key = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });
    return new dynamodb.TableV2(this, 'Table', {
      partitionKey: key(TABLE_DEFINITION.partitionKey),
      sortKey: key(TABLE_DEFINITION.sortKey),
      billing: dynamodb.Billing.onDemand(),
      // New images feed the webhook dispatcher (docs/webhooks.md).
      dynamoStream: dynamodb.StreamViewType.NEW_IMAGE,
      timeToLiveAttribute: TABLE_DEFINITION.timeToLiveAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: settings.deletionProtection,
      removalPolicy: settings.removalPolicy,
      globalSecondaryIndexes: TABLE_DEFINITION.indexes.map((index) => ({
        indexName: index.indexName,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        projectionType: dynamodb.ProjectionType.INCLUDE,
        nonKeyAttributes: [...index.projectedAttributes],
      })),
    });
  }

  /**
   * The private data bucket, with S3 server access logs in a second bucket.
   * Objects under `OBJECT_PREFIXES.exports` and `OBJECT_PREFIXES.uploads` (lib/objects.ts) expire
   * after 1 day; account lists and results (`campaigns/`) never expire.
   *
   * `autoDeleteObjects` is deliberately off: it adds a custom-resource Lambda
   * allowed to delete every object. A dev stack deletes its buckets only once
   * they are empty.
   */
  private createBucket(settings: StageSettings): s3.Bucket {
    const secure = {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: settings.removalPolicy,
    } satisfies s3.BucketProps;

    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      ...secure,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: Duration.days(settings.accessLogDays) }],
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the server access log bucket of the data bucket; logging it into itself would log its own log deliveries.',
    });

    return new s3.Bucket(this, 'Data', {
      ...secure,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data/',
      lifecycleRules: [
        { id: 'ExpireExports', prefix: OBJECT_PREFIXES.exports, expiration: Duration.days(1) },
        { id: 'ExpireUploads', prefix: OBJECT_PREFIXES.uploads, expiration: Duration.days(1) },
        // Former recency markers (moved into the history shards by migration 004): any left matter only inside the longest window.
        { id: 'ExpireRecencyMarkers', prefix: OBJECT_PREFIXES.recency, expiration: Duration.days(MAX_EXCLUDE_DAYS + 1) },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
  }

  /**
   * A random value generated by Secrets Manager (CloudFormation can generate one no other way, and one made at synth
   * time would land in cdk.out and change on every synth). It reaches its readers as a CloudFormation dynamic
   * reference resolved at deploy time: no manual step, no runtime Secrets Manager call, no IAM grant (it is visible
   * to whoever may read the functions' configuration). `rotation`: why it is not rotated (cdk-nag AwsSolutions-SMG4).
   */
  private deployTimeSecret(id: string, settings: StageSettings, options: { description: string; length: number; rotation: string }) {
    const secret = new secretsmanager.Secret(this, id, {
      description: options.description,
      generateSecretString: { passwordLength: options.length, excludePunctuation: true },
      removalPolicy: settings.removalPolicy,
    });
    Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: options.rotation });
    return secret;
  }

  /**
   * The HTTP API and its `$default` stage: throttled, access-logged as JSON,
   * with detailed (per-route) metrics for the dashboard.
   */
  private createApi(settings: StageSettings) {
    const api = new HttpApi(this, 'Api', {
      description: 'Campaign Enrichment API',
      // The default stage is added below with throttling and access logs, which HttpApi's own cannot take.
      createDefaultStage: false,
    });
    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Every operation route authenticates the organization API key (Authorization: Bearer cek_…) in the Lambda request pipeline (lib/http/auth.ts), which must answer the spec error envelope (invalid_api_key / revoked_api_key) that an API Gateway authorizer cannot produce. GET /openapi.json, GET /docs (the published contract) and the $default catch-all (404/405 envelope) are public by design and read no data.',
    });

    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
    });
    const stage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      // Default route throttling of every route (StageSettings.throttle).
      throttle: settings.throttle,
      // Per-route Count/4xx/5xx/Latency for the dashboard (dimensions ApiId,
      // Stage, Resource, Method); billed as custom metrics, 6 per route.
      detailedMetricsEnabled: true,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            status: '$context.status',
            sourceIp: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationStatus: '$context.integrationStatus',
            error: '$context.error.message',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    return { api, stage };
  }
}

/** Options of {@link buildApp}. */
export interface BuildAppOptions {
  /**
   * App context, e.g. `{ stage: 'prod' }` or the feature flags of cdk.json.
   * Under the CLI, `cdk.json` and `-c key=value` arrive through the environment.
   */
  readonly context?: Record<string, unknown>;
  /** Target account and region. @default CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION (environment-agnostic when unset) */
  readonly env?: Environment;
  /** Routes of the stack. @default API_ROUTES */
  readonly routes?: readonly ApiRoute[];
}

/**
 * Builds the CDK app: the stack `CampaignEnrichment-<stage>` for the context
 * value `stage` (`dev` by default, or `prod`), with the cdk-nag AwsSolutions
 * pack as a policy validation plugin, so synthesis fails on any finding that
 * is not acknowledged with a reason.
 *
 * @throws Error when the `stage` context is neither `dev` nor `prod`.
 */
export function buildApp(options: BuildAppOptions = {}): { app: App; stack: CampaignEnrichmentStack; edge: EdgeProtectionStack } {
  const app = new App({ context: options.context });
  const stage = parseStage(app.node.tryGetContext('stage'));
  const account = options.env?.account ?? process.env.CDK_DEFAULT_ACCOUNT;
  // The web ACL must be in us-east-1 and the API's stack references it, which needs a known region: the CLI's, or
  // us-east-1 when none is configured (an offline `cdk synth`).
  const region = options.env?.region ?? process.env.CDK_DEFAULT_REGION ?? EDGE_REGION;
  const edge = new EdgeProtectionStack(app, `CampaignEnrichmentEdge-${stage}`, {
    edge: STAGES[stage].edge,
    description: `Campaign Enrichment API (${stage}): per-source web ACL of its CloudFront distribution`,
    env: { account, region: EDGE_REGION },
    crossRegionReferences: region !== EDGE_REGION,
  });
  const stack = new CampaignEnrichmentStack(app, `CampaignEnrichment-${stage}`, {
    stage,
    routes: options.routes,
    description: `Campaign Enrichment API (${stage})`,
    env: { account, region },
    crossRegionReferences: region !== EDGE_REGION,
    webAclArn: edge.webAcl.attrArn,
  });
  for (const each of [edge, stack]) {
    Tags.of(each).add('service', SERVICE_NAME);
    Tags.of(each).add('stage', stage);
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack, edge };
}

function parseStage(value: unknown): DeploymentStage {
  if (value === undefined) return 'dev';
  if (value === 'dev' || value === 'prod') return value;
  throw new Error(`Context "stage" must be "dev" or "prod", got ${JSON.stringify(value)}`);
}
