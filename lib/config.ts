/**
 * Deployment settings, read once from the environment (README.md#set-up).
 *
 * Every Lambda and the local stack read the same variables, so one module owns
 * their names and defaults. Values are read lazily so tests and the local stack
 * can set the environment before the first use.
 */

/** What a setting holds: an integer within bounds, a positive number, a flag, or text. */
export type SettingKind = 'integer' | 'number' | 'flag' | 'text';

/**
 * One deployment setting, declared once: the environment variable, its
 * default, its bounds, its unit and what it means. `config` reads it,
 * `npm run docs:write` writes the README's settings table and every figure
 * of docs/ marked with it (docs/architecture.md "Change a default").
 */
export interface SettingDeclaration {
  /** The environment variable. */
  env: string;
  kind: SettingKind;
  /** The value when the variable is unset or empty; absent: the variable is required (or optional text). */
  default?: number | boolean;
  /** Smallest value accepted (integers; default 0). */
  min?: number;
  /** Largest value accepted (integers). */
  max?: number;
  /** A larger value is lowered to `max` instead of refused. */
  clampToMax?: boolean;
  /** Unit of the value (`seconds`, `credits`, `requests`…), when it has one. */
  unit?: string;
  /** What it means, one sentence for the settings table. */
  meaning: string;
  /** Who sets it: the operator (deployment or `npm start`), or the stack itself (CDK outputs, the local stack). */
  setBy: 'operator' | 'stack';
  /** The page that states the rule it sets. */
  docs?: string;
}

/**
 * Every setting `config` reads, in the order the README's table lists them.
 * Change a default here and run `npm run docs:write`: the README, docs/ and
 * the test environment follow (test/docs-generated.test.ts fails until then).
 */
