/**
 * Deployment settings, read once from the environment (decisions §9).
 *
 * Every Lambda and the local stack read the same variables, so one module owns
 * their names and defaults. Values are read lazily so tests and the local stack
 * can set the environment before the first use.
 */

/**
 * An integer setting: `fallback` when unset or empty.
 * @param min - the smallest value accepted (default 0).
 * @param max - the largest value accepted (default: the largest safe integer).
 * @throws Error naming the variable when it is not an integer from `min` to `max`.
 */
function intFromEnv(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max !== Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
    throw new Error(`Environment variable ${name} must be ${range}, got "${raw}"`);
  }
  return value;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}

/** Settings of the running deployment. */
export const config = {
  /** Name of the single DynamoDB table (`TABLE_NAME`). */
  get tableName(): string {
    return required('TABLE_NAME');
  },
  /** Bucket holding account lists, enrichment results and export files (`BUCKET_NAME`). */
  get bucketName(): string {
    return required('BUCKET_NAME');
  },
  /** ARN of the enrichment state machine (`STATE_MACHINE_ARN`). */
  get stateMachineArn(): string {
    return required('STATE_MACHINE_ARN');
  },
  /** Credits charged per eligible account (`CREDITS_PER_ACCOUNT`, default 1; decisions §4). */
  get creditsPerAccount(): number {
    return intFromEnv('CREDITS_PER_ACCOUNT', 1);
  },
  /** Result access period in seconds (`RESULTS_ACCESS_PERIOD_SECONDS`, default 30 days; decisions §5). */
  get resultsAccessPeriodSeconds(): number {
    return intFromEnv('RESULTS_ACCESS_PERIOD_SECONDS', 30 * 86_400);
  },
  /**
   * Result access period of a test twin's campaigns in seconds
   * (`TEST_RESULTS_ACCESS_PERIOD_SECONDS`, default 3,600 = 1 hour; decisions
   * §17): long enough to export and inspect a test run, short enough that
   * `campaign.expired` and `results_expired` can be seen the same day.
   */
  get testResultsAccessPeriodSeconds(): number {
    return intFromEnv('TEST_RESULTS_ACCESS_PERIOD_SECONDS', 3_600);
  },
  /** Lifetime of a presigned export URL in seconds (`EXPORT_URL_TTL_SECONDS`, default 900; decisions §5). */
  get exportUrlTtlSeconds(): number {
    return intFromEnv('EXPORT_URL_TTL_SECONDS', 900);
  },
  /** Lifetime of a presigned upload URL in seconds (`UPLOAD_URL_TTL_SECONDS`, default 900; decisions §14). */
  get uploadUrlTtlSeconds(): number {
    return intFromEnv('UPLOAD_URL_TTL_SECONDS', 900);
  },
  /**
   * How long after `POST /v1/uploads/create` campaign create accepts the
   * upload, in seconds (`UPLOAD_TTL_SECONDS`, default 3,600 = 1 h;
   * decisions §14). At most 1 day: the bucket's lifecycle rule deletes the
   * file 1 day after it was written.
   */
  get uploadTtlSeconds(): number {
    return Math.min(intFromEnv('UPLOAD_TTL_SECONDS', 3_600), 86_400);
  },
  /**
   * How long an `Idempotency-Key` is remembered, in seconds, from its first
   * use (`IDEMPOTENCY_TTL_SECONDS`, default 86,400 = 24 h; decisions §10).
   */
  get idempotencyTtlSeconds(): number {
    return intFromEnv('IDEMPOTENCY_TTL_SECONDS', 86_400);
  },
  /**
   * Authenticated requests an organization may make per window, all its keys
   * together (`RATE_LIMIT_REQUESTS`, default 200; decisions §15). The
   * operator overrides it per organization (`org:limits`).
   */
  get rateLimitRequests(): number {
    return intFromEnv('RATE_LIMIT_REQUESTS', 200, 1);
  },
  /** Length of the request-rate window in seconds (`RATE_LIMIT_WINDOW_SECONDS`, default 10, from 1 to 3,600; decisions §15). */
  get rateLimitWindowSeconds(): number {
    return intFromEnv('RATE_LIMIT_WINDOW_SECONDS', 10, 1, 3_600);
  },
  /** Exports an organization may make per hour (`EXPORTS_PER_HOUR`, default 60; decisions §15). */
  get exportsPerHour(): number {
    return intFromEnv('EXPORTS_PER_HOUR', 60, 1);
  },
  /** Uploads an organization may create per hour (`UPLOADS_PER_HOUR`, default 60; decisions §15). */
  get uploadsPerHour(): number {
    return intFromEnv('UPLOADS_PER_HOUR', 60, 1);
  },
  /** Secret that signs list cursors (`CURSOR_SECRET`; decisions §3). */
  get cursorSecret(): string {
    return required('CURSOR_SECRET');
  },
  /**
   * Whether webhook URLs may be `http://127.0.0.1` and `http://localhost`
   * (`WEBHOOKS_ALLOW_LOCALHOST` = `true` or `1`; on under `npm start`, off in
   * AWS; decisions §12).
   */
  get webhooksAllowLocalhost(): boolean {
    return ['true', '1'].includes((process.env.WEBHOOKS_ALLOW_LOCALHOST ?? '').toLowerCase());
  },
  /**
   * First wait of the webhook retry schedule in seconds, doubling per retry
   * (`WEBHOOK_RETRY_BASE_SECONDS`, default 30, decimals allowed; see
   * lib/webhooks/schedule.ts). Tests shorten it.
   */
  get webhookRetryBaseSeconds(): number {
    const raw = process.env.WEBHOOK_RETRY_BASE_SECONDS;
    if (raw === undefined || raw === '') return 30;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`Environment variable WEBHOOK_RETRY_BASE_SECONDS must be a positive number, got "${raw}"`);
    return value;
  },
  /** ARN of the webhook delivery state machine (`WEBHOOK_STATE_MACHINE_ARN`); unset on the local stack, whose poller drives delivery. */
  get webhookStateMachineArn(): string | undefined {
    return process.env.WEBHOOK_STATE_MACHINE_ARN || undefined;
  },
  /** Seconds after which a launch lock whose holder died expires (decisions §2). */
  launchLockSeconds: 60,
  /**
   * Seconds after a launch before the reconciler treats a missing execution
   * as lost (`RECONCILE_GRACE_SECONDS`, default 120): longer than a launching
   * Lambda can take to call StartExecution after its transaction.
   */
  get reconcileGraceSeconds(): number {
    return intFromEnv('RECONCILE_GRACE_SECONDS', 120);
  },
  /**
   * How often the local stack (`npm start`) runs the enrichment reconciler
   * after its pass at start, in seconds (`RECONCILE_EVERY_SECONDS`, default
   * 30, from 1 to 86,400: Node's timers wrap past about 24.8 days and would
   * run it back to back; AWS: every 5 minutes and on every abnormal end).
   */
  get localReconcileEverySeconds(): number {
    return intFromEnv('RECONCILE_EVERY_SECONDS', 30, 1, 86_400);
  },
  /**
   * File of the local erasure-receipt signing key (`PRIVACY_SIGNING_KEY_FILE`: an ES256 private JWK, made on
   * first use; the local stack points it into its data folder). Unset: receipts cannot be signed here.
   */
  get privacySigningKeyFile(): string {
    return required('PRIVACY_SIGNING_KEY_FILE');
  },
};
