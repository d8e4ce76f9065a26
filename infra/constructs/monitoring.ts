/**
 * What an operator watches: one CloudWatch dashboard for the whole stack, the
 * alarms that page, and the SNS topic they page through. docs/deploy.md
 * ("Reading the dashboard", "When an alarm fires") explains both to a reader
 * of the console; keep the two in step.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, RATE_LIMITED_METRIC, type BusinessMetric } from '../../lib/observability';
import { SERVICE_NAME } from './service-function';

/** Period of every alarm and of the dashboard's graphs. */
const PERIOD = Duration.minutes(5);

/**
 * `rate_limited` answers of one organization in 5 minutes that raise
 * `RateLimitedOrganization`: a client hammering past its limit (10 % of one
 * window's default requests would be paced; this many refusals is not).
 */
export const RATE_LIMITED_ALARM_THRESHOLD = 300;

/**
 * Fewest requests in one {@link PERIOD} for the 5xx rate to count: below it a
 * single failed request of a quiet API would be a 100 % error rate and page
 * someone at night. Failures of a quiet API still show on the dashboard.
 */
export const MIN_REQUESTS_FOR_ERROR_RATE = 20;

/** 5xx responses, in percent of all requests over {@link PERIOD}, above which the API alarm fires. */
export const SERVER_ERROR_RATE_THRESHOLD_PERCENT = 1;

/**
 * Metrics of one CloudWatch alarm defined by metric math: CloudWatch refuses
 * an alarm whose expression reads more than 10 metrics.
 */
const MAX_METRICS_PER_ALARM = 10;

/**
 * DynamoDB operations whose `ThrottledRequests` the stack watches: every
 * operation the functions are allowed to call (infra/constructs/route-permissions.ts;
 * transactions are `TransactWriteItems`, authorized item by item).
 */
export const WATCHED_TABLE_OPERATIONS = [
  'GetItem',
  'BatchGetItem',
  'Query',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
] as const;

/**
 * The business metrics lib/observability.ts emits (embedded metric format,
 * namespace `CampaignEnrichment`, dimension `service`), each with what it
 * counts. Typed against `BusinessMetric`, so a metric added to or renamed in
 * the code fails the type check here until the dashboard shows it.
 */
export const BUSINESS_METRICS = {
  CampaignsLaunched: 'Enrichments launched (campaigns moved to enriching)',
  CreditsCharged: 'smb credits charged at launch',
  CreditsRefunded: 'smb credits refunded (failed or canceled enrichments)',
  AccountsEnriched: 'Accounts whose enrichment was recorded',
  EnrichmentsFailed: 'Enrichments compensated after a failure',
  EnrichmentsCanceled: 'Enrichments canceled by an operator',
  ExportRows: 'CSV rows exported',
  LedgerDrift: 'Credits by which balances, and campaigns’ credits.charged, differ from their ledgers (scheduled reconciliation; must be 0)',
  EnrichmentsRepaired: 'Enrichments the reconciler started, restarted or compensated (a crash window closed)',
  CapacityDrift: 'Accounts by which organizations’ enrichingAccounts differ from their enriching campaigns (must be 0)',
  WebhookMessagesDelivered: 'Webhook messages delivered (an endpoint answered 2xx)',
  WebhookAttemptsFailed: 'Webhook attempts that failed (non-2xx, redirect, timeout, refused address); each is retried on the schedule',
  WebhookMessagesFailed: 'Webhook messages given up: retry schedule exhausted (over 24 h) or the endpoint answered 410 Gone',
} as const satisfies Record<BusinessMetric, string>;

/** One HTTP API route and the function behind it. */
export interface MonitoredRoute {
  /** Route path, e.g. `/v1/campaigns/get` (the `Resource` dimension of route metrics). */
  readonly path: string;
  /** HTTP method of the route (the `Method` dimension). */
  readonly method: string;
  /** The route's Lambda. */
  readonly function: lambda.IFunction;
  /**
   * Served by its own function URL, not the HTTP API (a streaming operation, docs/results.md "The stream"): its
   * function is graphed and alarmed with the API's; it has no HTTP API route metric.
   */
  readonly functionUrl?: boolean;
}

/** One function of the enrichment workflow. */
export interface MonitoredFunction {
  /** Legend label, e.g. the function's construct id. */
  readonly label: string;
  readonly function: lambda.IFunction;
}