export const SETTINGS = {
  creditsPerAccount: {
    env: 'CREDITS_PER_ACCOUNT',
    kind: 'integer',
    default: 1,
    unit: 'credits',
    setBy: 'operator',
    docs: 'docs/launch.md',
    meaning: 'Credits charged per eligible account of a launch.',
  },
  resultsAccessPeriodSeconds: {
    env: 'RESULTS_ACCESS_PERIOD_SECONDS',
    kind: 'integer',
    default: 30 * 86_400,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/lifetimes.md',
    meaning: 'How long results stay readable after completion (`resultsExpireAt`).',
  },
  testResultsAccessPeriodSeconds: {
    env: 'TEST_RESULTS_ACCESS_PERIOD_SECONDS',
    kind: 'integer',
    default: 3_600,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning:
      'The same for test-mode campaigns: long enough to export and inspect a test run, short enough to see `campaign.expired` and `results_expired` the same day.',
  },
  exportUrlTtlSeconds: {
    env: 'EXPORT_URL_TTL_SECONDS',
    kind: 'integer',
    default: 900,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/lifetimes.md',
    meaning: 'Lifetime of a presigned export URL (never past `resultsExpireAt`).',
  },
  uploadUrlTtlSeconds: {
    env: 'UPLOAD_URL_TTL_SECONDS',
    kind: 'integer',
    default: 900,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/campaigns.md#large-account-lists-upload-first',
    meaning: 'Lifetime of a presigned upload URL.',
  },
  uploadTtlSeconds: {
    env: 'UPLOAD_TTL_SECONDS',
    kind: 'integer',
    default: 3_600,
    max: 86_400,
    clampToMax: true,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/campaigns.md#large-account-lists-upload-first',
    meaning:
      'How long after `uploads/create` campaign create accepts the upload; a larger value is lowered to 1 day, after which the bucket deletes the file.',
  },
  idempotencyTtlSeconds: {
    env: 'IDEMPOTENCY_TTL_SECONDS',
    kind: 'integer',
    default: 86_400,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/idempotency.md',
    meaning: 'How long an `Idempotency-Key` is remembered from its first use.',
  },
  rateLimitRequests: {
    env: 'RATE_LIMIT_REQUESTS',
    kind: 'integer',
    default: 200,
    min: 1,
    unit: 'requests',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning:
      'Authenticated requests an organization may make per window, all its keys together (the operator overrides it per organization).',
  },
  rateLimitWindowSeconds: {
    env: 'RATE_LIMIT_WINDOW_SECONDS',
    kind: 'integer',
    default: 10,
    min: 1,
    max: 3_600,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Length of the request-rate window.',
  },
  testRateLimitRequests: {
    env: 'TEST_RATE_LIMIT_REQUESTS',
    kind: 'integer',
    default: 100,
    min: 1,
    unit: 'requests',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning:
      "Authenticated requests an organization's test twin may make per window (its own counter, smaller than the live default; the operator overrides it per twin).",
  },
  testAccountIdsPerDay: {
    env: 'TEST_ACCOUNT_IDS_PER_DAY',
    kind: 'integer',
    default: 2_000_000,
    min: 1,
    unit: 'account IDs',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning: "Account IDs a test twin's campaign creates may store per UTC day (test storage; live campaigns have no such quota).",
  },
  exportsPerHour: {
    env: 'EXPORTS_PER_HOUR',
    kind: 'integer',
    default: 60,
    min: 1,
    unit: 'exports',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Exports an organization may make per hour (the operator overrides it per organization).',
  },
  uploadsPerHour: {
    env: 'UPLOADS_PER_HOUR',
    kind: 'integer',
    default: 60,
    min: 1,
    unit: 'uploads',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Uploads an organization may create per hour (the operator overrides it per organization).',
  },
  webhooksAllowLocalhost: {
    env: 'WEBHOOKS_ALLOW_LOCALHOST',
    kind: 'flag',
    default: false,
    setBy: 'operator',
    docs: 'docs/webhooks.md',
    meaning: 'Webhook URLs may be `http://127.0.0.1` and `http://localhost` (`true` or `1`; on under `npm start`, off in AWS).',
  },
  webhookRetryBaseSeconds: {
    env: 'WEBHOOK_RETRY_BASE_SECONDS',
    kind: 'number',
    default: 30,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/webhooks.md',
    meaning: 'First wait of the webhook retry schedule, doubling per retry (decimals allowed; tests shorten it).',
  },
  reconcileGraceSeconds: {
    env: 'RECONCILE_GRACE_SECONDS',
    kind: 'integer',
    default: 120,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/reliability.md',
    meaning:
      'How long after a launch a missing workflow execution counts as lost: longer than a launching Lambda can take to call StartExecution after its transaction.',
  },
  localReconcileEverySeconds: {
    env: 'RECONCILE_EVERY_SECONDS',
    kind: 'integer',
    default: 30,
    min: 1,
    max: 86_400,
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/reliability.md',
    meaning:
      "How often `npm start` runs the enrichment reconciler after its pass at start (Node's timers wrap past about 24.8 days; AWS runs it every 5 minutes and on every abnormal end).",
  },
  tableName: { env: 'TABLE_NAME', kind: 'text', setBy: 'stack', docs: 'docs/data-model.md', meaning: 'Name of the single DynamoDB table.' },
  bucketName: {
    env: 'BUCKET_NAME',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/data-model.md',
    meaning: 'Bucket holding account lists, enrichment results and export files.',
  },
  stateMachineArn: {
    env: 'STATE_MACHINE_ARN',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/deploy.md',
    meaning: 'ARN of the enrichment state machine.',
  },
  webhookStateMachineArn: {
    env: 'WEBHOOK_STATE_MACHINE_ARN',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/webhooks.md',
    meaning: 'ARN of the webhook delivery state machine; unset on the local stack, whose poller drives delivery.',
  },
  cursorSecret: {
    env: 'CURSOR_SECRET',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/pagination.md',
    meaning: 'Secret that signs list cursors.',
  },
  privacySigningKeyFile: {
    env: 'PRIVACY_SIGNING_KEY_FILE',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'File of the local erasure-receipt signing key (an ES256 private JWK, made on first use); the local stack puts it in its data folder.',
  },
  receiptKeyId: {
    env: 'RECEIPT_KEY_ID',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'The KMS key (ARN) that signs erasure receipts; set only on the erasure worker. Unset on the local stack, which signs with PRIVACY_SIGNING_KEY_FILE.',
  },
  receiptPublishedKeyIds: {
    env: 'RECEIPT_PUBLISHED_KEY_IDS',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'Comma-separated KMS keys (ARNs) whose public parts GET /.well-known/jwks.json serves: the signing key and retired ones. Unset on the local stack.',
  },
  erasureQueueUrl: {
    env: 'ERASURE_QUEUE_URL',
    kind: 'text',
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning: 'The SQS queue erasures/create sends each new erasure job to; unset on the local stack, which runs jobs in its own process.',
  },
} as const satisfies Record<string, SettingDeclaration>;

