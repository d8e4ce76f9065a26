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
    optional: true,
  },
  resultsStreamUrl: {
    env: 'RESULTS_STREAM_URL',
    kind: 'text',
    optional: true,
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
    optional: true,
  },
  receiptPublishedKeyIds: {
    env: 'RECEIPT_PUBLISHED_KEY_IDS',
    kind: 'text',
    list: true,
  },
  erasureQueueUrl: {
    env: 'ERASURE_QUEUE_URL',
    kind: 'text',
    optional: true,
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

/** The current value of a declared setting, by its kind (a value out of bounds throws, naming the variable). */
function settingValue(name: SettingName): unknown {
  const declaration: SettingDeclaration = SETTINGS[name];
  if (declaration.kind === 'flag') return flagSetting(declaration);
  if (declaration.kind !== 'text') return numberSetting(declaration);
  if (declaration.list)
    return (process.env[declaration.env] ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id.length > 0);
  return declaration.optional ? process.env[declaration.env] || undefined : requiredText(declaration);
}

/** Values that are not deployment settings. */
const CONSTANTS = { launchLockSeconds: 60 };

/**
 * Settings of the running deployment, read lazily from the environment: each property reads the setting of the
 * same name in {@link SETTINGS} at every access (one generic reader rather than a getter each, so every bundle
 * carries the declarations once and no per-setting code; docs/deploy.md "Prerequisites", bench `bundles`); a value out of bounds
 * throws an Error naming the variable.
 */
export const config: Config = /* @__PURE__ */ new Proxy(CONSTANTS as unknown as Config, {
  get: (constants, name) =>
    Object.hasOwn(constants, name)
      ? constants[name as keyof Config]
      : Object.hasOwn(SETTINGS, name)
        ? settingValue(name as SettingName)
        : undefined,
});