/** Properties of {@link Monitoring}. */
export interface MonitoringProps {
  /**
   * The API's stage. Per-route graphs need its detailed metrics on
   * (`detailedMetricsEnabled`); the stage-wide metrics and the 5xx alarm do not.
   */
  readonly stage: IHttpStage;
  /** Every route of the API, in dashboard order. */
  readonly routes: readonly MonitoredRoute[];
  /** The workflow's task functions. */
  readonly workflowFunctions: readonly MonitoredFunction[];
  /** Functions of the unrouted-request and documentation routes (catch-all, docs): graphed, and alarmed on throttles. @default none */
  readonly supportFunctions?: readonly MonitoredFunction[];
  readonly stateMachine: sfn.IStateMachine;
  readonly table: dynamodb.ITableV2;
  /** Webhook delivery (docs/webhooks.md): its state machine and the dispatcher's dead-letter queue. */
  readonly webhooks: { readonly stateMachine: sfn.IStateMachine; readonly deadLetterQueue: sqs.IQueue };
  /** The erasure job (docs/privacy.md "The erasure job"): the dead-letter queue its queue moves a job to after its last receive. */
  readonly erasures: { readonly deadLetterQueue: sqs.IQueue };
  /** What happens to the topic's KMS key when the stack is deleted. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

/** The alarms of {@link Monitoring}, by what they watch. */
export interface MonitoringAlarms {
  /** 5xx responses above {@link SERVER_ERROR_RATE_THRESHOLD_PERCENT} % of at least {@link MIN_REQUESTS_FOR_ERROR_RATE} requests. */
  readonly apiServerErrorRate: cloudwatch.Alarm;
  /** Any failed enrichment execution (each one was compensated: credits refunded). */
  readonly failedExecutions: cloudwatch.Alarm;
  /** Any throttled invocation of a route function (one alarm per 10 functions: `ApiFunctionThrottles`, `ApiFunctionThrottles-2`, …). */
  readonly apiFunctionThrottles: readonly cloudwatch.Alarm[];
  /** Any throttled invocation of a workflow task, scheduled or webhook function (one alarm per 10 functions). */
  readonly workflowFunctionThrottles: readonly cloudwatch.Alarm[];
  /** Any throttled invocation of a support function (catch-all, docs), when there are any. */
  readonly supportFunctionThrottles?: cloudwatch.Alarm;
  /** Any throttled request on the table or its indexes. */
  readonly tableThrottles: cloudwatch.Alarm;
  /** A balance differs from the sum of its ledger (the hourly reconciliation's `LedgerDrift` metric). */
  readonly ledgerDrift: cloudwatch.Alarm;
  /** Capacity held differs from the enriching campaigns (the enrichment reconciler's `CapacityDrift` metric). */
  readonly capacityDrift: cloudwatch.Alarm;
  /**
   * A webhook message given up (schedule exhausted or 410), a delivery
   * execution that failed, or an event the dispatcher could not fan out
   * (dead-letter queue).
   */
  readonly webhookDeliveryFailed: cloudwatch.Alarm;
  /**
   * An erasure job reached its dead-letter queue (`ErasureJobDeadLetters`):
   * it failed on every receive and stays `running` until an operator replays
   * it (docs/privacy.md "Replaying a dead-lettered job"); a person's data is
   * still stored (though no longer delivered) meanwhile.
   */
  readonly erasureJobDeadLettered: cloudwatch.Alarm;
  /**
   * One organization got at least {@link RATE_LIMITED_ALARM_THRESHOLD} `rate_limited` answers in 5 minutes
   * (docs/limits.md): the metric `RateLimited` per `organizationId` (a metric filter of each API function's
   * log group, infra/stack.ts), the organization with the most of them (a Metrics Insights query), so any
   * organization raises it and the others never add up.
   */
  readonly rateLimitedOrganization: cloudwatch.Alarm;
}

/**
 * The stack's dashboard, its alarms and the SNS topic every alarm notifies
 * (on ALARM and on OK).
 *
 * The topic is encrypted with a customer-managed KMS key (rotated yearly):
 * CloudWatch can publish to an encrypted topic only when the key policy lets
 * `cloudwatch.amazonaws.com` use the key, which the AWS-managed `aws/sns` key
 * never allows. The topic refuses requests not made over TLS.
 *
 * @example
 * const operations = new Monitoring(this, 'Monitoring', {
 *   stage, routes, workflowFunctions, stateMachine, table,
 *   removalPolicy: RemovalPolicy.DESTROY,
 * });
 * new CfnOutput(this, 'AlarmTopicArn', { value: operations.topic.topicArn });
 */
export class Monitoring extends Construct {
  /** Where every alarm sends its notifications; subscribe to it (docs/deploy.md). */
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: MonitoringAlarms;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const name = (suffix: string) => `${stack.stackName}-${suffix}`;
    const sum = { period: PERIOD, statistic: cloudwatch.Stats.SUM };

