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
  /** Text only: may be unset (`undefined` then, never an error). */
  optional?: true;
  /** Text only: a comma-separated list, trimmed, empty entries dropped (unset: empty). */
  list?: true;
}

/** The setting `creditsPerAccount` (its unit and meaning: `SETTING_DOCS.creditsPerAccount` of lib/config-docs.ts); read it with {@link setting}. */
export const creditsPerAccountSetting = {
  env: 'CREDITS_PER_ACCOUNT',
  kind: 'integer',
  default: 1,
} as const satisfies SettingDeclaration;
/** The setting `resultsAccessPeriodSeconds` (its unit and meaning: `SETTING_DOCS.resultsAccessPeriodSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const resultsAccessPeriodSecondsSetting = {
  env: 'RESULTS_ACCESS_PERIOD_SECONDS',
  kind: 'integer',
  default: 30 * 86_400,
} as const satisfies SettingDeclaration;
/** The setting `testResultsAccessPeriodSeconds` (its unit and meaning: `SETTING_DOCS.testResultsAccessPeriodSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const testResultsAccessPeriodSecondsSetting = {
  env: 'TEST_RESULTS_ACCESS_PERIOD_SECONDS',
  kind: 'integer',
  default: 3_600,
} as const satisfies SettingDeclaration;
/** The setting `exportUrlTtlSeconds` (its unit and meaning: `SETTING_DOCS.exportUrlTtlSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const exportUrlTtlSecondsSetting = {
  env: 'EXPORT_URL_TTL_SECONDS',
  kind: 'integer',
  default: 900,
} as const satisfies SettingDeclaration;
/** The setting `uploadUrlTtlSeconds` (its unit and meaning: `SETTING_DOCS.uploadUrlTtlSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const uploadUrlTtlSecondsSetting = {
  env: 'UPLOAD_URL_TTL_SECONDS',
  kind: 'integer',
  default: 900,
} as const satisfies SettingDeclaration;
/** The setting `uploadTtlSeconds` (its unit and meaning: `SETTING_DOCS.uploadTtlSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const uploadTtlSecondsSetting = {
  env: 'UPLOAD_TTL_SECONDS',
  kind: 'integer',
  default: 3_600,
  max: 86_400,
  clampToMax: true,
} as const satisfies SettingDeclaration;
/** The setting `idempotencyTtlSeconds` (its unit and meaning: `SETTING_DOCS.idempotencyTtlSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const idempotencyTtlSecondsSetting = {
  env: 'IDEMPOTENCY_TTL_SECONDS',
  kind: 'integer',
  default: 86_400,
} as const satisfies SettingDeclaration;
/** The setting `rateLimitRequests` (its unit and meaning: `SETTING_DOCS.rateLimitRequests` of lib/config-docs.ts); read it with {@link setting}. */
export const rateLimitRequestsSetting = {
  env: 'RATE_LIMIT_REQUESTS',
  kind: 'integer',
  default: 200,
  min: 1,
} as const satisfies SettingDeclaration;
/** The setting `rateLimitWindowSeconds` (its unit and meaning: `SETTING_DOCS.rateLimitWindowSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const rateLimitWindowSecondsSetting = {
  env: 'RATE_LIMIT_WINDOW_SECONDS',
  kind: 'integer',
  default: 10,
  min: 1,
  max: 3_600,
} as const satisfies SettingDeclaration;
/** The setting `testRateLimitRequests` (its unit and meaning: `SETTING_DOCS.testRateLimitRequests` of lib/config-docs.ts); read it with {@link setting}. */
export const testRateLimitRequestsSetting = {
  env: 'TEST_RATE_LIMIT_REQUESTS',
  kind: 'integer',
  default: 100,
  min: 1,
} as const satisfies SettingDeclaration;
/** The setting `testAccountIdsPerDay` (its unit and meaning: `SETTING_DOCS.testAccountIdsPerDay` of lib/config-docs.ts); read it with {@link setting}. */
export const testAccountIdsPerDaySetting = {
  env: 'TEST_ACCOUNT_IDS_PER_DAY',
  kind: 'integer',
  default: 2_000_000,
  min: 1,
} as const satisfies SettingDeclaration;
/** The setting `exportsPerHour` (its unit and meaning: `SETTING_DOCS.exportsPerHour` of lib/config-docs.ts); read it with {@link setting}. */
export const exportsPerHourSetting = {
  env: 'EXPORTS_PER_HOUR',
  kind: 'integer',
  default: 60,
  min: 1,
} as const satisfies SettingDeclaration;
/** The setting `resultsStreamKeepAliveSeconds` (its unit and meaning: `SETTING_DOCS.resultsStreamKeepAliveSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const resultsStreamKeepAliveSecondsSetting = {
  env: 'RESULTS_STREAM_KEEPALIVE_SECONDS',
  kind: 'number',
  default: 15,
} as const satisfies SettingDeclaration;
/** The setting `resultsStreamMaxSeconds` (its unit and meaning: `SETTING_DOCS.resultsStreamMaxSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const resultsStreamMaxSecondsSetting = {
  env: 'RESULTS_STREAM_MAX_SECONDS',
  kind: 'number',
  default: 300,
} as const satisfies SettingDeclaration;
/** The setting `uploadsPerHour` (its unit and meaning: `SETTING_DOCS.uploadsPerHour` of lib/config-docs.ts); read it with {@link setting}. */
export const uploadsPerHourSetting = {
  env: 'UPLOADS_PER_HOUR',
  kind: 'integer',
  default: 60,
  min: 1,
} as const satisfies SettingDeclaration;
/** The setting `webhooksAllowLocalhost` (its unit and meaning: `SETTING_DOCS.webhooksAllowLocalhost` of lib/config-docs.ts); read it with {@link setting}. */
export const webhooksAllowLocalhostSetting = {
  env: 'WEBHOOKS_ALLOW_LOCALHOST',
  kind: 'flag',
  default: false,
} as const satisfies SettingDeclaration;
/** The setting `webhookRetryBaseSeconds` (its unit and meaning: `SETTING_DOCS.webhookRetryBaseSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const webhookRetryBaseSecondsSetting = {
  env: 'WEBHOOK_RETRY_BASE_SECONDS',
  kind: 'number',
  default: 30,
} as const satisfies SettingDeclaration;
/** The setting `reconcileGraceSeconds` (its unit and meaning: `SETTING_DOCS.reconcileGraceSeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const reconcileGraceSecondsSetting = {
  env: 'RECONCILE_GRACE_SECONDS',
  kind: 'integer',
  default: 120,
} as const satisfies SettingDeclaration;
/** The setting `localReconcileEverySeconds` (its unit and meaning: `SETTING_DOCS.localReconcileEverySeconds` of lib/config-docs.ts); read it with {@link setting}. */
export const localReconcileEverySecondsSetting = {
  env: 'RECONCILE_EVERY_SECONDS',
  kind: 'integer',
  default: 30,
  min: 1,
  max: 86_400,
} as const satisfies SettingDeclaration;
/** The setting `tableName` (its unit and meaning: `SETTING_DOCS.tableName` of lib/config-docs.ts); read it with {@link setting}. */
export const tableNameSetting = { env: 'TABLE_NAME', kind: 'text' } as const satisfies SettingDeclaration;
/** The setting `bucketName` (its unit and meaning: `SETTING_DOCS.bucketName` of lib/config-docs.ts); read it with {@link setting}. */
export const bucketNameSetting = {
  env: 'BUCKET_NAME',
  kind: 'text',
} as const satisfies SettingDeclaration;
/** The setting `stateMachineArn` (its unit and meaning: `SETTING_DOCS.stateMachineArn` of lib/config-docs.ts); read it with {@link setting}. */
export const stateMachineArnSetting = {
  env: 'STATE_MACHINE_ARN',
  kind: 'text',
} as const satisfies SettingDeclaration;
/** The setting `webhookStateMachineArn` (its unit and meaning: `SETTING_DOCS.webhookStateMachineArn` of lib/config-docs.ts); read it with {@link setting}. */
export const webhookStateMachineArnSetting = {
  env: 'WEBHOOK_STATE_MACHINE_ARN',
  kind: 'text',
  optional: true,
} as const satisfies SettingDeclaration;
/** The setting `resultsStreamUrl` (its unit and meaning: `SETTING_DOCS.resultsStreamUrl` of lib/config-docs.ts); read it with {@link setting}. */
export const resultsStreamUrlSetting = {
  env: 'RESULTS_STREAM_URL',
  kind: 'text',
  optional: true,
} as const satisfies SettingDeclaration;
/** The setting `cursorSecret` (its unit and meaning: `SETTING_DOCS.cursorSecret` of lib/config-docs.ts); read it with {@link setting}. */
export const cursorSecretSetting = {
  env: 'CURSOR_SECRET',
  kind: 'text',
} as const satisfies SettingDeclaration;
/** The setting `privacySigningKeyFile` (its unit and meaning: `SETTING_DOCS.privacySigningKeyFile` of lib/config-docs.ts); read it with {@link setting}. */
export const privacySigningKeyFileSetting = {
  env: 'PRIVACY_SIGNING_KEY_FILE',
  kind: 'text',
} as const satisfies SettingDeclaration;
/** The setting `receiptKeyId` (its unit and meaning: `SETTING_DOCS.receiptKeyId` of lib/config-docs.ts); read it with {@link setting}. */
export const receiptKeyIdSetting = {
  env: 'RECEIPT_KEY_ID',
  kind: 'text',
  optional: true,
} as const satisfies SettingDeclaration;
/** The setting `receiptPublishedKeyIds` (its unit and meaning: `SETTING_DOCS.receiptPublishedKeyIds` of lib/config-docs.ts); read it with {@link setting}. */
export const receiptPublishedKeyIdsSetting = {
  env: 'RECEIPT_PUBLISHED_KEY_IDS',
  kind: 'text',
  list: true,
} as const satisfies SettingDeclaration;
/** The setting `erasureQueueUrl` (its unit and meaning: `SETTING_DOCS.erasureQueueUrl` of lib/config-docs.ts); read it with {@link setting}. */
export const erasureQueueUrlSetting = {
  env: 'ERASURE_QUEUE_URL',
  kind: 'text',
  optional: true,
} as const satisfies SettingDeclaration;

