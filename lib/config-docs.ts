/**
 * What each deployment setting means (lib/config.ts `SETTINGS` declares its
 * variable, default and bounds): its unit, who sets it, the page that states
 * its rule and one sentence for the README's settings table, which
 * `npm run openapi:write` writes from both (scripts/docs-figures.ts). Kept apart
 * from `SETTINGS` so that no Lambda bundle carries these texts (bench
 * `bundles`), as the operations' documentation lives in each domain's docs.ts.
 */
import type { SettingName } from './config';

/** The documentation of one setting. */
export interface SettingDocs {
  /** Unit of the value (`seconds`, `credits`, `requests`…), when it has one. */
  unit?: string;
  /** What it means, one sentence for the settings table. */
  meaning: string;
  /** Who sets it: the operator (deployment or `npm start`), or the stack itself (CDK outputs, the local stack). */
  setBy: 'operator' | 'stack';
  /** The page that states the rule it sets. */
  docs?: string;
}

/** Every setting's documentation, by the setting's name in `SETTINGS` (each setting has one). */
export const SETTING_DOCS = {
  creditsPerAccount: {
    unit: 'credits',
    setBy: 'operator',
    docs: 'docs/launch.md',
    meaning: 'Credits charged per eligible account of a launch.',
  },
  resultsAccessPeriodSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/lifetimes.md',
    meaning: 'How long results stay readable after completion (`resultsExpireAt`).',
  },
  testResultsAccessPeriodSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning:
      'The same for test-mode campaigns: long enough to export and inspect a test run, short enough to see `campaign.expired` and `results_expired` the same day.',
  },
  exportUrlTtlSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/lifetimes.md',
    meaning: 'Lifetime of a presigned export URL (never past `resultsExpireAt`).',
  },
  uploadUrlTtlSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/campaigns.md#large-account-lists-upload-first',
    meaning: 'Lifetime of a presigned upload URL.',
  },
  uploadTtlSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/campaigns.md#large-account-lists-upload-first',
    meaning:
      'How long after `uploads/create` campaign create accepts the upload; a larger value is lowered to 1 day, after which the bucket deletes the file.',
  },
  idempotencyTtlSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/idempotency.md',
    meaning: 'How long an `Idempotency-Key` is remembered from its first use.',
  },
  rateLimitRequests: {
    unit: 'requests',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning:
      'Authenticated requests an organization may make per window, all its keys together (the operator overrides it per organization).',
  },
  rateLimitWindowSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Length of the request-rate window.',
  },
  testRateLimitRequests: {
    unit: 'requests',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning:
      "Authenticated requests an organization's test twin may make per window (its own counter, smaller than the live default; the operator overrides it per twin).",
  },
  testAccountIdsPerDay: {
    unit: 'account IDs',
    setBy: 'operator',
    docs: 'docs/test-mode.md',
    meaning: "Account IDs a test twin's campaign creates may store per UTC day (test storage; live campaigns have no such quota).",
  },
  exportsPerHour: {
    unit: 'exports',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Exports an organization may make per hour (the operator overrides it per organization).',
  },
  resultsStreamKeepAliveSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/results.md',
    meaning: 'A results stream writes a keep-alive after this long without an account (decimals allowed; tests shorten it).',
  },
  resultsStreamMaxSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/results.md',
    meaning:
      'A results stream closes with a `pause` object after this long, and the client resumes from its `lastSeq` (decimals allowed; tests shorten it; the stream function times out a minute later).',
  },
  uploadsPerHour: {
    unit: 'uploads',
    setBy: 'operator',
    docs: 'docs/limits.md',
    meaning: 'Uploads an organization may create per hour (the operator overrides it per organization).',
  },
  webhooksAllowLocalhost: {
    setBy: 'operator',
    docs: 'docs/webhooks.md',
    meaning: 'Webhook URLs may be `http://127.0.0.1` and `http://localhost` (`true` or `1`; on under `npm start`, off in AWS).',
  },
  webhookRetryBaseSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/webhooks.md',
    meaning: 'First wait of the webhook retry schedule, doubling per retry (decimals allowed; tests shorten it).',
  },
  reconcileGraceSeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/reliability.md',
    meaning:
      'How long after a launch a missing workflow execution counts as lost: longer than a launching Lambda can take to call StartExecution after its transaction.',
  },
  localReconcileEverySeconds: {
    unit: 'seconds',
    setBy: 'operator',
    docs: 'docs/reliability.md',
    meaning:
      "How often `npm start` runs the enrichment reconciler after its pass at start (Node's timers wrap past about 24.8 days; AWS runs it every 5 minutes and on every abnormal end).",
  },
  tableName: {
    setBy: 'stack',
    docs: 'docs/data-model.md',
    meaning: 'Name of the single DynamoDB table.',
  },
  bucketName: {
    setBy: 'stack',
    docs: 'docs/data-model.md',
    meaning: 'Bucket holding account lists, enrichment results and export files.',
  },
  stateMachineArn: {
    setBy: 'stack',
    docs: 'docs/deploy.md',
    meaning: 'ARN of the enrichment state machine.',
  },
  webhookStateMachineArn: {
    setBy: 'stack',
    docs: 'docs/webhooks.md',
    meaning: 'ARN of the webhook delivery state machine; unset on the local stack, whose poller drives delivery.',
  },
  resultsStreamUrl: {
    setBy: 'stack',
    docs: 'docs/results.md',
    meaning:
      'Base URL of the results stream in AWS (its function URL), for the served OpenAPI document; unset: the stream is served where the document is (the local stack).',
  },
  cursorSecret: {
    setBy: 'stack',
    docs: 'docs/pagination.md',
    meaning: 'Secret that signs list cursors.',
  },
  privacySigningKeyFile: {
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'File of the local erasure-receipt signing key (an ES256 private JWK, made on first use); the local stack puts it in its data folder.',
  },
  receiptKeyId: {
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'The KMS key (ARN) that signs erasure receipts; set only on the erasure worker. Unset on the local stack, which signs with PRIVACY_SIGNING_KEY_FILE.',
  },
  receiptPublishedKeyIds: {
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning:
      'Comma-separated KMS keys (ARNs) whose public parts GET /.well-known/jwks.json serves: the signing key and retired ones. Unset on the local stack.',
  },
  erasureQueueUrl: {
    setBy: 'stack',
    docs: 'docs/privacy.md',
    meaning: 'The SQS queue erasures/create sends each new erasure job to; unset on the local stack, which runs jobs in its own process.',
  },
} as const satisfies Record<SettingName, SettingDocs>;
