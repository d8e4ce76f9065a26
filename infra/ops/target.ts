/**
 * Which stack the operator CLI works on (README.md#operator-cli): the running local
 * stack by default (found through `<data folder>/endpoints.json`, written by
 * `npm start`), or a deployed one named by `--table`/`--bucket`
 * (`TABLE_NAME`/`BUCKET_NAME`) with the usual AWS credentials.
 */
import { Option, type Command } from 'commander';
import path from 'node:path';
import { applyLocalEnvironment, DEFAULT_DATA_DIR, readLocalEndpoints } from '../local/environment';

/** The target options every command takes. */
export interface TargetOptions {
  table?: string;
  bucket?: string;
  stateMachine?: string;
  dataDir?: string;
}

/** Help heading of the target options. */
const TARGET_GROUP = 'Target (default: the running local stack):';

/** Adds the target options to a command, under their own help heading. */
export function addTargetOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--table <name>', 'DynamoDB table of a deployed stack (its TableName output)').env('TABLE_NAME').helpGroup(TARGET_GROUP),
    )
    .addOption(
      new Option('--bucket <name>', 'S3 bucket of a deployed stack (its BucketName output)').env('BUCKET_NAME').helpGroup(TARGET_GROUP),
    )
    .addOption(
      new Option('--state-machine <arn>', 'state machine of a deployed stack (campaign:cancel)')
        .env('STATE_MACHINE_ARN')
        .helpGroup(TARGET_GROUP),
    )
    .addOption(
      new Option('--data-dir <dir>', 'data folder of the local stack to use')
        .env('DATA_DIR')
        .default(DEFAULT_DATA_DIR, '.local in the repository')
        .helpGroup(TARGET_GROUP),
    );
}

/**
 * Points this process at the target stack (environment variables the shared
 * code reads). Must run before anything builds an AWS client.
 * @throws Error when no table is given and no local stack is running.
 */
export function applyTarget(options: TargetOptions): void {
  // stdout carries exactly one JSON object: no EMF metric lines from the shared code.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  if (options.table) {
    process.env.TABLE_NAME = options.table;
    if (options.bucket) process.env.BUCKET_NAME = options.bucket;
    if (options.stateMachine) process.env.STATE_MACHINE_ARN = options.stateMachine;
    return;
  }
  const dataDir = path.resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const local = readLocalEndpoints(dataDir);
  if (!local) throw new Error(`No running local stack found in ${dataDir} (start it with \`npm start\`), and no --table given.`);
  applyLocalEnvironment(local);
}

/**
 * The stores of the target stack, loaded once the environment points at it
 * (they build AWS clients when first used). The one place the CLI reaches
 * the application's composition.
 */
export const stores = () => import('../../lib/root');

/** The `--test` option of a command that acts on an organization (docs/test-mode.md). */
export const TEST_OPTION = [
  '--test',
  "act on the organization's test twin instead (created on first use); --org stays the live ID",
] as const;

/**
 * The organization a command acts on: `--org`, or with `--test` its test twin
 * (created on first use; docs/test-mode.md). Whatever the command prints
 * names `--org`, the live ID, as describe does for a test key.
 * @throws NotFoundError when `--org` is unknown (or is itself a twin's ID).
 */
export async function organizationOf(options: { org: string; test?: boolean }): Promise<string> {
  if (!options.test) return options.org;
  const { organizations } = await stores();
  return (await organizations().testTwin(options.org)).id;
}