/**
 * Every setting `config` reads, in the order the README's table lists them
 * (each one's unit and meaning: `SETTING_DOCS` of lib/config-docs.ts).
 * Change a default here and run `npm run openapi:write`: the README, docs/ and
 * the test environment follow (test/docs-generated.test.ts fails until then).
 */
export const SETTINGS = {
  creditsPerAccount: creditsPerAccountSetting,
  resultsAccessPeriodSeconds: resultsAccessPeriodSecondsSetting,
  testResultsAccessPeriodSeconds: testResultsAccessPeriodSecondsSetting,
  exportUrlTtlSeconds: exportUrlTtlSecondsSetting,
  uploadUrlTtlSeconds: uploadUrlTtlSecondsSetting,
  uploadTtlSeconds: uploadTtlSecondsSetting,
  idempotencyTtlSeconds: idempotencyTtlSecondsSetting,
  rateLimitRequests: rateLimitRequestsSetting,
  rateLimitWindowSeconds: rateLimitWindowSecondsSetting,
  testRateLimitRequests: testRateLimitRequestsSetting,
  testAccountIdsPerDay: testAccountIdsPerDaySetting,
  exportsPerHour: exportsPerHourSetting,
  resultsStreamKeepAliveSeconds: resultsStreamKeepAliveSecondsSetting,
  resultsStreamMaxSeconds: resultsStreamMaxSecondsSetting,
  uploadsPerHour: uploadsPerHourSetting,
  webhooksAllowLocalhost: webhooksAllowLocalhostSetting,
  webhookRetryBaseSeconds: webhookRetryBaseSecondsSetting,
  reconcileGraceSeconds: reconcileGraceSecondsSetting,
  localReconcileEverySeconds: localReconcileEverySecondsSetting,
  tableName: tableNameSetting,
  bucketName: bucketNameSetting,
  stateMachineArn: stateMachineArnSetting,
  webhookStateMachineArn: webhookStateMachineArnSetting,
  resultsStreamUrl: resultsStreamUrlSetting,
  cursorSecret: cursorSecretSetting,
  privacySigningKeyFile: privacySigningKeyFileSetting,
  receiptKeyId: receiptKeyIdSetting,
  receiptPublishedKeyIds: receiptPublishedKeyIdsSetting,
  erasureQueueUrl: erasureQueueUrlSetting,
} as const;

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

