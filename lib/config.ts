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
 * default and its bounds (its unit and what it means: `SETTING_DOCS` of
 * lib/config-docs.ts, which no Lambda bundle carries). `config` reads it,
 * `npm run openapi:write` writes the README's settings table and every figure
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
}

/**
 * Every setting `config` reads, in the order the README's table lists them
 * (each one's unit and meaning: `SETTING_DOCS` of lib/config-docs.ts).
 * Change a default here and run `npm run openapi:write`: the README, docs/ and
 * the test environment follow (test/docs-generated.test.ts fails until then).
 */
export const SETTINGS = {
  creditsPerAccount: {
    env: 'CREDITS_PER_ACCOUNT',
    kind: 'integer',
    default: 1,
  },
  resultsAccessPeriodSeconds: {
    env: 'RESULTS_ACCESS_PERIOD_SECONDS',
    kind: 'integer',
    default: 30 * 86_400,
  },
  testResultsAccessPeriodSeconds: {
    env: 'TEST_RESULTS_ACCESS_PERIOD_SECONDS',
    kind: 'integer',
    default: 3_600,
  },
  exportUrlTtlSeconds: {
    env: 'EXPORT_URL_TTL_SECONDS',
    kind: 'integer',
    default: 900,
  },
  uploadUrlTtlSeconds: {
    env: 'UPLOAD_URL_TTL_SECONDS',
    kind: 'integer',
    default: 900,
  },
  uploadTtlSeconds: {
    env: 'UPLOAD_TTL_SECONDS',
    kind: 'integer',
    default: 3_600,
    max: 86_400,
    clampToMax: true,
  },
  idempotencyTtlSeconds: {
    env: 'IDEMPOTENCY_TTL_SECONDS',
    kind: 'integer',
    default: 86_400,
  },
  rateLimitRequests: {
    env: 'RATE_LIMIT_REQUESTS',
    kind: 'integer',
    default: 200,
    min: 1,
  },
  rateLimitWindowSeconds: {
    env: 'RATE_LIMIT_WINDOW_SECONDS',
    kind: 'integer',
    default: 10,
    min: 1,
    max: 3_600,
  },
  testRateLimitRequests: {
    env: 'TEST_RATE_LIMIT_REQUESTS',
    kind: 'integer',
    default: 100,
    min: 1,
  },
  testAccountIdsPerDay: {
    env: 'TEST_ACCOUNT_IDS_PER_DAY',
    kind: 'integer',
    default: 2_000_000,
    min: 1,
  },
  exportsPerHour: {
    env: 'EXPORTS_PER_HOUR',
    kind: 'integer',
    default: 60,
    min: 1,
  },
  resultsStreamKeepAliveSeconds: {
    env: 'RESULTS_STREAM_KEEPALIVE_SECONDS',
    kind: 'number',
    default: 15,
  },
  resultsStreamMaxSeconds: {
    env: 'RESULTS_STREAM_MAX_SECONDS',
    kind: 'number',
    default: 300,
  },
  uploadsPerHour: {
    env: 'UPLOADS_PER_HOUR',
    kind: 'integer',
    default: 60,
    min: 1,
  },
  webhooksAllowLocalhost: {
    env: 'WEBHOOKS_ALLOW_LOCALHOST',
    kind: 'flag',
    default: false,
  },
  webhookRetryBaseSeconds: {
    env: 'WEBHOOK_RETRY_BASE_SECONDS',
    kind: 'number',
    default: 30,
  },
  reconcileGraceSeconds: {
    env: 'RECONCILE_GRACE_SECONDS',
    kind: 'integer',
    default: 120,
  },
  localReconcileEverySeconds: {
    env: 'RECONCILE_EVERY_SECONDS',
    kind: 'integer',
    default: 30,
    min: 1,
    max: 86_400,
  },
  tableName: { env: 'TABLE_NAME', kind: 'text' },
  bucketName: {
    env: 'BUCKET_NAME',
    kind: 'text',
  },
  stateMachineArn: {
    env: 'STATE_MACHINE_ARN',
    kind: 'text',
  },
  webhookStateMachineArn: {
    env: 'WEBHOOK_STATE_MACHINE_ARN',
    kind: 'text',
  },
  resultsStreamUrl: {
    env: 'RESULTS_STREAM_URL',
    kind: 'text',
  },
  cursorSecret: {
    env: 'CURSOR_SECRET',
    kind: 'text',
  },
  privacySigningKeyFile: {
    env: 'PRIVACY_SIGNING_KEY_FILE',
    kind: 'text',
  },
  receiptKeyId: {
    env: 'RECEIPT_KEY_ID',
    kind: 'text',
  },
  receiptPublishedKeyIds: {
    env: 'RECEIPT_PUBLISHED_KEY_IDS',
    kind: 'text',
  },
  erasureQueueUrl: {
    env: 'ERASURE_QUEUE_URL',
    kind: 'text',
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
 * its variable, default and bounds; a value out of bounds
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
  /** {@link SETTINGS}.resultsStreamKeepAliveSeconds. */
  get resultsStreamKeepAliveSeconds(): number {
    return numberSetting(SETTINGS.resultsStreamKeepAliveSeconds);
  },
  /** {@link SETTINGS}.resultsStreamMaxSeconds. */
  get resultsStreamMaxSeconds(): number {
    return numberSetting(SETTINGS.resultsStreamMaxSeconds);
  },
  /** {@link SETTINGS}.resultsStreamUrl; `undefined` when unset. */
  get resultsStreamUrl(): string | undefined {
    return process.env[SETTINGS.resultsStreamUrl.env] || undefined;
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
