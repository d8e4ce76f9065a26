/**
 * Assertions on the synthesized CloudFormation of the stack (infra/stack.ts).
 *
 * The apps are built with the feature flags of cdk.json (what `cdk synth`
 * uses) and with bundling switched off (`aws:cdk:bundling-stacks: []`), so no
 * esbuild run happens here. Every synthesis also runs the cdk-nag
 * AwsSolutions plugin: an unacknowledged finding makes it throw.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_COUNTER_KEY_PATTERN, TABLE_DEFINITION } from '../../lib/db/table';
import { PROJECT_ROOT, type ServiceFunction } from '../../infra/constructs/service-function';
import {
  MIN_REQUESTS_FOR_ERROR_RATE,
  RATE_LIMITED_ALARM_THRESHOLD,
  SERVER_ERROR_RATE_THRESHOLD_PERCENT,
  sumAlarmNames,
} from '../../infra/constructs/monitoring';
import { API_ROUTES, DOCS_ROUTES, MCP_ROUTES, SUPPORT_FUNCTIONS, usesCursors, type ApiRoute } from '../../infra/routes';
import { TOOL_FUNCTIONS_VARIABLE } from '../../mcp/lambda-caller';
import {
  buildApp,
  ERASURE_MAX_RECEIVES,
  ERASURE_WORKER_TIMEOUT_MINUTES,
  STAGES,
  STREAM_FUNCTION_TIMEOUT_SECONDS,
  type CampaignEnrichmentStack,
} from '../../infra/stack';
import { ORIGIN_VERIFY_HEADER, ORIGIN_VERIFY_SECRET_ENV } from '../../lib/http/source-address';
import { SETTINGS } from '../../lib/config';
import { newApiKey, newTestApiKey } from '../../lib/ids';

import { EXPIRING_KEY_PATTERNS, OBJECT_PREFIXES } from '../../lib/objects';
import { WORKFLOW_TASKS } from '../../infra/workflow';
import { FUNCTION_NODE_OPTIONS, memoryOf } from '../../infra/memory';

/** The routes behind the HTTP API: every route but the streaming ones (each at its own function URL). */
const HTTP_API_ROUTES = API_ROUTES.filter((route) => !route.operation.streaming);

const CDK_JSON = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

/** An app as `cdk synth -c stage=<stage>` builds it, minus bundling. */
function synth(stage: 'dev' | 'prod', routes?: readonly ApiRoute[]) {
  const built = buildApp({ context: { ...CDK_JSON.context, stage, 'aws:cdk:bundling-stacks': [] }, routes });
  return { ...built, template: Template.fromStack(built.stack) };
}

const logicalId = (construct: IConstruct): string => {
  const stack = Stack.of(construct);
  return stack.resolve(stack.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
};

type Statement = { Sid?: string; Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

/**
 * The grant every read-only route has besides its reads (docs/limits.md): UpdateItem on its organizations'
 * limit counters only (lib/http/rate-limit.ts), by the partition key's pattern.
 */
const isLimitCounterGrant = (s: Statement) => s.Sid === 'LimitCounters';
const withoutLimitCounters = (statements: Statement[]) => statements.filter((s) => !isLimitCounterGrant(s));

/** A route's or a workflow task's function (construct id = functionId). */
const functionOf = (stack: CampaignEnrichmentStack, functionId: string): ServiceFunction =>
  stack.functions.get(functionId) ?? (stack.node.findChild(functionId) as ServiceFunction);

/** Every statement of the policies attached to a function's role. */
function statementsOf(template: Template, stack: CampaignEnrichmentStack, functionId: string): Statement[] {
  const role = functionOf(stack, functionId).role;
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: Match.arrayWith([{ Ref: logicalId(role) }]) } });
  return Object.values(policies).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}
const actionsOf = (statements: Statement[]): string[] => statements.flatMap((s) => [s.Action].flat());

/** Logical IDs of the roles any of whose policies (attached or inline) allows `action`. */
function rolesAllowing(template: Template, action: string): string[] {
  const allows = (statements: Statement[]) => statements.some((s) => s.Effect === 'Allow' && [s.Action].flat().includes(action));
  const attached = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => allows(policy.Properties.PolicyDocument.Statement))
    .flatMap((policy) => (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref));
  const inline = Object.entries(template.findResources('AWS::IAM::Role'))
    .filter(([, role]) =>
      ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).some((p) =>
        allows(p.PolicyDocument.Statement),
      ),
    )
    .map(([id]) => id);
  return [...new Set([...attached, ...inline])].sort();
}

const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:TransactWriteItems',
  'dynamodb:BatchWriteItem',
];
const S3_WRITE_ACTION = /^s3:(Put|Delete|Abort|Restore|Replicate|\*)/;

/**
 * A CloudFormation value with its intrinsic functions rendered as text:
 * `{ Ref: X }` → `<X>`, `{ 'Fn::GetAtt': [X, 'Arn'] }` → `<X.Arn>`, and an
 * `Fn::Join` with '' joined, so a DefinitionString or DashboardBody parses
 * as JSON and still names the resources it points at.
 */
function renderTokens(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, unknown>;
  if ('Ref' in object) return `<${String(object.Ref)}>`;
  if ('Fn::GetAtt' in object) return `<${(object['Fn::GetAtt'] as string[]).join('.')}>`;
  if ('Fn::Join' in object) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(renderTokens).join(separator);
  }
  throw new Error(`Cannot render ${JSON.stringify(value)}`);
}

/** The state machine's ASL with tokens rendered by {@link renderTokens}. */
type AslState = {
  Type: string;
  Next?: string;
  End?: boolean;
  Resource?: string;
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  ItemProcessor?: Asl;
};
type Asl = { StartAt: string; States: Record<string, AslState> };

