/**
 * The one Lambda construct of the stack: every API operation's function is an
 * {@link ServiceFunction}, so runtime, architecture, memory, tracing, logging and
 * bundling are decided here once instead of in copy-pasted `NodejsFunction`
 * blocks.
 */
import path from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_FUNCTION_TIMEOUT_SECONDS } from '../../lib/http/deadline';
import { memoryOf, nodeOptionsOf } from '../memory';

/** The repository root: handler entries are relative to it, and esbuild runs from it. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/** Value of `POWERTOOLS_SERVICE_NAME` on every function (matches `lib/observability.ts`). */
export const SERVICE_NAME = 'campaign-enrichment-api';

/**
 * API Gateway gives up on an integration after 29 s (the project's setting;
 * HTTP APIs allow 30 s); 28 s leaves the function time to answer in the
 * envelope before the client sees a gateway 503, and the use case's own
 * deadline is 3 s earlier still (lib/http/deadline.ts, docs/reliability.md "Deadlines").
 */
const API_TIMEOUT = Duration.seconds(API_FUNCTION_TIMEOUT_SECONDS);

/**
 * Variables every function gets; a caller's `environment` is merged over these.
 * No `NODE_OPTIONS=--enable-source-maps`: Node would read and parse the bundle's
 * source map at every cold start (measured about 12 ms of CPU per import;
 * bench "cold init"), and the bundles ship no map (see {@link BUNDLING}).
 * No `NODE_COMPILE_CACHE` either: a cache made at build time is filed under
 * the build machine's Node version and architecture, which Lambda's arm64
 * runtime never matches (bench "cold init" measures the best case; docs/deploy.md).
 */
export const DEFAULT_ENVIRONMENT: Readonly<Record<string, string>> = {
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_LOG_LEVEL: 'INFO',
};

/** The SDK's default credential chain, which every client imports. */
export const CREDENTIAL_PROVIDER_PACKAGE = '@aws-sdk/credential-provider-node';
/** What the bundles use instead of {@link CREDENTIAL_PROVIDER_PACKAGE}, relative to {@link PROJECT_ROOT}. */
export const ENV_CREDENTIALS_MODULE = 'lib/lambda/env-credentials.ts';
/** The SDK's event-stream codec, which no operation of this service uses. */
export const EVENT_STREAMS_PACKAGE = '@smithy/core/event-streams';
/** JSON Schema validation packages only the MCP SDK's default validator imports (lib/lambda/no-ajv.ts). */
export const AJV_PACKAGES = ['ajv', 'ajv-formats'] as const;
/** What the bundles use instead of {@link AJV_PACKAGES}, relative to {@link PROJECT_ROOT}. */
export const NO_AJV_MODULE = 'lib/lambda/no-ajv.ts';
/** What the bundles use instead of {@link EVENT_STREAMS_PACKAGE}, relative to {@link PROJECT_ROOT}. */
export const NO_EVENT_STREAMS_MODULE = 'lib/lambda/no-event-streams.ts';
/** The DynamoDB client's endpoint discovery, which none of its commands uses. */
export const ENDPOINT_DISCOVERY_PACKAGE = '@aws-sdk/middleware-endpoint-discovery';
/** What the bundles use instead of {@link ENDPOINT_DISCOVERY_PACKAGE}, relative to {@link PROJECT_ROOT}. */
export const NO_ENDPOINT_DISCOVERY_MODULE = 'lib/lambda/no-endpoint-discovery.ts';
/** The multipart and urlencoded form parser under `@middy/http-multipart-body-parser`. */
export const BUSBOY_PACKAGE = '@fastify/busboy';
/** What the bundles use instead of {@link BUSBOY_PACKAGE}: its entry without the urlencoded parser, relative to {@link PROJECT_ROOT}. */
export const BUSBOY_MULTIPART_MODULE = 'lib/lambda/busboy-multipart.cjs';
/** `node:http` loaded with `require`, relative to {@link PROJECT_ROOT} (see the module). */
export const NODE_HTTP_MODULE = 'lib/lambda/node-http.ts';

