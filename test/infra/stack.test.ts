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
import { Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_DEFINITION } from '../../lib/db/table';
import { PROJECT_ROOT } from '../../infra/constructs/api-function';
import { API_ROUTES, type ApiRoute } from '../../infra/routes';
import { buildApp, EXPORTS_PREFIX, type CampaignEnrichmentStack } from '../../infra/stack';

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

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

/** Every statement of the policies attached to a function's role. */
function statementsOf(template: Template, stack: CampaignEnrichmentStack, functionId: string): Statement[] {
  const role = stack.functions.get(functionId)!.role;
  const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: Match.arrayWith([{ Ref: logicalId(role) }]) } });
  return Object.values(policies).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}
const actionsOf = (statements: Statement[]): string[] => statements.flatMap((s) => [s.Action].flat());

const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:TransactWriteItems', 'dynamodb:BatchWriteItem'];

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
    expect(Object.keys(routes)).toHaveLength(API_ROUTES.length);
    for (const route of API_ROUTES) {
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

  it('builds each function from its route’s entry under its functionId', () => {
    for (const route of API_ROUTES) {
      const fn = built.stack.node.findChild(route.functionId);
      expect(fn).toBe(built.stack.functions.get(route.functionId));
      expect(fn.node.path).toBe(`CampaignEnrichment-dev/${route.functionId}`);
    }
  });

  it('runs every route function on nodejs24.x, arm64, 1024 MB, 29 s, X-Ray active, logging to its own log group', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const logGroups = template.findResources('AWS::Logs::LogGroup');
    for (const route of API_ROUTES) {
      const fn = built.stack.functions.get(route.functionId)!;
      expect(functions[logicalId(fn.function)]!.Properties, route.functionId).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: 1024,
        Timeout: 29,
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: logicalId(fn.logGroup) } },
      });
      expect(logGroups[logicalId(fn.logGroup)]!.Properties.RetentionInDays, route.functionId).toBe(7);
    }
    template.allResourcesProperties('AWS::Lambda::Function', { Runtime: 'nodejs24.x', Architectures: ['arm64'] });
  });

  it('merges the stack’s environment into the construct’s defaults', () => {
    const fn = built.stack.functions.get('OrgDescribe')!;
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Environment: {
        Variables: {
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'campaign-enrichment-api',
          POWERTOOLS_LOG_LEVEL: 'DEBUG',
          TABLE_NAME: { Ref: logicalId(built.stack.table) },
          BUCKET_NAME: { Ref: logicalId(built.stack.bucket) },
          CURSOR_SECRET: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: Match.stringLikeRegexp('^CursorSecret') }, Match.stringLikeRegexp('^:SecretString:')]] },
        },
      },
      Role: { 'Fn::GetAtt': [logicalId(fn.role), 'Arn'] },
    });
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
    const actions = actionsOf(statementsOf(template, built.stack, 'OrgDescribe'));
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    for (const action of WRITE_ACTIONS) expect(actions).not.toContain(action);
    expect(actions.some((a) => a.startsWith('s3:'))).toBe(false);
  });

  it('grants table access on the table and each index by name, never index/*', () => {
    const tableArn = { 'Fn::GetAtt': [logicalId(built.stack.table), 'Arn'] };
    const [statement] = statementsOf(template, built.stack, 'OrgDescribe').filter((s) => [s.Action].flat().includes('dynamodb:Query'));
    expect(statement!.Resource).toEqual([tableArn, ...TABLE_DEFINITION.indexes.map((i) => ({ 'Fn::Join': ['', [tableArn, `/index/${i.indexName}`]] }))]);
  });

  it('grants each route exactly its declared table and bucket access', () => {
    for (const route of API_ROUTES) {
      const actions = actionsOf(statementsOf(template, built.stack, route.functionId));
      expect(actions.includes('dynamodb:PutItem'), route.functionId).toBe(route.permissions.table === 'readWrite');
      const bucket = route.permissions.bucket;
      expect(actions.includes('s3:GetObject'), route.functionId).toBe(bucket === 'read' || bucket === 'readWrite');
      expect(actions.includes('s3:PutObject'), route.functionId).toBe(bucket === 'write' || bucket === 'readWrite');
      expect(actions.some((a) => a.startsWith('states:')), route.functionId).toBe(Boolean(route.permissions.startsWorkflow));
    }
  });

  it('grants nothing on "*" but the X-Ray actions that support no resource scoping', () => {
    for (const route of API_ROUTES) {
      const wildcard = statementsOf(template, built.stack, route.functionId).filter((s) => [s.Resource].flat().includes('*'));
      expect(actionsOf(wildcard).sort(), route.functionId).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
    template.resourcePropertiesCountIs('AWS::IAM::Role', { ManagedPolicyArns: Match.anyValue() }, 0);
  });

  describe('data bucket', () => {
    const bucketProps = () => template.findResources('AWS::S3::Bucket')[logicalId(built.stack.bucket)]!.Properties;

    it('blocks public access, encrypts with S3-managed keys and logs access', () => {
      expect(bucketProps()).toMatchObject({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        LoggingConfiguration: { DestinationBucketName: { Ref: expect.stringMatching(/^AccessLogs/) } },
      });
    });

    it('deletes exports/ objects after 1 day and expires nothing else', () => {
      const rules = bucketProps().LifecycleConfiguration.Rules as Record<string, unknown>[];
      const expiring = rules.filter((rule) => 'ExpirationInDays' in rule || 'ExpirationDate' in rule);
      expect(EXPORTS_PREFIX).toBe('exports/');
      expect(expiring).toEqual([{ Id: 'ExpireExports', Prefix: 'exports/', ExpirationInDays: 1, Status: 'Enabled' }]);
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

  it('throttles the $default stage and writes JSON access logs', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiAccessLogs'), 'Arn'] }, Format: Match.stringLikeRegexp('"requestId":"\\$context\\.requestId"') },
    });
  });

  it('outputs the API URL, table name and bucket name', () => {
    template.hasOutput('ApiUrl', Match.anyValue());
    template.hasOutput('TableName', { Value: { Ref: logicalId(built.stack.table) } });
    template.hasOutput('BucketName', { Value: { Ref: logicalId(built.stack.bucket) } });
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
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ POWERTOOLS_LOG_LEVEL: 'INFO' }) } });
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
    expect(actionsOf(statements)).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListBucket']));
  });
});

describe('workflow seam', () => {
  it('grants states:StartExecution on the enrichment state machine to a route that starts workflows, and its ARN', () => {
    const template = Template.fromStack(synth('dev', [{ ...API_ROUTES[0]!, functionId: 'Starter', permissions: { table: 'readWrite', startsWorkflow: true } }]).stack);
    const stateMachines = template.findResources('AWS::StepFunctions::StateMachine');
    expect(Object.keys(stateMachines)).toHaveLength(1);
    const stateMachineId = Object.keys(stateMachines)[0]!;
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'states:StartExecution', Resource: { Ref: stateMachineId } })]) },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('POST'),
      Environment: { Variables: Match.objectLike({ STATE_MACHINE_ARN: { Ref: stateMachineId } }) },
    });
  });
});