describe('CampaignEnrichment-dev', () => {
  let built: ReturnType<typeof synth>;
  let template: Template;
  beforeAll(() => {
    built = synth('dev');
    template = built.template;
  });

  it('is named after its stage', () => {
    expect(built.stack.stackName).toBe('CampaignEnrichment-dev');
  });

  it('routes POST <path> of every API route to that route’s own function', () => {
    const routes = template.findResources('AWS::ApiGatewayV2::Route');
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    // Plus the docs routes, the $default catch-all, the MCP methods and GET /.well-known/jwks.json (the streaming routes are at their function URLs).
    expect(Object.keys(routes)).toHaveLength(HTTP_API_ROUTES.length + DOCS_ROUTES.length + 1 + SUPPORT_FUNCTIONS.mcp.methods.length + 1);
    for (const route of HTTP_API_ROUTES) {
      const [resource, ...others] = Object.values(routes).filter((r) => r.Properties.RouteKey === `POST ${route.operation.path}`);
      expect(others).toHaveLength(0);
      const integrationId = resource!.Properties.Target['Fn::Join'][1][1].Ref as string;
      expect(integrations[integrationId]!.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(built.stack.functions.get(route.functionId)!.function), 'Arn'] },
      });
    }
  });

  it('serves each streaming operation from its own function URL in RESPONSE_STREAM mode (auth by our API key: AuthType NONE), not the HTTP API; its URL an output and the docs function’s RESULTS_STREAM_URL; the function outlives the longest stream', () => {
    const streaming = API_ROUTES.filter((route) => route.operation.streaming);
    expect(streaming.length).toBeGreaterThan(0);
    const functions = template.findResources('AWS::Lambda::Function');
    for (const route of streaming) {
      const fn = built.stack.functions.get(route.functionId)!;
      expect(functionOfRoute(`POST ${route.operation.path}`)).toBeUndefined();
      template.hasResourceProperties('AWS::Lambda::Url', {
        AuthType: 'NONE',
        InvokeMode: 'RESPONSE_STREAM',
        TargetFunctionArn: { 'Fn::GetAtt': [logicalId(fn.function), 'Arn'] },
      });
      expect(functions[logicalId(fn.function)]!.Properties.Timeout).toBe(STREAM_FUNCTION_TIMEOUT_SECONDS);
      expect(STREAM_FUNCTION_TIMEOUT_SECONDS).toBeGreaterThan(SETTINGS.resultsStreamMaxSeconds.default as number);
      expect(Object.keys(template.findOutputs(`${route.functionId}Url`))).toHaveLength(1);
    }
    const docs = functions[logicalId(built.stack.supportFunctions.docs.function)]!.Properties;
    expect(docs.Environment.Variables[SETTINGS.resultsStreamUrl.env]).toBeDefined();
  });

  /** The function an HTTP API route key is integrated with (its logical ID), or undefined when no such route exists. */
  function functionOfRoute(routeKey: string): string | undefined {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter((r) => r.Properties.RouteKey === routeKey);
    expect(routes.length, routeKey).toBeLessThanOrEqual(1);
    if (routes.length === 0) return undefined;
    const integrationId = routes[0]!.Properties.Target['Fn::Join'][1][1].Ref as string;
    const integration = template.findResources('AWS::ApiGatewayV2::Integration')[integrationId]!.Properties;
    expect(integration).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
    return integration.IntegrationUri['Fn::GetAtt'][0] as string;
  }

  it('sends every unrouted request ($default) to the catch-all function: 404/405 in the envelope, not API Gateway’s own body', () => {
    expect(functionOfRoute('$default')).toBe(logicalId(built.stack.supportFunctions.catchAll.function));
    expect(built.stack.supportFunctions.catchAll.node.id).toBe(SUPPORT_FUNCTIONS.catchAll.functionId);
    // An operation path with another method has no route of its own: it reaches $default (405 there).
    for (const route of API_ROUTES) expect(functionOfRoute(`GET ${route.operation.path}`)).toBeUndefined();
    // The catch-all reads nothing and writes nothing.
    const actions = actionsOf(statementsOf(template, built.stack, SUPPORT_FUNCTIONS.catchAll.functionId));
    expect(actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))).toEqual([]);
  });

  it('serves GET /openapi.json and GET /docs from the docs function, which touches no data', () => {
    for (const path of DOCS_ROUTES)
      expect(functionOfRoute(`GET ${path}`), path).toBe(logicalId(built.stack.supportFunctions.docs.function));
    expect(DOCS_ROUTES).toEqual([
      '/openapi.json',
      '/asyncapi.json',
      '/docs',
      '/docs/{guide}',
      '/.well-known/api-catalog',
      '/llms.txt',
      '/.well-known/mcp/server-card.json',
    ]);
    const actions = actionsOf(statementsOf(template, built.stack, SUPPORT_FUNCTIONS.docs.functionId));
    expect(actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))).toEqual([]);
    const fn = template.findResources('AWS::Lambda::Function')[logicalId(built.stack.supportFunctions.docs.function)]!;
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Timeout: 28 });
    expect(fn.Properties.Environment.Variables.TABLE_NAME).toBeUndefined();
  });

  it('serves /mcp (POST, and GET and DELETE for the 405 of a stateless server) from the MCP function, which may only invoke its tools’ functions', () => {
    for (const method of SUPPORT_FUNCTIONS.mcp.methods)
      expect(functionOfRoute(`${method} /mcp`), method).toBe(logicalId(built.stack.supportFunctions.mcp.function));
    const statements = statementsOf(template, built.stack, SUPPORT_FUNCTIONS.mcp.functionId);
    expect(actionsOf(statements).filter((action) => !action.startsWith('logs:') && !action.startsWith('xray:'))).toEqual([
      'lambda:InvokeFunction',
    ]);
    const invoked = statements.find((s) => [s.Action].flat().includes('lambda:InvokeFunction'))!;
    const invokedIds = ([invoked.Resource].flat() as { 'Fn::GetAtt': [string, string] }[]).map((arn) => arn['Fn::GetAtt'][0]);
    expect(invokedIds.sort()).toEqual(MCP_ROUTES.map((route) => logicalId(built.stack.functions.get(route.functionId)!.function)).sort());
    const fn = template.findResources('AWS::Lambda::Function')[logicalId(built.stack.supportFunctions.mcp.function)]!;
    const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables.TABLE_NAME).toBeUndefined();
    expect(variables[TOOL_FUNCTIONS_VARIABLE]).toBeDefined();
  });

  it('builds each function from its route’s entry under its functionId', () => {
    for (const route of API_ROUTES) {
      const fn = built.stack.node.findChild(route.functionId);
      expect(fn).toBe(built.stack.functions.get(route.functionId));
      expect(fn.node.path).toBe(`CampaignEnrichment-dev/${route.functionId}`);
    }
  });

  it('runs every route function on nodejs24.x, arm64, its memory from infra/memory.ts, 28 s (inside the 29 s of API Gateway), X-Ray active, logging to its own log group', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const logGroups = template.findResources('AWS::Logs::LogGroup');
    for (const route of API_ROUTES) {
      const fn = built.stack.functions.get(route.functionId)!;
      expect(functions[logicalId(fn.function)]!.Properties, route.functionId).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: memoryOf(route.functionId),
        Timeout: route.operation.streaming ? STREAM_FUNCTION_TIMEOUT_SECONDS : 28,
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: logicalId(fn.logGroup) } },
      });
      expect(logGroups[logicalId(fn.logGroup)]!.Properties.RetentionInDays, route.functionId).toBe(7);
    }
    template.allResourcesProperties('AWS::Lambda::Function', { Runtime: 'nodejs24.x', Architectures: ['arm64'] });
  });

  it('merges the stack’s environment into the construct’s defaults', () => {
    const fn = built.stack.functions.get('CampaignsList')!;
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Environment: {
        Variables: {
          NODE_OPTIONS: Match.absent(),
          POWERTOOLS_SERVICE_NAME: 'campaign-enrichment-api',
          POWERTOOLS_LOG_LEVEL: 'DEBUG',
          TABLE_NAME: { Ref: logicalId(built.stack.table) },
          BUCKET_NAME: { Ref: logicalId(built.stack.bucket) },
          CURSOR_SECRET: {
            'Fn::Join': [
              '',
              ['{{resolve:secretsmanager:', { Ref: Match.stringLikeRegexp('^CursorSecret') }, Match.stringLikeRegexp('^:SecretString:')],
            ],
          },
        },
      },
      Role: { 'Fn::GetAtt': [logicalId(fn.role), 'Arn'] },
    });
  });

  it('gives the cursor-signing secret only to the functions that page with cursors (N12)', () => {
    const cursorRoutes = API_ROUTES.filter((route) => usesCursors(route.operation)).map((route) => route.functionId);
    // The operations whose request has a cursor field: derived, and checked against what lib/ reads the secret for.
    expect(cursorRoutes.sort()).toEqual([
      'CampaignsAccounts',
      'CampaignsList',
      'EventsList',
      'KeysList',
      'OrgAudit',
      'OrgLedger',
      'PrivacyErasuresList',
      'PrivacySuppressionsList',
      'WebhooksDeliveries',
    ]);
    expect(MCP_ROUTES.some((route) => usesCursors(route.operation))).toBe(true);
    const fns = template.findResources('AWS::Lambda::Function');
    const holders = Object.entries(fns)
      .filter(
        ([, fn]) =>
          (fn.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables?.CURSOR_SECRET !== undefined,
      )
      .map(([id]) => id)
      .sort();
    const expected = [...cursorRoutes.map((id) => logicalId(built.stack.functions.get(id)!.function))].sort();
    expect(holders).toEqual(expected);
    expect(Object.keys(fns).length).toBeGreaterThan(holders.length + 20);
  });

  it('gives only the functions of infra/memory.ts FUNCTION_NODE_OPTIONS their V8 settings (the export and the results stream: a small semi-space)', () => {
    expect(Object.keys(FUNCTION_NODE_OPTIONS)).toEqual(['CampaignsExport', 'CampaignsResultsStream']);
    const fns = template.findResources('AWS::Lambda::Function');
    const withOptions = Object.values(fns).filter(
      (fn) =>
        (fn.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables?.NODE_OPTIONS !== undefined,
    );
    expect(withOptions).toHaveLength(2);
    for (const id of ['CampaignsExport', 'CampaignsResultsStream']) {
      const fn = built.stack.functions.get(id)!;
      expect(fns[logicalId(fn.function)]?.Properties.Environment.Variables.NODE_OPTIONS).toBe('--max-semi-space-size=2');
    }
  });

  it('builds the table from TABLE_DEFINITION: pk/sk strings, every GSI with its INCLUDE projection, TTL, on demand, PITR', () => {
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_DEFINITION.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ]),
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: TABLE_DEFINITION.timeToLiveAttribute, Enabled: true },
      GlobalSecondaryIndexes: TABLE_DEFINITION.indexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projectedAttributes] },
      })),
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });

  it('lets the dev table be deleted with the stack', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Delete',
      Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })] },
    });
  });

  it('never lets the describe function write the table', () => {
    const actions = actionsOf(withoutLimitCounters(statementsOf(template, built.stack, 'OrgDescribe')));
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    for (const action of WRITE_ACTIONS) expect(actions).not.toContain(action);
    expect(actions.some((a) => a.startsWith('s3:'))).toBe(false);
  });

  it('grants table access on the table and each index by name, never index/*', () => {
    const tableArn = { 'Fn::GetAtt': [logicalId(built.stack.table), 'Arn'] };
    const [statement] = statementsOf(template, built.stack, 'OrgDescribe').filter((s) => [s.Action].flat().includes('dynamodb:Query'));
    expect(statement!.Resource).toEqual([
      tableArn,
      ...TABLE_DEFINITION.indexes.map((i) => ({ 'Fn::Join': ['', [tableArn, `/index/${i.indexName}`]] })),
    ]);
  });

  it('grants each route exactly its declared table and bucket access', () => {
    for (const route of API_ROUTES) {
      const actions = actionsOf(statementsOf(template, built.stack, route.functionId));
      expect(actions.includes('dynamodb:PutItem'), route.functionId).toBe(route.permissions.table === 'readWrite');
      const bucket = route.permissions.bucket;
      expect(actions.includes('s3:GetObject'), route.functionId).toBe(bucket === 'read' || bucket === 'readWrite');
      expect(actions.includes('s3:PutObject'), route.functionId).toBe(bucket === 'write' || bucket === 'readWrite');
      expect(actions.includes('states:StartExecution'), route.functionId).toBe(Boolean(route.permissions.startsWorkflow));
      expect(actions.includes('states:StopExecution'), route.functionId).toBe(Boolean(route.permissions.stopsWorkflow));
      expect(
        actions.filter((a) => a.startsWith('states:') && a !== 'states:StartExecution' && a !== 'states:StopExecution'),
        route.functionId,
      ).toEqual([]);
    }
  });

  it('lets the cancel function stop executions of the enrichment state machine only, and start none (docs/launch.md#canceling)', () => {
    const stops = statementsOf(template, built.stack, 'CampaignsCancel').filter((s) =>
      [s.Action].flat().some((a) => String(a).startsWith('states:')),
    );
    expect(stops.map((s) => s.Action)).toEqual(['states:StopExecution']);
    expect(JSON.stringify(stops[0]!.Resource)).toContain(':execution:');
  });

  it('lets every read-only route update its limit counters and nothing else of the table (dynamodb:LeadingKeys)', () => {
    for (const route of API_ROUTES.filter((r) => r.permissions.table === 'read')) {
      const grants = statementsOf(template, built.stack, route.functionId).filter(isLimitCounterGrant);
      expect(grants, route.functionId).toEqual([
        {
          Sid: 'LimitCounters',
          Effect: 'Allow',
          Action: 'dynamodb:UpdateItem',
          Resource: { 'Fn::GetAtt': [logicalId(built.stack.table), 'Arn'] },
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [LIMIT_COUNTER_KEY_PATTERN] } },
        },
      ]);
    }
    // A counter's partition matches it; no other entity's does.
    expect(LIMIT_COUNTER_KEY_PATTERN).toBe('ORG#*#LIMIT#*');
  });

  it('reserves concurrency for the workflow tasks and the webhook functions, none for the API functions (docs/limits.md)', () => {
    const reserved = (functionId: string) =>
      template.findResources('AWS::Lambda::Function')[logicalId(functionOf(built.stack, functionId).function)]!.Properties
        .ReservedConcurrentExecutions as number | undefined;
    expect(reserved('WorkflowFindContacts')).toBe(16);
    for (const task of Object.values(WORKFLOW_TASKS).filter((t) => t.functionId !== 'WorkflowFindContacts'))
      expect(reserved(task.functionId), task.functionId).toBe(2);
    expect(reserved('WebhooksDeliver')).toBe(5);
    expect(reserved('WebhooksDispatch')).toBe(2);
    for (const route of API_ROUTES) expect(reserved(route.functionId), route.functionId).toBeUndefined();
  });

  it('grants nothing on "*" but the X-Ray actions that support no resource scoping', () => {
    for (const route of API_ROUTES) {
      const wildcard = statementsOf(template, built.stack, route.functionId).filter((s) => [s.Resource].flat().includes('*'));
      expect(actionsOf(wildcard).sort(), route.functionId).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
    template.resourcePropertiesCountIs('AWS::IAM::Role', { ManagedPolicyArns: Match.anyValue() }, 0);
  });

  it('never lets the get, list and describe functions write the table or the bucket, or start executions', () => {
    for (const functionId of ['CampaignsGet', 'CampaignsList', 'OrgDescribe']) {
      const actions = actionsOf(withoutLimitCounters(statementsOf(template, built.stack, functionId)));
      expect(actions, functionId).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      expect(
        actions.filter((a) => WRITE_ACTIONS.includes(a) || a === 'dynamodb:*'),
        functionId,
      ).toEqual([]);
      expect(
        actions.filter((a) => S3_WRITE_ACTION.test(a)),
        functionId,
      ).toEqual([]);
      expect(
        actions.filter((a) => a.startsWith('states:')),
        functionId,
      ).toEqual([]);
    }
  });

  it('lets only create, uploads/create (its presigned PUTs), enrich, export and the workflow’s find-contacts task write the bucket', () => {
    // FinishRecording reads the eligible list and writes the account history to the table (issue #29): it writes no object.
    const writers = [
      'CampaignsCreate',
      'UploadsCreate',
      'CampaignsEnrich',
      'CampaignsExport',
      WORKFLOW_TASKS.findContacts.functionId,
      // The erasure job rewrites result parts without the person (docs/privacy.md).
      'PrivacyErasureWorker',
    ];
    const expected = writers.map((functionId) => logicalId(functionOf(built.stack, functionId).role)).sort();
    expect(rolesAllowing(template, 's3:PutObject')).toEqual(expected);
    expect(rolesAllowing(template, 's3:AbortMultipartUpload')).toEqual(expected);
    // No role uses S3 wildcards. Only storage expiry deletes (lib/enrichment/attempt-objects.ts): enrich (a replaced evaluation),
    // the find-contacts, compensate and expire tasks and the reconciler, and only attempts' and evaluations' objects.
    const s3Actions = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      actionsOf(policy.Properties.PolicyDocument.Statement),
    );
    expect(s3Actions.filter((a) => (a.startsWith('s3:Delete') && a !== 's3:DeleteObject') || a === 's3:*')).toEqual([]);
    const deleters = [
      'CampaignsEnrich',
      'CampaignsCancel',
      'EnrichmentReconcile',
      ...(['findContacts', 'compensate', 'expire'] as const).map((task) => WORKFLOW_TASKS[task].functionId),
    ];
    // The erasure job deletes the export files of the campaigns that held the person, and nothing else (its own test below).
    expect(rolesAllowing(template, 's3:DeleteObject')).toEqual(
      [...deleters, 'PrivacyErasureWorker'].map((functionId) => logicalId(functionOf(built.stack, functionId).role)).sort(),
    );
    const bucketArn = { 'Fn::GetAtt': [logicalId(built.stack.bucket), 'Arn'] };
    for (const functionId of deleters) {
      const deletes = statementsOf(template, built.stack, functionId).filter((s) => [s.Action].flat().includes('s3:DeleteObject'));
      expect(
        deletes.map((s) => [s.Action, s.Resource]),
        functionId,
      ).toEqual([['s3:DeleteObject', EXPIRING_KEY_PATTERNS.map((pattern) => ({ 'Fn::Join': ['', [bucketArn, `/${pattern}`]] }))]]);
    }
    // The data bucket's own policy grants nobody anything: it only refuses plain HTTP and old TLS.
    const [bucketPolicy] = Object.values(
      template.findResources('AWS::S3::BucketPolicy', { Properties: { Bucket: { Ref: logicalId(built.stack.bucket) } } }),
    );
    expect((bucketPolicy!.Properties.PolicyDocument.Statement as Statement[]).filter((s) => s.Effect !== 'Deny')).toEqual([]);
  });

  it('lets only create (uploaded files), enrich, export, results (page and stream), quote, accounts, the find-contacts and finish-recording tasks read the bucket', () => {
    const readers = [
      'CampaignsCreate',
      'CampaignsEnrich',
      'CampaignsExport',
      'CampaignsQuote',
      'CampaignsAccounts',
      'CampaignsResults',
      'CampaignsResultsStream',
      WORKFLOW_TASKS.findContacts.functionId,
      WORKFLOW_TASKS.finishRecording.functionId,
      'PrivacyErasureWorker',
    ];
    expect(rolesAllowing(template, 's3:GetObject')).toEqual(
      readers.map((functionId) => logicalId(functionOf(built.stack, functionId).role)).sort(),
    );
  });

  // Accounts reads result parts too: with a suppression in force it counts contactsFound from them (docs/privacy.md).
  it('lets quote and accounts only read: the table, and the objects under their key patterns', () => {
    const bucketArn = { 'Fn::GetAtt': [logicalId(built.stack.bucket), 'Arn'] };
    for (const [functionId, patterns] of [
      ['CampaignsQuote', ['campaigns/*']],
      ['CampaignsAccounts', ['campaigns/*/attempts/*', 'campaigns/*/evaluations/*']],
    ] as const) {
      const statements = withoutLimitCounters(statementsOf(template, built.stack, functionId));
      const actions = actionsOf(statements);
      expect(
        actions.filter((a) => WRITE_ACTIONS.includes(a) || a === 'dynamodb:*' || S3_WRITE_ACTION.test(a) || a.startsWith('states:')),
        functionId,
      ).toEqual([]);
      const [objects, ...others] = statements.filter((s) => [s.Action].flat().includes('s3:GetObject'));
      expect(others, functionId).toEqual([]);
      const resources = patterns.map((pattern) => ({ 'Fn::Join': ['', [bucketArn, `/${pattern}`]] }));
      expect(objects!.Resource, functionId).toEqual(resources.length === 1 ? resources[0] : resources);
    }
  });

  it('scopes the upload flow to its prefixes: uploads/create writes only uploads/*, create reads and writes campaigns/* and uploads/*', () => {
    const bucketArn = { 'Fn::GetAtt': [logicalId(built.stack.bucket), 'Arn'] };
    const objects = (pattern: string) => ({ 'Fn::Join': ['', [bucketArn, `/${pattern}`]] });
    const uploadStatements = statementsOf(template, built.stack, 'UploadsCreate').filter((s) =>
      actionsOf([s]).some((a) => a.startsWith('s3:')),
    );
    expect(uploadStatements.map((s) => [actionsOf([s]).sort(), s.Resource])).toEqual([
      [['s3:AbortMultipartUpload', 's3:PutObject'], objects('uploads/*')],
    ]);
    const createObjects = statementsOf(template, built.stack, 'CampaignsCreate').filter((s) => actionsOf([s]).includes('s3:GetObject'));
    expect(createObjects.map((s) => s.Resource)).toEqual([[objects('campaigns/*'), objects('uploads/*')]]);
  });

  describe('enrichment state machine', () => {
    let asl: Asl;
    beforeAll(() => {
      const stateMachine = template.findResources('AWS::StepFunctions::StateMachine')[logicalId(built.stack.workflow.stateMachine)];
      asl = JSON.parse(renderTokens(stateMachine!.Properties.DefinitionString)) as Asl;
    });
    const functionArn = (functionId: string) => `<${logicalId(functionOf(built.stack, functionId).function)}.Arn>`;

    it('catches every error of FindContacts and CompleteEnrichment into CompensateAttempt', () => {
      for (const state of ['FindContacts', 'CompleteEnrichment']) {
        expect(asl.States[state]!.Catch, state).toEqual([
          { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'CompensateAttempt' },
        ]);
      }
    });

    it('compensates with the compensate function, then fails the execution', () => {
      const compensate = asl.States.CompensateAttempt!;
      expect(compensate).toMatchObject({
        Type: 'Task',
        Resource: functionArn(WORKFLOW_TASKS.compensate.functionId),
        Next: 'EnrichmentFailed',
      });
      expect(compensate.Catch).toBeUndefined();
      expect(asl.States.EnrichmentFailed).toMatchObject({ Type: 'Fail', Error: 'EnrichmentFailed' });
    });

    it('has no catch leading anywhere but CompensateAttempt, and runs each task on its own function', () => {
      const states = (machine: Asl): [string, AslState][] =>
        Object.entries(machine.States).flatMap(([name, state]) => [
          [name, state] as [string, AslState],
          ...(state.ItemProcessor ? states(state.ItemProcessor) : []),
        ]);
      const all = states(asl);
      expect(all.flatMap(([, state]) => state.Catch ?? []).map((c) => c.Next)).toEqual(['CompensateAttempt', 'CompensateAttempt']);
      for (const task of Object.values(WORKFLOW_TASKS)) {
        expect(Object.fromEntries(all)[task.state]?.Resource, task.state).toBe(functionArn(task.functionId));
      }
    });
  });

  describe('data bucket', () => {
    const bucketProps = () => template.findResources('AWS::S3::Bucket')[logicalId(built.stack.bucket)]!.Properties;

    it('blocks public access, encrypts with S3-managed keys and logs access', () => {
      expect(bucketProps()).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        LoggingConfiguration: { DestinationBucketName: { Ref: expect.stringMatching(/^AccessLogs/) } },
      });
    });

    it('deletes exports/ and uploads/ objects after 1 day, recency markers after the longest window, and expires nothing else', () => {
      const rules = bucketProps().LifecycleConfiguration.Rules as Record<string, unknown>[];
      const expiring = rules.filter((rule) => 'ExpirationInDays' in rule || 'ExpirationDate' in rule);
      expect(OBJECT_PREFIXES.exports).toBe('exports/');
      expect(OBJECT_PREFIXES.uploads).toBe('uploads/');
      expect(expiring).toEqual([
        { Id: 'ExpireExports', Prefix: 'exports/', ExpirationInDays: 1, Status: 'Enabled' },
        { Id: 'ExpireUploads', Prefix: 'uploads/', ExpirationInDays: 1, Status: 'Enabled' },
        { Id: 'ExpireRecencyMarkers', Prefix: 'recency/', ExpirationInDays: 3651, Status: 'Enabled' },
      ]);
    });

    it('denies every request not made over TLS', () => {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: logicalId(built.stack.bucket) },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    });
  });

  it('throttles the $default stage, records per-route metrics and writes JSON access logs', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400, DetailedMetricsEnabled: true },
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiAccessLogs'), 'Arn'] },
        Format: Match.stringLikeRegexp('"requestId":"\\$context\\.requestId"'),
      },
    });
  });

  it('outputs the API URL, table, bucket, state machine, dashboard and alarm topic', () => {
    const { monitoring: operations, workflow } = built.stack;
    template.hasOutput('ApiUrl', Match.anyValue());
    template.hasOutput('TableName', { Value: { Ref: logicalId(built.stack.table) } });
    template.hasOutput('BucketName', { Value: { Ref: logicalId(built.stack.bucket) } });
    template.hasOutput('StateMachineArn', { Value: { Ref: logicalId(workflow.stateMachine) } });
    template.hasOutput('DashboardName', { Value: { Ref: logicalId(operations.dashboard) } });
    template.hasOutput('AlarmTopicArn', { Value: { Ref: logicalId(operations.topic) } });
  });

  describe('operations', () => {
    type AlarmMetric = {
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: {
        Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
        Stat: string;
        Period: number;
      };
    };
    type AlarmProps = {
      AlarmName: string;
      AlarmActions: unknown[];
      OKActions: unknown[];
      Metrics?: AlarmMetric[];
      MetricName?: string;
      Threshold: number;
      ComparisonOperator: string;
      TreatMissingData: string;
    };
    let alarms: AlarmProps[];
    let topic: { Ref: string };
    beforeAll(() => {
      alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties as AlarmProps);
      topic = { Ref: logicalId(built.stack.monitoring.topic) };
    });
    const alarmNamed = (suffix: string) => {
      const alarm = alarms.find((a) => a.AlarmName === `CampaignEnrichment-dev-${suffix}`);
      expect(alarm, suffix).toBeDefined();
      return alarm!;
    };
    const readMetrics = (alarm: AlarmProps) => (alarm.Metrics ?? []).filter((m) => m.MetricStat).map((m) => m.MetricStat!);
    const dimension = (stat: NonNullable<AlarmMetric['MetricStat']>, name: string) =>
      stat.Metric.Dimensions.find((d) => d.Name === name)?.Value;

    it('reconciles every balance with its ledger hourly (EventBridge → CreditsReconcile, table read only) and alarms on any LedgerDrift', () => {
      const reconcile = functionOf(built.stack, 'CreditsReconcile');
      const rules = Object.values(template.findResources('AWS::Events::Rule'));
      const schedule = rules.find((rule) => rule.Properties.ScheduleExpression === 'rate(1 hour)');
      expect(schedule?.Properties.Targets).toEqual([
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [logicalId(reconcile.function), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2 },
        }),
      ]);
      const actions = actionsOf(statementsOf(template, built.stack, 'CreditsReconcile'));
      expect(actions.filter((action) => action.startsWith('dynamodb:'))).not.toContainEqual(
        expect.stringMatching(/Put|Update|Delete|Write/),
      );
      expect(actions.some((action) => action.startsWith('s3:') || action.startsWith('states:'))).toBe(false);
      const drift = alarmNamed('LedgerDrift');
      expect(drift).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      expect(readMetrics(drift)).toEqual([
        {
          Metric: {
            Namespace: 'CampaignEnrichment',
            MetricName: 'LedgerDrift',
            Dimensions: [{ Name: 'service', Value: 'campaign-enrichment-api' }],
          },
          Stat: 'Maximum',
          Period: 3600,
        },
      ]);
    });

    it('runs the enrichment reconciler every 5 minutes (EventBridge Scheduler) and on every ABORTED, FAILED or TIMED_OUT execution, with least privilege, and alarms on CapacityDrift', () => {
      const reconciler = functionOf(built.stack, 'EnrichmentReconcile');
      const fnArn = { 'Fn::GetAtt': [logicalId(reconciler.function), 'Arn'] };
      const schedules = Object.values(template.findResources('AWS::Scheduler::Schedule'));
      expect(schedules.map((schedule) => [schedule.Properties.ScheduleExpression, schedule.Properties.Target.Arn])).toEqual([
        ['rate(5 minutes)', fnArn],
      ]);
      const rule = Object.values(template.findResources('AWS::Events::Rule')).find(
        (r) => r.Properties.EventPattern?.source?.[0] === 'aws.states',
      );
      expect(rule?.Properties.EventPattern).toEqual({
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [{ Ref: logicalId(built.stack.workflow.stateMachine) }], status: ['ABORTED', 'FAILED', 'TIMED_OUT'] },
      });
      expect(rule?.Properties.Targets).toEqual([expect.objectContaining({ Arn: fnArn })]);
      const statements = statementsOf(template, built.stack, 'EnrichmentReconcile');
      const actions = actionsOf(statements);
      expect(actions).toEqual(expect.arrayContaining(['states:StartExecution', 'states:DescribeExecution', 'states:StopExecution']));
      // Its only S3 access: deleting a lapsed campaign's attempt and evaluation objects (storage expiry's backstop).
      expect(actions.filter((action) => action.startsWith('s3:')).sort()).toEqual(['s3:DeleteObject', 's3:ListBucket']);
      const executions = statements.find((statement) => [statement.Action].flat().includes('states:StopExecution'));
      expect(JSON.stringify(executions?.Resource)).toContain(':execution:');
      expect(readMetrics(alarmNamed('CapacityDrift'))).toEqual([
        {
          Metric: {
            Namespace: 'CampaignEnrichment',
            MetricName: 'CapacityDrift',
            Dimensions: [{ Name: 'service', Value: 'campaign-enrichment-api' }],
          },
          Stat: 'Maximum',
          Period: 300,
        },
      ]);
    });

    it('alarms when one organization gets many rate_limited answers: the top organization of the RateLimited metric by organizationId (docs/limits.md)', () => {
      const alarm = alarmNamed('RateLimitedOrganization');
      expect(alarm).toMatchObject({
        Threshold: RATE_LIMITED_ALARM_THRESHOLD,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
      });
      const [query] = (alarm.Metrics ?? []) as { Expression?: string; Period?: number }[];
      expect(query?.Expression).toBe(
        'SELECT SUM(RateLimited) FROM SCHEMA("CampaignEnrichment", organizationId) GROUP BY organizationId ORDER BY SUM() DESC LIMIT 1',
      );
      expect(query?.Period).toBe(300);
      // The metric: a filter of every API function's log group on its "Request completed" line of a rate_limited answer.
      const filters = Object.values(template.findResources('AWS::Logs::MetricFilter'));
      expect(filters).toHaveLength(API_ROUTES.length);
      for (const route of API_ROUTES) {
        const logGroup = logicalId(functionOf(built.stack, route.functionId).logGroup);
        const filter = filters.find((f) => JSON.stringify(f.Properties.LogGroupName) === JSON.stringify({ Ref: logGroup }));
        expect(filter?.Properties, route.functionId).toMatchObject({
          FilterPattern: '{ ($.message = "Request completed") && ($.errorCode = "rate_limited") }',
          MetricTransformations: [
            {
              MetricNamespace: 'CampaignEnrichment',
              MetricName: 'RateLimited',
              MetricValue: '1',
              Dimensions: [{ Key: 'organizationId', Value: '$.organizationId' }],
              Unit: 'Count',
            },
          ],
        });
      }
    });

    it('notifies the alarm topic of every alarm, on ALARM and on OK', () => {
      // One throttle alarm per 10 route functions and per 10 workflow tasks: their names follow from infra/routes.ts and infra/workflow.ts.
      const throttleAlarms = [
        ...sumAlarmNames('ApiFunctionThrottles', API_ROUTES.length),
        ...sumAlarmNames('WorkflowFunctionThrottles', Object.keys(WORKFLOW_TASKS).length),
      ];
      expect(alarms.map((a) => a.AlarmName).sort()).toEqual(
        [
          'Api5xxRate',
          ...throttleAlarms,
          'CapacityDrift',
          'EnrichmentFailed',
          'ErasureJobDeadLettered',
          'LedgerDrift',
          'RateLimitedOrganization',
          'SupportFunctionThrottles',
          'TableThrottles',
          'WebhookDeliveryFailed',
        ]
          .map((n) => `CampaignEnrichment-dev-${n}`)
          .sort(),
      );
      for (const alarm of alarms) {
        expect(alarm.AlarmActions, alarm.AlarmName).toEqual([topic]);
        expect(alarm.OKActions, alarm.AlarmName).toEqual([topic]);
        expect(alarm.TreatMissingData, alarm.AlarmName).toBe('notBreaching');
      }
    });

    it('alarms on the API 5xx rate over 5 minutes, guarded by a minimum of requests', () => {
      const alarm = alarmNamed('Api5xxRate');
      const [expression] = alarm.Metrics!.filter((m) => m.Expression);
      expect(expression!.Expression).toBe(`IF(FILL(requests, 0) >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * FILL(errors, 0) / requests, 0)`);
      expect(alarm).toMatchObject({ Threshold: SERVER_ERROR_RATE_THRESHOLD_PERCENT, ComparisonOperator: 'GreaterThanThreshold' });
      const byId = Object.fromEntries(alarm.Metrics!.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat!]));
      const api = { Ref: logicalId(built.stack.api) };
      for (const [id, metricName] of [
        ['requests', 'Count'],
        ['errors', '5xx'],
      ] as const) {
        expect(byId[id], id).toMatchObject({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: metricName }, Stat: 'Sum', Period: 300 });
        expect(dimension(byId[id]!, 'ApiId'), id).toEqual(api);
        expect(dimension(byId[id]!, 'Stage'), id).toBe('$default');
      }
    });

    it('alarms on any failed enrichment execution', () => {
      const [stat, ...others] = readMetrics(alarmNamed('EnrichmentFailed'));
      expect(others).toEqual([]);
      expect(stat).toMatchObject({ Metric: { Namespace: 'AWS/States', MetricName: 'ExecutionsFailed' }, Stat: 'Sum' });
      expect(dimension(stat!, 'StateMachineArn')).toEqual({ Ref: logicalId(built.stack.workflow.stateMachine) });
      expect(alarmNamed('EnrichmentFailed')).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    });

    it('alarms on a throttle of any function, summing every function’s throttles (missing data as 0)', () => {
      const alarmed: unknown[] = [];
      const everyFunction = [
        ...API_ROUTES.map((r) => r.functionId),
        ...Object.values(WORKFLOW_TASKS).map((t) => t.functionId),
        'CreditsReconcile',
        'EnrichmentReconcile',
        'WebhooksDispatch',
        'WebhooksDeliver',
      ];
      // One alarm per 10 functions: the names follow from infra/routes.ts and infra/workflow.ts.
      for (const name of [
        ...sumAlarmNames('ApiFunctionThrottles', API_ROUTES.length),
        ...sumAlarmNames('WorkflowFunctionThrottles', everyFunction.length - API_ROUTES.length),
      ]) {
        const alarm = alarmNamed(name);
        expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        const stats = readMetrics(alarm);
        expect(stats.length, name).toBeLessThanOrEqual(10); // CloudWatch's limit for one alarm
        expect(alarm.Metrics!.find((m) => m.Expression)!.Expression).toBe(stats.map((_, i) => `FILL(m${i + 1}, 0)`).join(' + '));
        for (const stat of stats) expect(stat).toMatchObject({ Metric: { Namespace: 'AWS/Lambda', MetricName: 'Throttles' }, Stat: 'Sum' });
        alarmed.push(...stats.map((stat) => dimension(stat, 'FunctionName')));
      }
      const support = [
        SUPPORT_FUNCTIONS.catchAll.functionId,
        SUPPORT_FUNCTIONS.docs.functionId,
        SUPPORT_FUNCTIONS.jwks.functionId,
        'PrivacyErasureWorker',
      ];
      const supportAlarm = alarmNamed('SupportFunctionThrottles');
      expect(supportAlarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      expect(readMetrics(supportAlarm).map((stat) => dimension(stat, 'FunctionName'))).toEqual(
        support.map((id) => ({ Ref: logicalId(functionOf(built.stack, id).function) })),
      );
      expect(alarmed).toEqual(everyFunction.map((id) => ({ Ref: logicalId(functionOf(built.stack, id).function) })));
      expect(Object.keys(template.findResources('AWS::Lambda::Function'))).toHaveLength(everyFunction.length + support.length + 1); // and the MCP function (not alarmed yet)
    });

    it('alarms on throttled requests of every table operation the functions may call', () => {
      const stats = readMetrics(alarmNamed('TableThrottles'));
      const table = { Ref: logicalId(built.stack.table) };
      for (const stat of stats) {
        expect(stat).toMatchObject({ Metric: { Namespace: 'AWS/DynamoDB', MetricName: 'ThrottledRequests' }, Stat: 'Sum' });
        expect(dimension(stat, 'TableName')).toEqual(table);
      }
      const operations = stats.map((stat) => dimension(stat, 'Operation'));
      expect(operations).toEqual(
        expect.arrayContaining(['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'BatchWriteItem', 'TransactWriteItems']),
      );
    });

    it('encrypts the alarm topic with a rotated key CloudWatch may use, and refuses plain HTTP', () => {
      const key = logicalId(built.stack.monitoring.topic.masterKey!);
      template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [key, 'Arn'] } });
      template.hasResourceProperties('AWS::KMS::Key', {
        EnableKeyRotation: true,
        KeyPolicy: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            }),
          ]),
        },
      });
      template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        Topics: [topic],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({ Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' }),
          ]),
        },
      });
    });

    describe('dashboard', () => {
      type Widget = { type: string; properties: { title?: string; metrics?: unknown[][] } };
      let widgets: Widget[];
      beforeAll(() => {
        const [dashboard, ...others] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
        expect(others).toEqual([]);
        widgets = (JSON.parse(renderTokens(dashboard!.Properties.DashboardBody)) as { widgets: Widget[] }).widgets;
      });
      /** `[namespace, metricName, ...dimension name/value pairs, options]` lines of the graphs titled `title`. */
      const linesOf = (title: string) => {
        const widget = widgets.find((w) => w.properties.title === title);
        expect(widget, title).toBeDefined();
        return widget!.properties.metrics!.map((line) => line.filter((part) => typeof part === 'string') as string[]);
      };
      const dims = (line: string[]) =>
        Object.fromEntries(line.slice(2).flatMap((_, i, rest) => (i % 2 === 0 ? [[rest[i], rest[i + 1]]] : [])));

      it('graphs every business metric from the code’s namespace and service dimension', () => {
        const lines = widgets.flatMap((w) =>
          (w.properties.metrics ?? []).map((line) => line.filter((part) => typeof part === 'string') as string[]),
        );
        for (const name of [
          'CampaignsLaunched',
          'CreditsCharged',
          'CreditsRefunded',
          'AccountsEnriched',
          'EnrichmentsFailed',
          'EnrichmentsCanceled',
          'ExportRows',
        ]) {
          expect(lines, name).toContainEqual(['CampaignEnrichment', name, 'service', 'campaign-enrichment-api']);
        }
      });

      it('graphs requests, 4xx, 5xx and p50/p99 latency of every route', () => {
        const api = `<${logicalId(built.stack.api)}>`;
        for (const [title, metricName] of [
          ['Requests', 'Count'],
          ['4xx', '4xx'],
          ['5xx', '5xx'],
          ['Latency p50 (ms)', 'Latency'],
          ['Latency p99 (ms)', 'Latency'],
        ]) {
          const lines = linesOf(title!);
          expect(
            lines.map((line) => line.slice(0, 2)),
            title,
          ).toEqual(HTTP_API_ROUTES.map(() => ['AWS/ApiGateway', metricName]));
          expect(lines.map(dims), title).toEqual(
            HTTP_API_ROUTES.map((route) => ({ ApiId: api, Stage: '$default', Resource: route.operation.path, Method: 'POST' })),
          );
        }
      });

      it('graphs errors, throttles and duration of every function, executions, and table throttles and conflicts', () => {
        const functionCount = API_ROUTES.length + Object.keys(WORKFLOW_TASKS).length + 8; // + CreditsReconcile, EnrichmentReconcile, WebhooksDispatch, WebhooksDeliver, catch-all, docs, JWKS and the erasure worker
        for (const [title, metricName] of [
          ['Errors (unhandled)', 'Errors'],
          ['Throttles', 'Throttles'],
          ['Duration p99 (ms)', 'Duration'],
        ]) {
          expect(
            linesOf(title!).map((line) => line.slice(0, 3)),
            title,
          ).toEqual(Array.from({ length: functionCount }, () => ['AWS/Lambda', metricName, 'FunctionName']));
        }
        expect(linesOf('Executions').map((line) => line[1])).toEqual([
          'ExecutionsStarted',
          'ExecutionsSucceeded',
          'ExecutionsFailed',
          'ExecutionsAborted',
          'ExecutionsTimedOut',
        ]);
        expect(linesOf('DynamoDB throttled requests (by operation)').every((line) => line[1] === 'ThrottledRequests')).toBe(true);
        expect(linesOf('DynamoDB transaction conflicts')).toEqual([
          ['AWS/DynamoDB', 'TransactionConflict', 'TableName', `<${logicalId(built.stack.table)}>`],
        ]);
      });
    });
  });
});