/** The value type of a declaration: a number, a flag, required text, optional text or a list of text. */
type SettingValue<D> = D extends { kind: 'flag' }
  ? boolean
  : D extends { kind: 'text'; list: true }
    ? string[]
    : D extends { kind: 'text'; optional: true }
      ? string | undefined
      : D extends { kind: 'text' }
        ? string
        : number;

/**
 * Settings of the running deployment (see {@link config}): each property is the setting of the same name in
 * {@link SETTINGS}, typed by its declaration, and `launchLockSeconds`, seconds after which a launch lock whose holder
 * died expires (docs/errors.md), which is not a deployment setting.
 */
export type Config = { readonly [Name in SettingName]: SettingValue<(typeof SETTINGS)[Name]> } & { readonly launchLockSeconds: number };

/**
 * The current value of one declared setting (its declaration: `<name>Setting` above, e.g.
 * `setting(tableNameSetting)`), typed by its kind, read from the environment at every call. Importing the one
 * declaration a caller reads, rather than reading {@link config}, lets a Lambda bundle carry only the settings
 * its function reads (bench `bundles`).
 * @throws Error naming the variable when its value is out of bounds or a required text setting is unset.
 */
export function setting<const D extends SettingDeclaration>(declaration: D): SettingValue<D> {
  if (declaration.kind === 'flag') return flagSetting(declaration) as SettingValue<D>;
  if (declaration.kind !== 'text') return numberSetting(declaration) as SettingValue<D>;
  if (declaration.list)
    return (process.env[declaration.env] ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id.length > 0) as SettingValue<D>;
  return (declaration.optional ? process.env[declaration.env] || undefined : requiredText(declaration)) as SettingValue<D>;
}

/** Seconds after which a launch lock whose holder died expires (docs/errors.md); not a deployment setting. */
export const LAUNCH_LOCK_SECONDS = 60;

/** Values that are not deployment settings. */
const CONSTANTS = { launchLockSeconds: LAUNCH_LOCK_SECONDS };

/**
 * Settings of the running deployment, read lazily from the environment: each property reads the setting of the
 * same name in {@link SETTINGS} at every access (docs/deploy.md "Prerequisites"); a value out of bounds throws an
 * Error naming the variable. It carries every declaration, so code bundled into a Lambda reads {@link setting} of
 * the one declaration it needs instead (bench `bundles`); scripts and tests read this.
 */
export const config: Config = /* @__PURE__ */ new Proxy(CONSTANTS as unknown as Config, {
  get: (constants, name) =>
    Object.hasOwn(constants, name)
      ? constants[name as keyof Config]
      : Object.hasOwn(SETTINGS, name)
        ? setting(SETTINGS[name as SettingName])
        : undefined,
});