/**
 * esbuild settings shared by every function (the bench builds its bundles
 * from this object too: bench/lib/bundle.ts). esbuild runs on this machine
 * (a devDependency), never in Docker.
 *
 * The AWS SDK v3 is bundled rather than taken from the Lambda runtime: the
 * runtime's SDK version is whatever AWS last shipped (and `lib-storage` or
 * `s3-request-presigner` are not guaranteed to be there), while bundling runs
 * exactly the versions `package-lock.json` pins and tested locally. Tree
 * shaking keeps the bundle to the clients actually imported, and, with
 * `"sideEffects": false` in package.json, drops whole project modules (and the
 * CommonJS packages they require) that a handler imports but never calls
 * (test/infra/bundle.test.ts runs such bundles).
 */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node24',
  // Prefer the ESM builds of dependencies so tree shaking works on them.
  mainFields: ['module', 'main'],
  // CommonJS dependencies inside an ESM bundle still call `require` (e.g. for
  // Node built-ins); ESM has none, so give the bundle one.
  banner: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  minify: true,
  // No `__name()` wrapper around every function and class (about 22 KB, 6 %
  // of a DynamoDB-only bundle, and as many calls at init): every error class
  // spells its `name` out (lib/errors.ts and the workflow's errors, which
  // Step Functions matches by name), the only names anything reads.
  keepNames: false,
  // No source map in the asset: a map loaded at init costs cold-start CPU, and
  // one shipped unused more than doubles the zipped code Lambda downloads at a
  // cold start (describe: 133 KB of code, 179 KB of map, gzip). Stack traces
  // name minified positions: `npm run bundle:map -- <FunctionId>` rebuilds the
  // bundle of a commit with its map to read them (docs/deploy.md).
  sourceMap: false,
  bundleAwsSDK: true,
  externalModules: [],
  forceDockerBundling: false,
  esbuildArgs: {
    // Lambda hands the role's credentials to the function in the environment
    // (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: "Defined runtime environment variables",
    // https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime):
    // the SDK's default chain (SSO, INI, process, web identity, IMDS and the
    // STS/SSO clients they need) becomes `fromEnv()` in the bundles only
    // (lib/lambda/env-credentials.ts; docs/deploy.md "Credentials of the functions").
    // esbuild resolves the path from PROJECT_ROOT.
    [`--alias:${CREDENTIAL_PROVIDER_PACKAGE}`]: `./${ENV_CREDENTIALS_MODULE}`,
    // No operation of this service streams events (S3's SelectObjectContent is
    // the only one among the clients used): the codec every client carries
    // becomes a stub that throws if it is ever asked to encode or decode
    // (lib/lambda/no-event-streams.ts; about 15 KB per bundle).
    [`--alias:${EVENT_STREAMS_PACKAGE}`]: `./${NO_EVENT_STREAMS_MODULE}`,
    // The MCP SDK's server builds an Ajv validator unless given one; the /mcp function gives its own and never
    // validates a JSON Schema (it elicits nothing): Ajv becomes a stub that throws if constructed (about 130 KB).
    [`--alias:${AJV_PACKAGES[0]}`]: `./${NO_AJV_MODULE}`,
    [`--alias:${AJV_PACKAGES[1]}`]: `./${NO_AJV_MODULE}`,
    // The DynamoDB client builds an endpoint cache no command reads (lib/lambda/no-endpoint-discovery.ts; about 9 KB).
    [`--alias:${ENDPOINT_DISCOVERY_PACKAGE}`]: `./${NO_ENDPOINT_DISCOVERY_MODULE}`,
    // busboy parses only multipart bodies here (urlencoded ones go to @middy/http-urlencode-body-parser), yet its
    // entry requires its urlencoded parser too: the bundles take its entry without it (lib/lambda/busboy-multipart.cjs;
    // about 4 KB per bundle that takes forms).
    [`--alias:${BUSBOY_PACKAGE}`]: `./${BUSBOY_MULTIPART_MODULE}`,
    // An ES import of node:http (@middy/util's STATUS_CODES) makes Node load
    // undici at cold start to build the module's ES facade; the bundles
    // require it instead (lib/lambda/node-http.ts).
    '--alias:node:http': `./${NODE_HTTP_MODULE}`,
    '--alias:http': `./${NODE_HTTP_MODULE}`,
  },
} as const satisfies BundlingOptions;