describe('CampaignEnrichment-prod', () => {
  it('protects the table from deletion and retains it with the stack', () => {
    const { stack, template } = synth('prod');
    expect(stack.stackName).toBe('CampaignEnrichment-prod');
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })] },
    });
    template.allResources('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_LOG_LEVEL: 'INFO' }) },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000, DetailedMetricsEnabled: true },
    });
    template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 100 });
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
    // Nine alarms of their own, and one throttle alarm per 10 route functions and per 10 workflow tasks (infra/routes.ts, infra/workflow.ts).
    const throttleAlarms =
      sumAlarmNames('ApiFunctionThrottles', API_ROUTES.length).length +
      sumAlarmNames('WorkflowFunctionThrottles', Object.keys(WORKFLOW_TASKS).length).length;
    template.resourceCountIs('AWS::CloudWatch::Alarm', 9 + throttleAlarms);
  });
});

describe('stage context', () => {
  it('rejects a stage other than dev or prod', () => {
    expect(() => buildApp({ context: { stage: 'staging' } })).toThrow(/"stage" must be "dev" or "prod"/);
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding', () => {
    const { app } = synth('dev');
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(path.join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; severity: string }[] }[];
    };
    const findings = report.pluginReports.filter((r) => r.pluginName.includes('AwsSolutions')).flatMap((r) => r.violations);
    expect(findings).toEqual([]);
  });

  it('gives every acknowledged finding a written reason, and lists each acknowledged rule in docs/deploy.md', () => {
    const { app } = synth('dev');
    const acknowledged = app.node
      .findAll()
      .flatMap((construct) => construct.node.metadata.filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>));
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const [id, reason] of acknowledged) expect(reason.trim().length, id).toBeGreaterThanOrEqual(40);
    const rules = new Set(acknowledged.map(([id]) => /AwsSolutions-[A-Za-z]+\d+/.exec(id)![0]));
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs/deploy.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Acknowledged findings'), docs.indexOf('\n## ', docs.indexOf('### Acknowledged findings')));
    const documented = new Set(
      section
        .split('\n')
        .filter((line) => line.startsWith('| `AwsSolutions-'))
        .map((line) => /AwsSolutions-[A-Za-z]+\d+/.exec(line)![0]),
    );
    expect([...documented].sort()).toEqual([...rules].sort());
  });

  it('fails synthesis on a finding nobody acknowledged', () => {
    const { app, stack } = buildApp({ context: { ...CDK_JSON.context, 'aws:cdk:bundling-stacks': [] } });
    new s3.Bucket(stack, 'Unacknowledged'); // no TLS-only policy (S10), no access logs (S1)
    expect(() => app.synth()).toThrow(/AwsSolutions-S10/);
  });

  it('passes for a route that reads and writes the bucket', () => {
    const readWrite: ApiRoute = { ...API_ROUTES[0]!, functionId: 'BucketUser', permissions: { table: 'read', bucket: 'readWrite' } };
    const { app, stack, template } = synth('dev', [readWrite]);
    expect(() => app.synth()).not.toThrow();
    const statements = statementsOf(template, stack, 'BucketUser');
    expect(actionsOf(statements)).toEqual(
      expect.arrayContaining(['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListBucket']),
    );
  });
});