    this.topic = this.createTopic(props.removalPolicy ?? RemovalPolicy.RETAIN);

    const { stage, routes, workflowFunctions, stateMachine, table, webhooks, erasures } = props;
    const supportFunctions = props.supportFunctions ?? [];
    const apiFunctions: MonitoredFunction[] = routes.map((route) => ({ label: route.path, function: route.function }));

    // API: stage-wide metrics for the alarm, route metrics (detailed metrics) for the graphs.
    const requests = stage.metricCount(sum);
    const serverErrors = stage.metricServerError(sum);
    const serverErrorRate = new cloudwatch.MathExpression({
      label: '5xx rate (%)',
      expression: `IF(FILL(requests, 0) >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * FILL(errors, 0) / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: PERIOD,
    });
    const routeMetric = (route: MonitoredRoute, metric: cloudwatch.Metric) =>
      metric.with({
        label: route.path,
        dimensionsMap: { ApiId: stage.api.apiId, Stage: stage.stageName, Resource: route.path, Method: route.method },
      });
    const perRoute = (metric: 'metricCount' | 'metricClientError' | 'metricServerError' | 'metricLatency', statistic: string) =>
      routes.filter((route) => !route.functionUrl).map((route) => routeMetric(route, stage[metric]({ period: PERIOD, statistic })));

    // Lambda: each function a line; alarms add up throttles in metric math.
    const perFunction = (
      functions: readonly MonitoredFunction[],
      metric: 'metricErrors' | 'metricThrottles' | 'metricDuration',
      statistic: string,
    ) => functions.map(({ label, function: fn }) => fn[metric]({ period: PERIOD, statistic, label }));

    // DynamoDB: ThrottledRequests exists per operation only.
    const tableThrottles = WATCHED_TABLE_OPERATIONS.map((operation) =>
      table.metric('ThrottledRequests', { ...sum, dimensionsMap: { TableName: table.tableName, Operation: operation }, label: operation }),
    );
    const transactionConflicts = table.metric('TransactionConflict', { ...sum, label: 'TransactionConflict' });

    const executions = {
      started: stateMachine.metricStarted({ ...sum, label: 'Started' }),
      succeeded: stateMachine.metricSucceeded({ ...sum, label: 'Succeeded' }),
      failed: stateMachine.metricFailed({ ...sum, label: 'Failed' }),
      aborted: stateMachine.metricAborted({ ...sum, label: 'Aborted (canceled)' }),
      timedOut: stateMachine.metricTimedOut({ ...sum, label: 'TimedOut' }),
    };

    const business = Object.fromEntries(
      (Object.keys(BUSINESS_METRICS) as BusinessMetric[]).map((metricName) => [
        metricName,
        new cloudwatch.Metric({
          namespace: METRICS_NAMESPACE,
          metricName,
          // Powertools Metrics' only default dimension: the service name.
          dimensionsMap: { service: SERVICE_NAME },
          ...sum,
          label: metricName,
        }),
      ]),
    ) as Record<BusinessMetric, cloudwatch.Metric>;

    const atLeastOne = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    } as const;
    this.alarms = {
      apiServerErrorRate: serverErrorRate.createAlarm(this, 'ApiServerErrorRate', {
        alarmName: name('Api5xxRate'),
        alarmDescription: `More than ${SERVER_ERROR_RATE_THRESHOLD_PERCENT} % of API requests answered 5xx over 5 minutes (at least ${MIN_REQUESTS_FOR_ERROR_RATE} requests). Find the route on the dashboard, then the function's errors in its log group (docs/deploy.md).`,
        threshold: SERVER_ERROR_RATE_THRESHOLD_PERCENT,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      failedExecutions: executions.failed.createAlarm(this, 'FailedExecutions', {
        ...atLeastOne,
        alarmName: name('EnrichmentFailed'),
        alarmDescription:
          'An enrichment execution failed: its attempt was compensated (credits refunded, capacity released). Read the failed execution in the Step Functions console (docs/deploy.md).',
      }),
      apiFunctionThrottles: sumAlarms(this, 'ApiFunctionThrottles', perFunction(apiFunctions, 'metricThrottles', cloudwatch.Stats.SUM), {
        ...atLeastOne,
        alarmName: name('ApiFunctionThrottles'),
        alarmDescription:
          'Lambda throttled a route function: the account or the function ran out of concurrency, and clients got 5xx. See the Lambda row of the dashboard (docs/deploy.md).',
      }),
      workflowFunctionThrottles: sumAlarms(
        this,
        'WorkflowFunctionThrottles',
        perFunction(workflowFunctions, 'metricThrottles', cloudwatch.Stats.SUM),
        {
          ...atLeastOne,
          alarmName: name('WorkflowFunctionThrottles'),
          alarmDescription:
            'Lambda throttled a workflow task, scheduled or webhook function. Workflows retry throttles, but persistent throttling ends in failed (compensated) enrichments or late webhooks (docs/deploy.md).',
        },
      ),
      ledgerDrift: business.LedgerDrift.with({ statistic: cloudwatch.Stats.MAXIMUM, period: Duration.hours(1) }).createAlarm(
        this,
        'LedgerDrift',
        {
          ...atLeastOne,
          alarmName: name('LedgerDrift'),
          alarmDescription:
            "An organization's smb balance differs from the sum of its ledger entries (docs/launch.md#the-credit-ledger), or a campaign's credits.charged from minus the sum of its entries: credits moved outside lib/credits. The CreditsReconcile function's log names each organization and campaign; run `npm run ops -- credits:reconcile` against the stack (docs/deploy.md).",
        },
      ),
      capacityDrift: business.CapacityDrift.with({ statistic: cloudwatch.Stats.MAXIMUM }).createAlarm(this, 'CapacityDrift', {
        ...atLeastOne,
        alarmName: name('CapacityDrift'),
        alarmDescription:
          "An organization's enrichingAccounts differs from its external figure plus the eligible accounts of its enriching campaigns: capacity held or released outside an attempt. The EnrichmentReconcile function's log names the organization (docs/reliability.md).",
      }),
      ...(supportFunctions.length > 0
        ? {
            supportFunctionThrottles: sumAlarm(
              this,
              'SupportFunctionThrottles',
              perFunction(supportFunctions, 'metricThrottles', cloudwatch.Stats.SUM),
              {
                ...atLeastOne,
                alarmName: name('SupportFunctionThrottles'),
                alarmDescription:
                  'Lambda throttled the catch-all or the docs function: clients got 5xx instead of the 404/405 envelope or the API reference. See the Lambda row of the dashboard (docs/deploy.md).',
              },
            ),
          }
        : {}),
      erasureJobDeadLettered: erasures.deadLetterQueue
        .metricApproximateNumberOfMessagesVisible({
          period: PERIOD,
          statistic: cloudwatch.Stats.MAXIMUM,
        })
        .createAlarm(this, 'ErasureJobDeadLettered', {
          ...atLeastOne,
          alarmName: name('ErasureJobDeadLettered'),
          alarmDescription:
            'An erasure job failed on every receive and sits in the ErasureJobDeadLetters queue: the job stays running and the person is still stored (no longer delivered). Find the cause in the PrivacyErasureWorker log (Erasure job failed, by erasureId), fix it, then redrive the queue (docs/privacy.md "Replaying a dead-lettered job").',
        }),
      webhookDeliveryFailed: sumAlarm(
        this,
        'WebhookDeliveryFailed',
        [
          business.WebhookMessagesFailed.with({ label: 'Messages given up' }),
          webhooks.stateMachine.metricFailed({ ...sum, label: 'Delivery executions failed' }),
          webhooks.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: PERIOD,
            statistic: cloudwatch.Stats.MAXIMUM,
            label: 'Events not dispatched (DLQ)',
          }),
        ],
        {
          ...atLeastOne,
          alarmName: name('WebhookDeliveryFailed'),
          alarmDescription:
            'A webhook message failed for good (its retry schedule of over 24 h ran out, or the endpoint answered 410 and was disabled), a delivery execution failed, or an event reached the dispatcher dead-letter queue. Read the delivery log (POST /v1/webhooks/deliveries) of the organization in the WebhooksDeliver logs; redeliver once the customer fixed their endpoint (docs/deploy.md).',
        },
      ),
      rateLimitedOrganization: new cloudwatch.MathExpression({
        label: 'rate_limited answers of the most refused organization',
        expression: `SELECT SUM(${RATE_LIMITED_METRIC}) FROM SCHEMA("${METRICS_NAMESPACE}", organizationId) GROUP BY organizationId ORDER BY SUM() DESC LIMIT 1`,
        usingMetrics: {},
        period: PERIOD,
      }).createAlarm(this, 'RateLimitedOrganization', {
        alarmName: name('RateLimitedOrganization'),
        alarmDescription: `One organization got at least ${RATE_LIMITED_ALARM_THRESHOLD} rate_limited answers (429) in 5 minutes: a client past its limits (docs/limits.md). The dashboard's "rate_limited by organization" graph names it; its requests carry organizationId in the API logs. Contact the customer, or raise its limits with \`npm run ops -- org:limits\` (docs/deploy.md).`,
        threshold: RATE_LIMITED_ALARM_THRESHOLD,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      tableThrottles: sumAlarm(this, 'TableThrottles', tableThrottles, {
        ...atLeastOne,
        alarmName: name('TableThrottles'),
        alarmDescription:
          'DynamoDB throttled requests on the table or an index (on-demand capacity or a hot partition). See the DynamoDB row of the dashboard (docs/deploy.md).',
      }),
    };
    const action = new actions.SnsAction(this.topic);
    const everyAlarm = Object.values(this.alarms).flat();
    for (const alarm of everyAlarm) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }

    const graph = (title: string, left: cloudwatch.IMetric[], options: Partial<cloudwatch.GraphWidgetProps> = {}) =>
      new cloudwatch.GraphWidget({ title, left, width: 8, height: 6, legendPosition: cloudwatch.LegendPosition.BOTTOM, ...options });
    const heading = (markdown: string) =>
      new cloudwatch.TextWidget({ markdown, width: 24, height: 1, background: cloudwatch.TextWidgetBackground.TRANSPARENT });
    const allFunctions = [...apiFunctions, ...workflowFunctions, ...supportFunctions];

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      // Dashboard names are global to the account (alarm names are regional):
      // the region keeps two regional deployments of one stage apart.
      dashboardName: name(stack.region),
      defaultInterval: Duration.hours(3),
      periodOverride: cloudwatch.PeriodOverride.AUTO,
      widgets: [
        [
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarms (notify the alarm topic)',
            alarms: everyAlarm,
            width: 24,
            height: 3,
          }),
        ],
        [heading('## API — per route (POST), 5-minute sums; 429s from stage throttling count as 4xx')],
        [
          graph('Requests', perRoute('metricCount', cloudwatch.Stats.SUM)),
          graph('4xx', perRoute('metricClientError', cloudwatch.Stats.SUM)),
          graph('5xx', perRoute('metricServerError', cloudwatch.Stats.SUM)),
        ],
        [
          graph('Latency p50 (ms)', perRoute('metricLatency', cloudwatch.Stats.p(50))),
          graph('Latency p99 (ms)', perRoute('metricLatency', cloudwatch.Stats.p(99))),
          graph('5xx rate, whole API (%)', [serverErrorRate], {
            leftAnnotations: [{ value: SERVER_ERROR_RATE_THRESHOLD_PERCENT, label: 'alarm', color: cloudwatch.Color.RED }],
            leftYAxis: { min: 0 },
          }),
        ],
        [
          graph(
            'rate_limited by organization (top 10)',
            [
              new cloudwatch.MathExpression({
                label: '',
                expression: `SELECT SUM(${RATE_LIMITED_METRIC}) FROM SCHEMA("${METRICS_NAMESPACE}", organizationId) GROUP BY organizationId ORDER BY SUM() DESC LIMIT 10`,
                usingMetrics: {},
                period: PERIOD,
              }),
            ],
            { leftAnnotations: [{ value: RATE_LIMITED_ALARM_THRESHOLD, label: 'alarm', color: cloudwatch.Color.RED }], width: 24 },
          ),
        ],
        [heading('## Lambda — every function: route functions by path, workflow tasks by name')],
        [
          graph('Errors (unhandled)', perFunction(allFunctions, 'metricErrors', cloudwatch.Stats.SUM)),
          graph('Throttles', perFunction(allFunctions, 'metricThrottles', cloudwatch.Stats.SUM)),
          graph('Duration p99 (ms)', perFunction(allFunctions, 'metricDuration', cloudwatch.Stats.p(99))),
        ],
        [heading('## Enrichment workflow and DynamoDB')],
        [
          graph('Executions', Object.values(executions)),
          graph('DynamoDB throttled requests (by operation)', tableThrottles),
          graph('DynamoDB transaction conflicts', [transactionConflicts]),
        ],
        [heading('## Business — embedded metrics from the code (namespace CampaignEnrichment)')],
        [
          new cloudwatch.SingleValueWidget({
            title: 'Totals over the selected time range',
            metrics: Object.values(business),
            setPeriodToTimeRange: true,
            width: 24,
            height: 3,
          }),
        ],
        [
          graph('Campaigns: launched, failed, canceled', [
            business.CampaignsLaunched,
            business.EnrichmentsFailed,
            business.EnrichmentsCanceled,
          ]),
          graph('Credits: charged, refunded', [business.CreditsCharged, business.CreditsRefunded]),
          graph('Accounts enriched, export rows', [business.AccountsEnriched], { right: [business.ExportRows] }),
        ],
        [
          graph('Webhooks: delivered, failed attempts, given up', [
            business.WebhookMessagesDelivered,
            business.WebhookAttemptsFailed,
            business.WebhookMessagesFailed,
          ]),
          graph('Webhook delivery executions', [
            webhooks.stateMachine.metricStarted({ ...sum, label: 'Started' }),
            webhooks.stateMachine.metricSucceeded({ ...sum, label: 'Succeeded' }),
            webhooks.stateMachine.metricFailed({ ...sum, label: 'Failed' }),
          ]),
          graph('Dead letters: webhook dispatcher, erasure jobs', [
            webhooks.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: PERIOD,
              statistic: cloudwatch.Stats.MAXIMUM,
              label: 'Webhook events not dispatched',
            }),
            erasures.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: PERIOD,
              statistic: cloudwatch.Stats.MAXIMUM,
              label: 'Erasure jobs dead-lettered',
            }),
          ]),
        ],
      ],
    });
  }

  /** The alarm topic: KMS-encrypted with a key CloudWatch may use, TLS only. */
  private createTopic(removalPolicy: RemovalPolicy): sns.Topic {
    const stack = Stack.of(this);
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm topic of ${stack.stackName}`,
      enableKeyRotation: true,
      removalPolicy,
    });
    // CloudWatch encrypts each alarm notification with the topic's key.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'], // in a key policy, "*" is this key
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `${stack.stackName} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's
    // default one: allow this account's alarms to publish explicitly.
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    return topic;
  }
}