/** esbuild command hooks that copy `files` into the bundle's output folder (run on this machine, like esbuild). */
function copyAfterBundling(files: readonly string[]): NonNullable<BundlingOptions['commandHooks']> {
  const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir, outputDir) => files.map((file) => `cp ${quote(file)} ${quote(path.join(outputDir, path.basename(file)))}`),
  };
}

/** Options of {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Handler file relative to the project root, e.g. `functions/org-describe.ts`; it exports `handler`. */
  readonly entry: string;
  /** Shown in the Lambda console. */
  readonly description?: string;
  /** Longest run of one invocation. @default 28 seconds (inside API Gateway's 29 s) */
  readonly timeout?: Duration;
  /**
   * Variables merged over the defaults ({@link DEFAULT_ENVIRONMENT}: `POWERTOOLS_SERVICE_NAME`,
   * `POWERTOOLS_LOG_LEVEL`): every default stays unless this names the same key.
   */
  readonly environment?: Readonly<Record<string, string>>;
  /** How long the function's log events are kept. */
  readonly logRetention: logs.RetentionDays;
  /** What happens to the log group when the function is deleted. @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * Files (absolute paths) copied next to the bundled handler, which reads
   * them at run time (e.g. the docs page's renderer). @default none
   */
  readonly assetFiles?: readonly string[];
  /**
   * Concurrency reserved for this function: guaranteed to it (the API's
   * functions cannot take it) and its ceiling (docs/limits.md). @default none (the account's unreserved pool)
   */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * A Node.js 24 Lambda on arm64 (1024 MB, X-Ray active), bundled locally by
 * esbuild as minified ESM (no source maps), writing to its own log group.
 *
 * Why a wrapper rather than a `NodejsFunction` subclass: the function gets its
 * own role whose only built-in permission is writing to its own log group,
 * instead of the account-wide `AWSLambdaBasicExecutionRole` managed policy
 * (which would also allow creating any log group). A role must exist before
 * the function, which a subclass constructor cannot arrange.
 *
 * Grant access to it like to any principal (`ServiceFunction` is `IGrantable`).
 *
 * @example
 * const describe = new ServiceFunction(this, 'OrgDescribe', {
 *   entry: 'functions/org-describe.ts',
 *   environment: { TABLE_NAME: table.tableName },
 *   logRetention: logs.RetentionDays.ONE_WEEK,
 * });
 */
export class ServiceFunction extends Construct implements iam.IGrantable {
  /** The Lambda function. */
  readonly function: NodejsFunction;
  /** Execution role of the function (the principal of every grant). */
  readonly role: iam.Role;
  /** The function's log group. */
  readonly logGroup: logs.LogGroup;
  readonly grantPrincipal: iam.IPrincipal;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${this.node.path}`,
    });
    this.grantPrincipal = this.role;
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: path.join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      description: props.description,
      ...(props.reservedConcurrentExecutions === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: memoryOf(id),
      timeout: props.timeout ?? API_TIMEOUT,
      tracing: lambda.Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      environment: { ...DEFAULT_ENVIRONMENT, ...(nodeOptionsOf(id) ? { NODE_OPTIONS: nodeOptionsOf(id)! } : {}), ...props.environment },
      bundling: props.assetFiles?.length ? { ...BUNDLING, commandHooks: copyAfterBundling(props.assetFiles) } : BUNDLING,
    });

    // Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords on
    // "*" to the role. test/infra/stack.test.ts checks no other action has "*".
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions; they are the only actions granted on "*".',
    });
  }

  /** Adds one environment variable (e.g. the ARN of a resource created after the function). */
  addEnvironment(key: string, value: string): this {
    this.function.addEnvironment(key, value);
    return this;
  }
}