describe('workflow seam', () => {
  it('grants states:StartExecution on the enrichment state machine to a route that starts workflows, and its ARN', () => {
    const template = Template.fromStack(
      synth('dev', [{ ...API_ROUTES[0]!, functionId: 'Starter', permissions: { table: 'readWrite', startsWorkflow: true } }]).stack,
    );
    const stateMachines = template.findResources('AWS::StepFunctions::StateMachine');
    // The enrichment workflow and the webhook delivery state machine.
    expect(Object.keys(stateMachines)).toHaveLength(2);
    const stateMachineId = Object.keys(stateMachines).find((id) => id.startsWith('Enrichment'))!;
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: 'states:StartExecution', Resource: { Ref: stateMachineId } })]),
      },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('POST'),
      Environment: { Variables: Match.objectLike({ STATE_MACHINE_ARN: { Ref: stateMachineId } }) },
    });
  });
});

describe('webhook delivery (docs/webhooks.md)', () => {
  let built: ReturnType<typeof synth>;
  let template: Template;
  beforeAll(() => {
    built = synth('dev');
    template = built.template;
  });
  const ref = (construct: IConstruct) => ({ Ref: logicalId(construct) });
  const arn = (construct: IConstruct) => ({ 'Fn::GetAtt': [logicalId(construct), 'Arn'] });

  it('streams new images of the table to the dispatcher, filtered to inserted event items, retried, bisected and dead-lettered', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'));
    expect(table!.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    const [mapping, ...others] = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { EventSourceArn: { 'Fn::GetAtt': Match.arrayWith(['StreamArn']) } },
      }),
    );
    expect(others).toEqual([]);
    expect(mapping!.Properties).toMatchObject({
      FunctionName: ref(built.stack.webhooks.dispatcher.function),
      EventSourceArn: { 'Fn::GetAtt': [logicalId(built.stack.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: arn(built.stack.webhooks.deadLetterQueue) } },
    });
    expect(JSON.parse(mapping!.Properties.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { Keys: { sk: { S: [{ prefix: 'EVENT#' }] } } },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });

  it('runs one Standard execution per message: Deliver, then done or wait the computed backoff and deliver again', () => {
    const stateMachine = template.findResources('AWS::StepFunctions::StateMachine')[logicalId(built.stack.webhooks.delivery.stateMachine)]!;
    expect(stateMachine.Properties.StateMachineType).toBe('STANDARD');
    expect(stateMachine.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL' });
    const asl = JSON.parse(renderTokens(stateMachine.Properties.DefinitionString)) as {
      StartAt: string;
      TimeoutSeconds: number;
      States: Record<string, any>;
    };
    expect(asl.StartAt).toBe('Deliver');
    expect(asl.TimeoutSeconds).toBeGreaterThan(33 * 3600);
    expect(asl.States.Deliver).toMatchObject({
      Type: 'Task',
      Next: 'Finished?',
      Resource: `<${logicalId(built.stack.webhooks.deliver.function)}.Arn>`,
    });
    expect(asl.States['Finished?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.done', BooleanEquals: true, Next: 'Delivered' }],
      Default: 'WaitForRetry',
    });
    expect(asl.States.WaitForRetry).toEqual({ Type: 'Wait', SecondsPath: '$.waitSeconds', Next: 'Deliver' });
    expect(asl.States.Delivered.Type).toBe('Succeed');
  });

  it('lets only the dispatcher start delivery executions; neither webhook function touches the bucket', () => {
    const delivery = ref(built.stack.webhooks.delivery.stateMachine);
    const starters = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[]).some(
        (s) => [s.Action].flat().includes('states:StartExecution') && JSON.stringify(s.Resource) === JSON.stringify(delivery),
      ),
    );
    expect(starters.flatMap((p) => p.Properties.Roles)).toEqual([ref(built.stack.webhooks.dispatcher.role)]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Description: Match.stringLikeRegexp('Webhook dispatcher'),
      Environment: { Variables: Match.objectLike({ WEBHOOK_STATE_MACHINE_ARN: delivery }) },
    });
    for (const functionId of ['WebhooksDispatch', 'WebhooksDeliver']) {
      const actions = actionsOf(statementsOf(template, built.stack, functionId));
      expect(actions, functionId).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
      );
      expect(
        actions.some((a) => a.startsWith('s3:')),
        functionId,
      ).toBe(false);
    }
    expect(actionsOf(statementsOf(template, built.stack, 'WebhooksDeliver')).some((a) => a.startsWith('states:'))).toBe(false);
  });

  it('alarms on failed deliveries: messages given up, failed delivery executions, dead-lettered events; notifying the alarm topic', () => {
    const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => a.Properties.AlarmName === 'CampaignEnrichment-dev-WebhookDeliveryFailed',
    )!;
    expect(alarm.Properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarm.Properties.AlarmActions).toEqual([ref(built.stack.monitoring.topic)]);
    const stats = (
      alarm.Properties.Metrics as {
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] } };
      }[]
    )
      .filter((m) => m.MetricStat)
      .map((m) => [m.MetricStat!.Metric.Namespace, m.MetricStat!.Metric.MetricName, m.MetricStat!.Metric.Dimensions[0]!.Value]);
    expect(stats).toEqual([
      ['CampaignEnrichment', 'WebhookMessagesFailed', 'campaign-enrichment-api'],
      ['AWS/States', 'ExecutionsFailed', ref(built.stack.webhooks.delivery.stateMachine)],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', { 'Fn::GetAtt': [logicalId(built.stack.webhooks.deadLetterQueue), 'QueueName'] }],
    ]);
  });
});