/** The name of a declared setting. */
export type SettingName = keyof typeof SETTINGS;

/**
 * The value of an integer or number setting: its default when unset or empty.
 * @throws Error naming the variable when it is not a number within the declared bounds.
 */
function numberSetting(declaration: SettingDeclaration): number {
  const { env, min = 0, max = Number.MAX_SAFE_INTEGER } = declaration;
  const raw = process.env[env];
  if (raw === undefined || raw === '') return declaration.default as number;
  const value = Number(raw);
  if (declaration.kind === 'number') {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`Environment variable ${env} must be a positive number, got "${raw}"`);
    return value;
  }
  if (declaration.clampToMax && Number.isSafeInteger(value) && value > max) return max;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range =
      max !== Number.MAX_SAFE_INTEGER
        ? `an integer from ${min} to ${max}`
        : min === 0
          ? 'a non-negative integer'
          : `an integer of at least ${min}`;
    throw new Error(`Environment variable ${env} must be ${range}, got "${raw}"`);
  }
  return value;
}

/** A flag setting: `true` or `1` (any letter case) is on; unset is its default. */
function flagSetting(declaration: SettingDeclaration): boolean {
  const raw = process.env[declaration.env];
  if (raw === undefined || raw === '') return declaration.default === true;
  return ['true', '1'].includes(raw.toLowerCase());
}

/** A text setting the deployment must set. @throws Error naming the variable when unset or empty. */
function requiredText(declaration: SettingDeclaration): string {
  const value = process.env[declaration.env];
  if (!value) throw new Error(`Environment variable ${declaration.env} is not set`);
  return value;
}

/**
 * Settings of the running deployment, read lazily from the environment. Each
 * getter reads the setting of the same name in {@link SETTINGS}, which holds
 * its variable, default, bounds, unit and meaning; a value out of bounds
 * throws an Error naming the variable.
 */