/**
 * The names of the alarms that sum `metricCount` metrics under `alarmName`:
 * one per {@link MAX_METRICS_PER_ALARM} metrics, the first `alarmName`, the
 * next `alarmName-2`, and so on (so a test derives them from the route count).
 */
export function sumAlarmNames(alarmName: string, metricCount: number): string[] {
  return Array.from({ length: Math.ceil(metricCount / MAX_METRICS_PER_ALARM) }, (_, i) => (i === 0 ? alarmName : `${alarmName}-${i + 1}`));
}

/**
 * Alarms on the sum of any number of metrics: one {@link sumAlarm} per
 * {@link MAX_METRICS_PER_ALARM} metrics, named by {@link sumAlarmNames}.
 */
function sumAlarms(scope: Construct, id: string, metrics: cloudwatch.IMetric[], props: cloudwatch.CreateAlarmOptions): cloudwatch.Alarm[] {
  const names = sumAlarmNames(props.alarmName ?? id, metrics.length);
  return names.map((name, i) =>
    sumAlarm(scope, `${id}${i === 0 ? '' : i + 1}`, metrics.slice(i * MAX_METRICS_PER_ALARM, (i + 1) * MAX_METRICS_PER_ALARM), {
      ...props,
      alarmName: props.alarmName && name,
    }),
  );
}

/**
 * An alarm on the sum of metrics, each missing datapoint counted as 0 (a plain
 * `m1 + m2` has no value wherever one series has none, so a throttle on one
 * operation alone would never show).
 *
 * @throws Error when given more than {@link MAX_METRICS_PER_ALARM} metrics (CloudWatch's limit).
 */
function sumAlarm(scope: Construct, id: string, metrics: cloudwatch.IMetric[], props: cloudwatch.CreateAlarmOptions): cloudwatch.Alarm {
  if (metrics.length === 0 || metrics.length > MAX_METRICS_PER_ALARM) {
    throw new Error(`${id}: an alarm sums 1 to ${MAX_METRICS_PER_ALARM} metrics, got ${metrics.length}`);
  }
  const usingMetrics = Object.fromEntries(metrics.map((metric, i) => [`m${i + 1}`, metric]));
  return new cloudwatch.MathExpression({
    label: id,
    expression: Object.keys(usingMetrics)
      .map((key) => `FILL(${key}, 0)`)
      .join(' + '),
    usingMetrics,
    period: PERIOD,
  }).createAlarm(scope, id, props);
}