describe('erasure job (docs/privacy.md "The erasure job")', () => {
  let built: ReturnType<typeof synth>;
  let template: Template;
  beforeAll(() => {
    built = synth('dev');
    template = built.template;
  });
  const ref = (construct: IConstruct) => ({ Ref: logicalId(construct) });
  const arn = (construct: IConstruct) => ({ 'Fn::GetAtt': [logicalId(construct), 'Arn'] });
  const roleOf = (fn: ServiceFunction) => logicalId(fn.role);

  it('queues each job for the worker: one message at a time, failures reported per message, redelivered after the worker’s timeout, then dead-lettered', () => {
    const { queue, deadLetterQueue, worker } = built.stack.erasures;
    const queues = template.findResources('AWS::SQS::Queue');
    expect(queues[logicalId(queue)]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: ERASURE_WORKER_TIMEOUT_MINUTES * 60 * 6,
      RedrivePolicy: { deadLetterTargetArn: arn(deadLetterQueue), maxReceiveCount: ERASURE_MAX_RECEIVES },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: ref(worker.function),
      EventSourceArn: arn(queue),
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Timeout: ERASURE_WORKER_TIMEOUT_MINUTES * 60,
      Handler: 'index.handler',
      Environment: { Variables: Match.objectLike({ RECEIPT_KEY_ID: arn(built.stack.erasures.receiptKey) }) },
    });
  });

  it('alarms on the first job in the dead-letter queue, notifying the alarm topic, and graphs the queue on the dashboard (docs/privacy.md "Replaying a dead-lettered job")', () => {
    const { deadLetterQueue } = built.stack.erasures;
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const alarm = alarms.find((a) => a.AlarmName === 'CampaignEnrichment-dev-ErasureJobDeadLettered');
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(deadLetterQueue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: logicalId(built.stack.monitoring.topic) }],
      OKActions: [{ Ref: logicalId(built.stack.monitoring.topic) }],
    });
    expect(alarm!.AlarmDescription).toContain('docs/privacy.md');
    expect(built.stack.monitoring.alarms.erasureJobDeadLettered).toBeDefined();
    // The dashboard's body is a Fn::Join of strings and tokens: the queue's name is among them.
    const dashboard = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);
    expect(dashboard).toContain('Erasure jobs dead-lettered');
    expect(dashboard).toContain(logicalId(deadLetterQueue));
  });

  it('lets only erasures/create send jobs, with the queue URL in its environment', () => {
    const queueArn = arn(built.stack.erasures.queue);
    const senders = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) =>
        (policy.Properties.PolicyDocument.Statement as Statement[]).some(
          (s) => [s.Action].flat().includes('sqs:SendMessage') && JSON.stringify(s.Resource) === JSON.stringify(queueArn),
        ),
      )
      .flatMap((policy) => (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref));
    expect(senders).toEqual([roleOf(functionOf(built.stack, 'PrivacyErasuresCreate'))]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^createErasure'),
      Environment: { Variables: Match.objectLike({ ERASURE_QUEUE_URL: ref(built.stack.erasures.queue) }) },
    });
  });

  it('signs receipts with an ECC_NIST_P256 SIGN_VERIFY key that only the worker may sign with (key policy and IAM)', () => {
    const { receiptKey, worker, jwks } = built.stack.erasures;
    const key = template.findResources('AWS::KMS::Key')[logicalId(receiptKey)]!;
    expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    const keyStatements = key.Properties.KeyPolicy.Statement as (Statement & { Principal: { AWS: unknown } })[];
    const allowing = (action: string) =>
      keyStatements.filter((s) => s.Effect === 'Allow' && [s.Action].flat().some((a) => a === action || a === 'kms:*'));
    // In the key policy: kms:Sign for the worker's role alone; the account (root) administers but cannot sign.
    expect(allowing('kms:Sign').map((s) => s.Principal.AWS)).toEqual([arn(worker.role)]);
    expect(keyStatements.flatMap((s) => [s.Action].flat())).not.toContain('kms:*');
    expect(allowing('kms:GetPublicKey').map((s) => s.Principal.AWS)).toEqual(expect.arrayContaining([arn(worker.role), arn(jwks.role)]));
    // In IAM: only the worker's role allows kms:Sign, on this key only.
    expect(rolesAllowing(template, 'kms:Sign')).toEqual([roleOf(worker)]);
    const signing = statementsOf(template, built.stack, 'PrivacyErasureWorker').find((s) => s.Sid === 'ReceiptSigning')!;
    expect([signing.Action].flat().sort()).toEqual(['kms:GetPublicKey', 'kms:Sign']);
    expect(signing.Resource).toEqual(arn(receiptKey));
  });

  it('serves GET /.well-known/jwks.json from a function that may only read the key’s public part', () => {
    const { jwks, receiptKey } = built.stack.erasures;
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `GET ${SUPPORT_FUNCTIONS.jwks.path}` });
    const statements = statementsOf(template, built.stack, SUPPORT_FUNCTIONS.jwks.functionId);
    // Besides its own log group and X-Ray, as every function.
    const common = (s: Statement) => [s.Action].flat().every((a) => a.startsWith('xray:') || a.startsWith('logs:'));
    expect(statements.filter((s) => !common(s))).toEqual([
      { Sid: 'ReceiptPublicKey', Effect: 'Allow', Action: 'kms:GetPublicKey', Resource: arn(receiptKey) },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('jwks'),
      Environment: { Variables: Match.objectLike({ RECEIPT_PUBLISHED_KEY_IDS: arn(receiptKey), RECEIPT_KEY_ID: Match.absent() }) },
    });
  });

  it('lets the worker rewrite result parts and delete export files, and no other object', () => {
    const statements = statementsOf(template, built.stack, 'PrivacyErasureWorker');
    const bucketArn = arn(built.stack.bucket);
    const objects = (pattern: string) => ({ 'Fn::Join': ['', [bucketArn, `/${pattern}`]] });
    expect(statements.find((s) => s.Sid === 'BucketObjects')).toMatchObject({ Resource: objects(EXPIRING_KEY_PATTERNS[0]) });
    expect(statements.find((s) => s.Sid === 'ExportDeletes')).toMatchObject({
      Action: 's3:DeleteObject',
      Resource: objects(`${OBJECT_PREFIXES.exports}*`),
    });
  });
});