export const config = {
  /** {@link SETTINGS}.tableName. */
  get tableName(): string {
    return requiredText(SETTINGS.tableName);
  },
  /** {@link SETTINGS}.bucketName. */
  get bucketName(): string {
    return requiredText(SETTINGS.bucketName);
  },
  /** {@link SETTINGS}.stateMachineArn. */
  get stateMachineArn(): string {
    return requiredText(SETTINGS.stateMachineArn);
  },
  /** {@link SETTINGS}.creditsPerAccount. */
  get creditsPerAccount(): number {
    return numberSetting(SETTINGS.creditsPerAccount);
  },
  /** {@link SETTINGS}.resultsAccessPeriodSeconds. */
  get resultsAccessPeriodSeconds(): number {
    return numberSetting(SETTINGS.resultsAccessPeriodSeconds);
  },
  /** {@link SETTINGS}.testResultsAccessPeriodSeconds. */
  get testResultsAccessPeriodSeconds(): number {
    return numberSetting(SETTINGS.testResultsAccessPeriodSeconds);
  },
  /** {@link SETTINGS}.exportUrlTtlSeconds. */
  get exportUrlTtlSeconds(): number {
    return numberSetting(SETTINGS.exportUrlTtlSeconds);
  },
  /** {@link SETTINGS}.uploadUrlTtlSeconds. */
  get uploadUrlTtlSeconds(): number {
    return numberSetting(SETTINGS.uploadUrlTtlSeconds);
  },
  /** {@link SETTINGS}.uploadTtlSeconds. */
  get uploadTtlSeconds(): number {
    return numberSetting(SETTINGS.uploadTtlSeconds);
  },
  /** {@link SETTINGS}.idempotencyTtlSeconds. */
  get idempotencyTtlSeconds(): number {
    return numberSetting(SETTINGS.idempotencyTtlSeconds);
  },
  /** {@link SETTINGS}.rateLimitRequests. */
  get rateLimitRequests(): number {
    return numberSetting(SETTINGS.rateLimitRequests);
  },
  /** {@link SETTINGS}.rateLimitWindowSeconds. */
  get rateLimitWindowSeconds(): number {
    return numberSetting(SETTINGS.rateLimitWindowSeconds);
  },
  /** {@link SETTINGS}.testRateLimitRequests. */
  get testRateLimitRequests(): number {
    return numberSetting(SETTINGS.testRateLimitRequests);
  },
  /** {@link SETTINGS}.testAccountIdsPerDay. */
  get testAccountIdsPerDay(): number {
    return numberSetting(SETTINGS.testAccountIdsPerDay);
  },
  /** {@link SETTINGS}.exportsPerHour. */
  get exportsPerHour(): number {
    return numberSetting(SETTINGS.exportsPerHour);
  },
  /** {@link SETTINGS}.uploadsPerHour. */
  get uploadsPerHour(): number {
    return numberSetting(SETTINGS.uploadsPerHour);
  },
  /** {@link SETTINGS}.cursorSecret. */
  get cursorSecret(): string {
    return requiredText(SETTINGS.cursorSecret);
  },
  /** {@link SETTINGS}.webhooksAllowLocalhost. */
  get webhooksAllowLocalhost(): boolean {
    return flagSetting(SETTINGS.webhooksAllowLocalhost);
  },
  /** {@link SETTINGS}.webhookRetryBaseSeconds. */
  get webhookRetryBaseSeconds(): number {
    return numberSetting(SETTINGS.webhookRetryBaseSeconds);
  },
  /** {@link SETTINGS}.webhookStateMachineArn: unset on the local stack. */
  get webhookStateMachineArn(): string | undefined {
    return process.env[SETTINGS.webhookStateMachineArn.env] || undefined;
  },
  /** Seconds after which a launch lock whose holder died expires (docs/errors.md). */
  launchLockSeconds: 60,
  /** {@link SETTINGS}.reconcileGraceSeconds. */
  get reconcileGraceSeconds(): number {
    return numberSetting(SETTINGS.reconcileGraceSeconds);
  },
  /** {@link SETTINGS}.localReconcileEverySeconds. */
  get localReconcileEverySeconds(): number {
    return numberSetting(SETTINGS.localReconcileEverySeconds);
  },
  /** {@link SETTINGS}.privacySigningKeyFile. */
  get privacySigningKeyFile(): string {
    return requiredText(SETTINGS.privacySigningKeyFile);
  },
  /** {@link SETTINGS}.receiptKeyId: unset on the local stack and on every function but the erasure worker. */
  get receiptKeyId(): string | undefined {
    return process.env[SETTINGS.receiptKeyId.env] || undefined;
  },
  /** {@link SETTINGS}.receiptPublishedKeyIds: empty on the local stack. */
  get receiptPublishedKeyIds(): string[] {
    return (process.env[SETTINGS.receiptPublishedKeyIds.env] ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id.length > 0);
  },
  /** {@link SETTINGS}.erasureQueueUrl: unset on the local stack. */
  get erasureQueueUrl(): string | undefined {
    return process.env[SETTINGS.erasureQueueUrl.env] || undefined;
  },
};