describe('edge protection (docs/deploy.md#edge-protection)', () => {
  const built = synth('prod');
  const edgeTemplate = Template.fromStack(built.edge);
  const acl = Object.values(edgeTemplate.findResources('AWS::WAFv2::WebACL'))[0] as {
    Properties: {
      Scope: string;
      Rules: {
        Name: string;
        Action: {
          Block: {
            CustomResponse: { ResponseCode: number; CustomResponseBodyKey: string; ResponseHeaders: { Name: string; Value: string }[] };
          };
        };
        Statement: {
          RateBasedStatement: {
            Limit: number;
            EvaluationWindowSec: number;
            AggregateKeyType: string;
            ScopeDownStatement?: { NotStatement: { Statement: { RegexMatchStatement: { RegexString: string } } } };
          };
        };
      }[];
      CustomResponseBodies: Record<string, { Content: string }>;
    };
  };

  it('puts a CloudFront-scoped web ACL in us-east-1 with a per-address rule for keyless requests and one for all requests, at the stage settings', () => {
    expect(built.edge.region).toBe('us-east-1');
    expect(acl.Properties.Scope).toBe('CLOUDFRONT');
    const byName = Object.fromEntries(acl.Properties.Rules.map((rule) => [rule.Name, rule])) as Record<
      string,
      (typeof acl.Properties.Rules)[number]
    >;
    expect(Object.keys(byName).sort()).toEqual(['AnonymousPerAddress', 'PerAddress']);
    const edge = STAGES.prod.edge;
    expect(byName.AnonymousPerAddress!.Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: edge.anonymousPerAddress,
      EvaluationWindowSec: edge.windowSeconds,
    });
    expect(byName.PerAddress!.Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: edge.perAddress,
      EvaluationWindowSec: edge.windowSeconds,
    });
    expect(edge.perAddress / edge.windowSeconds).toBeGreaterThan(
      SETTINGS.rateLimitRequests.default / SETTINGS.rateLimitWindowSeconds.default,
    );
  });

  it('counts as keyless exactly the requests without a well-formed API key', () => {
    const rule = acl.Properties.Rules.find((each) => each.Name === 'AnonymousPerAddress')!;
    const pattern = new RegExp(
      rule.Statement.RateBasedStatement.ScopeDownStatement!.NotStatement.Statement.RegexMatchStatement.RegexString,
    );
    expect(pattern.test(`Bearer ${newApiKey()}`)).toBe(true);
    expect(pattern.test(`Bearer ${newTestApiKey()}`)).toBe(true);
    for (const keyless of ['', 'Bearer', 'Bearer cek_short', `Basic ${newApiKey()}`, `Bearer ${newApiKey()}x`])
      expect(pattern.test(keyless), keyless).toBe(false);
  });

  it("blocks with the API's own 429 rate_limited envelope and Retry-After of the window", () => {
    for (const rule of acl.Properties.Rules) {
      const response = rule.Action.Block.CustomResponse;
      expect(response.ResponseCode).toBe(429);
      expect(response.ResponseHeaders).toEqual([{ Name: 'retry-after', Value: String(STAGES.prod.edge.windowSeconds) }]);
      const body = JSON.parse(acl.Properties.CustomResponseBodies[response.CustomResponseBodyKey]!.Content);
      expect(body).toMatchObject({
        data: null,
        error: {
          code: 'rate_limited',
          details: {
            policy: 'requests',
            limit: rule.Statement.RateBasedStatement.Limit,
            retryAfterSeconds: STAGES.prod.edge.windowSeconds,
          },
        },
      });
    }
  });

  it('publishes the API through a CloudFront distribution behind that web ACL, forwarding every header but Host, caching nothing, proving itself with the origin secret', () => {
    const distribution = Object.values(built.template.findResources('AWS::CloudFront::Distribution'))[0] as {
      Properties: { DistributionConfig: Record<string, any> };
    };
    const config = distribution.Properties.DistributionConfig;
    // A cross-stack reference to the edge stack's web ACL (an import in us-east-1).
    expect(JSON.stringify(config.WebACLId)).toMatch(/ApiWebAcl/);
    const [origin] = config.Origins;
    expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    expect(origin.OriginCustomHeaders.map((header: { HeaderName: string }) => header.HeaderName)).toEqual([ORIGIN_VERIFY_HEADER]);
    expect(config.DefaultCacheBehavior.AllowedMethods).toContain('POST');
    expect(config.DefaultCacheBehavior.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad'); // Managed-CachingDisabled
    expect(config.DefaultCacheBehavior.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac'); // Managed-AllViewerExceptHostHeader
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.ApiUrl!.Value)).toContain('DomainName');
  });

  it('gives the origin secret to the API route functions only (they record the caller address), not to workflow tasks', () => {
    const envOf = (functionId: string) => {
      const fn = functionOf(built.stack, functionId).function;
      const resource = built.template.toJSON().Resources[logicalId(fn)];
      return (resource.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
    };
    for (const route of API_ROUTES) expect(envOf(route.functionId), route.functionId).toHaveProperty(ORIGIN_VERIFY_SECRET_ENV);
    for (const task of Object.values(WORKFLOW_TASKS))
      expect(envOf(task.functionId), task.functionId).not.toHaveProperty(ORIGIN_VERIFY_SECRET_ENV);
  });
});
