/**
 * The composition root: the one place that builds this deployment's stores
 * and ports from the shared AWS clients (lib/aws.ts) and settings
 * (lib/config.ts), and hands them to the use cases. Handlers (functions/),
 * the local stack, the operator CLI, the tests and the bench import it;
 * nothing else in lib/ does — every module below receives what it needs.
 *
 * Each dependency is built lazily, once per process, so the environment can
 * be set first (the local stack points it at the emulators) and a bundle
 * keeps only what its handler calls.
 */
import type * as z from 'zod/mini';
import { ddb, kms, s3, s3Presigner, sfn, sqs } from './aws';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  setting,
  bucketNameSetting,
  creditsPerAccountSetting,
  cursorSecretSetting,
  erasureQueueUrlSetting,
  exportsPerHourSetting,
  idempotencyTtlSecondsSetting,
  privacySigningKeyFileSetting,
  rateLimitRequestsSetting,
  rateLimitWindowSecondsSetting,
  receiptKeyIdSetting,
  receiptPublishedKeyIdsSetting,
  reconcileGraceSecondsSetting,
  resultsAccessPeriodSecondsSetting,
  resultsStreamKeepAliveSecondsSetting,
  resultsStreamMaxSecondsSetting,
  stateMachineArnSetting,
  tableNameSetting,
  testAccountIdsPerDaySetting,
  testRateLimitRequestsSetting,
  testResultsAccessPeriodSecondsSetting,
  uploadTtlSecondsSetting,
  uploadUrlTtlSecondsSetting,
  uploadsPerHourSetting,
  webhookRetryBaseSecondsSetting,
  webhookStateMachineArnSetting,
  webhooksAllowLocalhostSetting,
  LAUNCH_LOCK_SECONDS,
} from './config';
import type { DeliveryPolicyOf } from './results/deliverable';
import { createSequenceStore, type SequenceStore } from './results/sequence';
import * as sequenceMethods from './results/sequence';
import {
  createApiHandler,
  createJsonApiHandler,
  type ApiHandler,
  type ApiHandlerDependencies,
  type KeyCheckMode,
  type RequestContext,
  type StreamingApiHandler,
} from './http/pipeline';
import { streamifiedHandler } from './http/stream-lambda';
import { streamedAnswerOf, type StreamedAnswer } from './http/stream';
import { ApiKeyCache } from './http/auth';
import { createRequestDayReader, createUsageMonthReader, type UsageDependencies } from './organizations/usage';
import {
  createKeyUses,
  createRequestDays,
  createUsageMonths,
  type KeyUses,
  type RequestDays,
  type UsageMonths,
} from './http/request-counts';
import { createLimitCounter, RequestLimiter, takeQuota, type LimitCounter, type QuotaUse } from './http/rate-limit';
import { createLimitStore, readLimits, type LimitDefaults, type LimitStore } from './organizations/limits';
import type { Operation } from './http/operation';
import { createOrganizationStore, getOrganization, readSmbCredits, type OrganizationStore } from './organizations/store';
import { createApiKeyPager, createApiKeyReader, createApiKeyStore, issue as issueApiKey, type ApiKeyStore } from './organizations/api-keys';
import { createAccountHistoryReader, createAccountHistoryStore, type AccountHistoryStore } from './history/store';
import { createCampaignOrganizationReader, createCampaignReader, createCampaignStore, type CampaignStore } from './campaigns/store';
import * as campaignMethods from './campaigns/store';
import { createAccountListStore, type AccountListStore } from './account-lists/account-list';
import { createLedgerStore, type LedgerStore } from './credits/store';
import * as ledgerMethods from './credits/store';
import { createEmbeddedWarehouse, createWarehouseReader, type EmbeddedWarehouse, type Warehouse } from './warehouse/warehouse';
import { createEnrichmentStore, type EnrichmentStore } from './enrichment/store';
import { createResultStore, type ResultStore } from './results/parts';
import { createStepFunctionsWorkflow, type WorkflowPort } from './enrichment/workflow';
import { createOutcomeStore, type OutcomeStore } from './enrichment/outcomes';
import { createPrefixStore, type PrefixStore } from './storage/prefixes';
import type { LaunchDependencies } from './enrichment/launch';
import type { ReconcileDependencies } from './enrichment/reconcile';
import type { CancelDependencies } from './enrichment/cancel';
import { createIdempotencyStore, type IdempotencyStore } from './idempotency/store';
import * as idempotencyMethods from './idempotency/store';
import { idempotencyStage } from './idempotency/stage';
import type { SavedAnswerCodec } from './idempotency/middleware';
import { createWebhookStore, type WebhookStore } from './webhooks/store';
import * as webhookMethods from './webhooks/store';
import { storeOf, type TableAccess } from './db/methods';
import type { Resolver } from './webhooks/ssrf';
import type { DeliveryDependencies, DeliveryScheduler } from './webhooks/delivery';
import type { WebhookDependencies } from './webhooks/use-cases';
import { createStepFunctionsScheduler, pendingIndexScheduler } from './webhooks/scheduler';
import { createUploadStore, type UploadStore } from './uploads/store';
import { createUploadPresigner, createUploadReader } from './uploads/files';
import type { UploadDependencies, UploadReadDependencies } from './uploads/use-cases';
import { forMode } from './test-mode/mode';
import { testPacing, testWarehouse } from './test-mode/accounts';
import type { BatchPacing } from './enrichment/steps';
import { testAccountHistory } from './test-mode/history';
import { createSuppressionStore, type ErasureRecord, type SuppressionStore } from './privacy/store';
import * as privacyMethods from './privacy/store';
import { cachedSuppressionPolicies } from './privacy/deliverable';
import { createCopyIndex, type CopyIndex } from './privacy/copies';
import { createFileReceiptSigner, createKmsReceiptSigner, type ReceiptSigner } from './privacy/receipt';
import { runErasure, type ErasureJobDependencies, type EraseDependencies } from './privacy/erasure';
import type { ErasureCreateDependencies, PrivacyDependencies } from './privacy/use-cases';
import type { VendorErasureDependencies } from './privacy/vendor';
import { privacyEvent, type WebhookEvent } from './webhooks/events';
import { logger } from './observability';
import type { RequestAudit, TransactItem } from './http/request-record';
import { createAuditStore, createRequestAudit, operatorChangeItem, type AuditStore, type OperatorChange } from './audit/log';
import type { AuditDependencies } from './audit/use-cases';

const once = <T>(build: () => T): (() => T) => {
  let value: T | undefined;
  return () => (value ??= build());
};

/** The table every store of this deployment reads and writes. */
const table = (): TableAccess => ({ client: ddb, tableName: setting(tableNameSetting) });

/**
 * An operation's narrow store: the given store methods (lib/db/methods.ts), built on first use against this
 * deployment's table. Its function's bundle carries those methods and no other (docs/deploy.md "Prerequisites", bench `bundles`).
 */
const tableStore = <M extends Record<string, (table: TableAccess) => unknown>>(methods: M): (() => { [K in keyof M]: ReturnType<M[K]> }) =>
  once(() => storeOf(table(), methods));

/** The organization store of this deployment. */
export const organizations: () => OrganizationStore = /* @__PURE__ */ once(() =>
  createOrganizationStore({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** What `campaigns/list` reads (lib/db/methods.ts): its function's bundle carries no other campaign store method. */
export const campaignLister = /* @__PURE__ */ tableStore({ list: campaignMethods.list });
/** What `campaigns/update` writes (lib/db/methods.ts): its function's bundle carries no other campaign store method. */
export const campaignDraftEditor = /* @__PURE__ */ tableStore({ updateDraft: campaignMethods.updateDraft });

/** The organization read alone ({@link OrganizationStore.get}): what most operations read of their organization. */
export const organizationReader = /* @__PURE__ */ tableStore({ get: getOrganization });
/** What `events/list` and `campaigns/update` read of an organization: its smb balance only (lib/db/methods.ts), not the whole item. */
export const organizationCredits = /* @__PURE__ */ tableStore({ smbCredits: readSmbCredits });

/** The API keys of this deployment (authentication's lookup; issuing and revoking keys). */
export const apiKeys: () => ApiKeyStore = /* @__PURE__ */ once(() =>
  createApiKeyStore({ client: ddb, tableName: setting(tableNameSetting) }),
);
/** What `keys/create` writes (lib/db/methods.ts): its function's bundle carries no other key store method. */
export const apiKeyIssuer = /* @__PURE__ */ tableStore({ issue: issueApiKey });
/** The key page of `keys/list` alone (lib/organizations/api-keys.ts {@link createApiKeyPager}): its bundle carries no code that changes keys. */
export const apiKeyPager: () => Pick<ApiKeyStore, 'page'> = /* @__PURE__ */ once(() =>
  createApiKeyPager({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** The key lookup alone (the same `findByHash` as {@link apiKeys}): what every handler's authentication reads. */
const apiKeyReader: () => Pick<ApiKeyStore, 'findByHash'> = /* @__PURE__ */ once(() =>
  createApiKeyReader({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** Account enrichment times and CRM targets. */
export const accountHistory: () => AccountHistoryStore = /* @__PURE__ */ once(() =>
  createAccountHistoryStore({ client: ddb, tableName: setting(tableNameSetting), accountLists: accountLists() }),
);

/**
 * The account history's reads alone (the same reads as {@link accountHistory}): what a launch's or a quote's
 * evaluation reads, so their bundles carry none of the history's writes (bench `bundles`).
 */
const accountHistoryReader: () => Pick<AccountHistoryStore, 'getFacts'> = /* @__PURE__ */ once(() =>
  createAccountHistoryReader({ client: ddb, tableName: setting(tableNameSetting), accountLists: accountLists() }),
);

/** The campaign store of this deployment. */
export const campaigns: () => CampaignStore = /* @__PURE__ */ once(() =>
  createCampaignStore({ client: ddb, tableName: setting(tableNameSetting) }),
);
/** The campaign read alone (the same `get` as {@link campaigns}), for functions that need nothing else of the store. */
export const campaignReader: () => Pick<CampaignStore, 'get'> = /* @__PURE__ */ once(() =>
  createCampaignReader({ client: ddb, tableName: setting(tableNameSetting) }),
);

/**
 * A campaign's reads with its organization (the same reads as {@link campaigns}): what a launch's and a quote's
 * evaluation read, and `campaigns/get`, so their bundles carry none of the store's list and write code (bench `bundles`).
 */
export const campaignOrganizationReader: () => Pick<CampaignStore, 'get' | 'getWithOrganization'> = /* @__PURE__ */ once(() =>
  createCampaignOrganizationReader({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** The account-list store (S3) of this deployment. */
export const accountLists: () => AccountListStore = /* @__PURE__ */ once(() =>
  createAccountListStore({ client: s3(), bucketName: setting(bucketNameSetting) }),
);

/** The credit ledger (docs/launch.md#the-credit-ledger) and operator adjustments. */
export const ledger: () => LedgerStore = /* @__PURE__ */ once(() => createLedgerStore(table()));
/** What `org/ledger` reads (lib/db/methods.ts): its function's bundle carries no other ledger method. */
export const ledgerPager = /* @__PURE__ */ tableStore({ page: ledgerMethods.page });
/** What `org/usage` reads of the ledger. */
const ledgerSpan = /* @__PURE__ */ tableStore({ entriesBetween: ledgerMethods.entriesBetween });

/** The enrichment lifecycle store. */
export const enrichment: () => EnrichmentStore = /* @__PURE__ */ once(() =>
  createEnrichmentStore({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** Enrichment result parts (S3). */
export const results: () => ResultStore = /* @__PURE__ */ once(() =>
  createResultStore({ client: s3(), bucketName: setting(bucketNameSetting) }),
);

/** The results' sequence: which batches are readable and their seqs (lib/results/sequence.ts). */
export const sequence: () => SequenceStore = /* @__PURE__ */ once(() =>
  createSequenceStore({ client: ddb, tableName: setting(tableNameSetting) }),
);
/** What a reader of the results reads of the sequence (results pages, the stream): no code that assigns seqs or paces slots. */
export const sequenceReader = /* @__PURE__ */ tableStore({ lastSeq: sequenceMethods.lastSeq, rangesAfter: sequenceMethods.rangesAfter });

/** Per-account outcomes of launch evaluations (S3 chunks + manifest item). */
export const outcomes: () => OutcomeStore = /* @__PURE__ */ once(() =>
  createOutcomeStore({ ddb, s3: s3(), tableName: setting(tableNameSetting), bucketName: setting(bucketNameSetting) }),
);

/** Deletion of stored objects by prefix (storage expiry: lib/enrichment/attempt-objects.ts). */
export const objects: () => PrefixStore = /* @__PURE__ */ once(() =>
  createPrefixStore({ client: s3(), bucketName: setting(bucketNameSetting) }),
);

/** The enrichment workflow (Step Functions). */
export const workflow: () => WorkflowPort = /* @__PURE__ */ once(() =>
  createStepFunctionsWorkflow({ client: sfn(), stateMachineArn: setting(stateMachineArnSetting) }),
);

/** Idempotency records (docs/idempotency.md). */
export const idempotencyRecords: () => IdempotencyStore = /* @__PURE__ */ once(() => createIdempotencyStore(table()));
/** What an idempotent request's stage claims, saves and releases (lib/db/methods.ts): not the erasure's purge. */
const idempotencyClaims = /* @__PURE__ */ tableStore({
  work: idempotencyMethods.work,
  claim: idempotencyMethods.claim,
  complete: idempotencyMethods.complete,
  release: idempotencyMethods.release,
});

/** Upload records (docs/campaigns.md#large-account-lists-upload-first). */
export const uploads: () => UploadStore = /* @__PURE__ */ once(() =>
  createUploadStore({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** What uploads/create needs: records and the presigner (docs/campaigns.md#large-account-lists-upload-first). */
export const uploadDependencies = (): UploadDependencies => ({
  uploads: uploads(),
  presigner: createUploadPresigner({ presigner: s3Presigner(), bucketName: setting(bucketNameSetting) }),
  urlTtlSeconds: setting(uploadUrlTtlSecondsSetting),
  ttlSeconds: setting(uploadTtlSecondsSetting),
  quota: hourlyQuota('uploads'),
});

/** What campaign create needs to read an upload (`accountIdsUploadId`): records and the files, no presigner. */
export const uploadReadDependencies = (): UploadReadDependencies => ({
  uploads: uploads(),
  files: createUploadReader({ s3: s3(), bucketName: setting(bucketNameSetting) }),
});

/** The embedded warehouse (README.md#operator-cli): imports and the default adapter. */
export const embeddedWarehouse: () => EmbeddedWarehouse = /* @__PURE__ */ once(() =>
  createEmbeddedWarehouse({ client: ddb, tableName: setting(tableNameSetting) }),
);

/**
 * The embedded warehouse's reads alone (the same reads as {@link embeddedWarehouse}): what the request and workflow
 * paths read, so their bundles carry no import or erasure code (bench `bundles`).
 */
const embeddedWarehouseReader: () => Warehouse = /* @__PURE__ */ once(() =>
  createWarehouseReader({ client: ddb, tableName: setting(tableNameSetting) }),
);

let warehouseAdapter: Warehouse | undefined;
/** The warehouse adapter in use: the embedded one's reads unless {@link useWarehouse} chose another. */
export const warehouse = (): Warehouse => warehouseAdapter ?? embeddedWarehouseReader();
/** Chooses the warehouse adapter of this process (another data platform, or a failing one in fault tests); `undefined` restores the embedded one. */
export const useWarehouse = (adapter: Warehouse | undefined): void => {
  warehouseAdapter = adapter;
};

/**
 * The warehouse an organization's evaluation and workflow read (
 * docs/test-mode.md): a test twin's is the built-in test warehouse (lib/test-mode/), a live
 * organization's the adapter in use ({@link warehouse}).
 */
export const warehouseFor = (organizationId: string): Warehouse => forMode(organizationId, { live: warehouse, test: () => testWarehouse });

/**
 * The account history (recency, CRM targets) an organization's evaluation and
 * workflow read and record (docs/test-mode.md): a test twin's is decided by its
 * account IDs (lib/test-mode/history.ts), a live organization's is {@link accountHistory}.
 */
export const accountHistoryFor = (organizationId: string): AccountHistoryStore =>
  forMode<AccountHistoryStore>(organizationId, { live: accountHistory, test: () => testAccountHistory });

/** The reads of {@link accountHistoryFor} alone (an evaluation's), its live side {@link accountHistoryReader}. */
const accountHistoryReaderFor = (organizationId: string): Pick<AccountHistoryStore, 'getFacts'> =>
  forMode<Pick<AccountHistoryStore, 'getFacts'>>(organizationId, { live: accountHistoryReader, test: () => testAccountHistory });

/**
 * How long an organization's enriched results stay readable (seconds): the
 * deployment's period (docs/csv.md), or the shorter one of test twins
 * (`TEST_RESULTS_ACCESS_PERIOD_SECONDS`, docs/test-mode.md), so test integrations
 * see `campaign.expired` and `results_expired` within the hour.
 */
export const resultsAccessPeriodFor = (organizationId: string): number =>
  forMode(organizationId, {
    live: () => setting(resultsAccessPeriodSecondsSetting),
    test: () => setting(testResultsAccessPeriodSecondsSetting),
  });

/**
 * How an organization's workflow batches are paced (docs/test-mode.md "Slow
 * accounts"): a test twin's `test_slow_` accounts go at most 100 a second per
 * campaign, each readable within a second; a live organization's are not paced.
 */
export const pacingFor = (organizationId: string): BatchPacing | undefined =>
  forMode<BatchPacing | undefined>(organizationId, { live: () => undefined, test: () => testPacing });

/** Webhook endpoints, events, messages and the delivery log (docs/webhooks.md). */
export const webhooks: () => WebhookStore = /* @__PURE__ */ once(() => createWebhookStore(table()));
// Each operation's narrow webhook store (lib/db/methods.ts): its function's bundle carries no other store method.
/** What `webhooks/create` writes and its saved answer reads. */
const webhookEndpointCreator = /* @__PURE__ */ tableStore({
  createEndpoint: webhookMethods.createEndpoint,
  getEndpoint: webhookMethods.getEndpoint,
});
/** What `webhooks/list` reads. */
export const webhookEndpointLister = /* @__PURE__ */ tableStore({ listEndpoints: webhookMethods.listEndpoints });
/** What `webhooks/delete` writes. */
export const webhookEndpointDeleter = /* @__PURE__ */ tableStore({ deleteEndpoint: webhookMethods.deleteEndpoint });
/** What `webhooks/rotate-secret` reads and writes, and its saved answer reads. */
export const webhookSecretRotator = /* @__PURE__ */ tableStore({
  rotateSecret: webhookMethods.rotateSecret,
  getEndpoint: webhookMethods.getEndpoint,
});
/** What `webhooks/test` reads and writes. */
export const webhookTestSender = /* @__PURE__ */ tableStore({ getEndpoint: webhookMethods.getEndpoint, putEvent: webhookMethods.putEvent });
/** What `webhooks/deliveries` reads. */
export const webhookDeliveryLog = /* @__PURE__ */ tableStore({ deliveries: webhookMethods.deliveries });
/** What `events/list` reads of the webhook partition. */
export const eventFeed = /* @__PURE__ */ tableStore({ events: webhookMethods.events });

let webhookResolver: Resolver | undefined;
/** Chooses the resolver webhook URLs are checked with (tests resolve names to chosen addresses); `undefined` restores the system's. */
export const useWebhookResolver = (resolver: Resolver | undefined): void => {
  webhookResolver = resolver;
};

/** The delivery schedule: the webhook state machine in AWS (`WEBHOOK_STATE_MACHINE_ARN`), the local poller's pending index otherwise. */
const webhookScheduler: () => DeliveryScheduler = /* @__PURE__ */ once(() => {
  const stateMachineArn = setting(webhookStateMachineArnSetting);
  return stateMachineArn ? createStepFunctionsScheduler({ client: sfn(), stateMachineArn }) : pendingIndexScheduler;
});

/** What the webhook endpoint operations need. */
export const webhookDependencies = (): WebhookDependencies => ({
  webhooks: webhookEndpointCreator(),
  ...(webhookResolver ? { resolve: webhookResolver } : {}),
  allowLocalhost: setting(webhooksAllowLocalhostSetting),
});

/** What webhook delivery needs (dispatch, attempts, redelivery). */
export const deliveryDependencies = (): DeliveryDependencies => ({
  webhooks: webhooks(),
  organizations: organizations(),
  scheduler: webhookScheduler(),
  ...(webhookResolver ? { resolve: webhookResolver } : {}),
  settings: { allowLocalhost: setting(webhooksAllowLocalhostSetting), retryBaseSeconds: setting(webhookRetryBaseSecondsSetting) },
});

/**
 * What a launch evaluation of an organization reads (docs/launch.md): the
 * quote's dependencies, and the launch's without its writes. The warehouse
 * and account history are the organization's ({@link warehouseFor},
 * {@link accountHistoryFor}'s reads: a test twin's are built in, docs/test-mode.md).
 */
export const evaluationDependencies = (organizationId: string) => ({
  campaigns: campaignOrganizationReader(),
  organizations: organizations(),
  accountLists: accountLists(),
  warehouse: warehouseFor(organizationId),
  accountHistory: accountHistoryReaderFor(organizationId),
  enrichment: enrichment(),
  creditsPerAccount: setting(creditsPerAccountSetting),
  limits: limits(),
});

/** The launch dependencies of an organization's launch (docs/launch.md; its sources as {@link evaluationDependencies}). */
export const launchDependencies = (organizationId: string): LaunchDependencies => ({
  ...evaluationDependencies(organizationId),
  workflow: workflow(),
  outcomes: outcomes(),
  objects: objects(),
  launchLockSeconds: LAUNCH_LOCK_SECONDS,
});

/** The cancel dependencies of this deployment (docs/launch.md#canceling; lib/enrichment/cancel.ts): the API's and the operator's. */
export const cancelDependencies = (): CancelDependencies => ({
  campaigns: campaigns(),
  enrichment: enrichment(),
  workflow: workflow(),
  objects: objects(),
});

/** The reconciler's dependencies (lib/enrichment/reconcile.ts). */
export const reconcileDependencies = (): ReconcileDependencies => ({
  campaigns: campaigns(),
  organizations: organizations(),
  enrichment: enrichment(),
  workflow: workflow(),
  accountHistoryFor,
  organizationIds: () => ledger().organizationIds(),
  graceSeconds: setting(reconcileGraceSecondsSetting),
  objects: objects(),
});

/**
 * The deployment's limits of an organization (docs/limits.md; settings of lib/config.ts): a test twin's request
 * limit is `TEST_RATE_LIMIT_REQUESTS`, smaller than the live one (docs/test-mode.md, "Limits of test mode").
 */
export const limitDefaults = (organizationId: string): LimitDefaults => ({
  requests: forMode(organizationId, { live: () => setting(rateLimitRequestsSetting), test: () => setting(testRateLimitRequestsSetting) }),
  windowSeconds: setting(rateLimitWindowSecondsSetting),
  exportsPerHour: setting(exportsPerHourSetting),
  uploadsPerHour: setting(uploadsPerHourSetting),
});

/** The organizations' limits and monthly spend (docs/limits.md). */
export const limits: () => LimitStore = /* @__PURE__ */ once(() =>
  createLimitStore({ client: ddb, tableName: setting(tableNameSetting), defaults: limitDefaults }),
);

/** The limits in force of an organization, the one read of {@link limits} the request limiter and the quotas need. */
const limitsInForce: () => LimitStore['limits'] = /* @__PURE__ */ once(() =>
  readLimits({ client: ddb, tableName: setting(tableNameSetting) }, limitDefaults),
);

/** Fixed-window counters of the limits (lib/http/rate-limit.ts). */
export const limitCounter: () => LimitCounter = /* @__PURE__ */ once(() =>
  createLimitCounter({ client: ddb, tableName: setting(tableNameSetting) }),
);

/**
 * Counts one export or upload of an organization against its limit per hour (docs/limits.md): its limits (one
 * GetItem), then the hour's counter (one conditional UpdateItem, nothing counted past the limit).
 * @throws RateLimitedError (429 `rate_limited`, `policy`) past the limit.
 */
export const hourlyQuota =
  (policy: 'exports' | 'uploads') =>
  async (organizationId: string): Promise<QuotaUse> => {
    const inForce = await limitsInForce()(organizationId);
    return takeQuota(limitCounter(), organizationId, policy, {
      limit: policy === 'exports' ? inForce.exportsPerHour : inForce.uploadsPerHour,
      windowSeconds: 3_600,
    });
  };

/**
 * A test twin's storage quota (docs/test-mode.md, "Limits of test mode"): the account IDs its creates store,
 * counted per UTC day against `TEST_ACCOUNT_IDS_PER_DAY` (one conditional UpdateItem); none for a live organization.
 * @throws RateLimitedError (429 `rate_limited`, policy `testAccountIds`) past it.
 */
export const testStorageQuota = async (organizationId: string, accountIds: number): Promise<QuotaUse | undefined> =>
  forMode<Promise<QuotaUse | undefined>>(organizationId, {
    live: async () => undefined,
    test: () =>
      takeQuota(
        limitCounter(),
        organizationId,
        'testAccountIds',
        { limit: setting(testAccountIdsPerDaySetting), windowSeconds: 86_400 },
        Date.now(),
        accountIds,
      ),
  });

/** What `POST /v1/org/limits` needs. */
export const limitDependencies = () => ({ limits: limits(), organizations: organizationReader(), defaults: limitDefaults });

/** The organizations' request day items: the request rate's leases and the requests per key and day (lib/http/request-counts.ts). */
export const requestDays: () => RequestDays = /* @__PURE__ */ once(() =>
  createRequestDays({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** The organizations' usage months: requests per API key and per campaign, by day (lib/http/request-counts.ts). */
export const usageMonths: () => UsageMonths = /* @__PURE__ */ once(() =>
  createUsageMonths({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** Each API key's last minute of use (`lastUsedAt`, docs/authentication.md). */
export const keyUses: () => KeyUses = /* @__PURE__ */ once(() => createKeyUses({ client: ddb, tableName: setting(tableNameSetting) }));

/**
 * A request-rate limiter as one process (one Lambda container) holds it: leases and counts in the table, policies
 * from the organization items (docs/limits.md). Tests build several to play several containers on one table.
 * @param options.now - the clock (epoch milliseconds).
 */
export const newRequestLimiter = (options: { now?: () => number } = {}): RequestLimiter =>
  new RequestLimiter({
    days: requestDays(),
    keyUses: keyUses(),
    usage: usageMonths(),
    policyOf: async (organizationId) => (await limitsInForce()(organizationId)).requests,
    defaults: () => ({ limit: setting(rateLimitRequestsSetting), windowSeconds: setting(rateLimitWindowSecondsSetting) }),
    ...options,
  });

/** The request-rate limiter of this process (one per container); `flush()` writes its pending request counts. */
export const requestLimiter: () => RequestLimiter = /* @__PURE__ */ once(() => newRequestLimiter());

/** The `Credits-Remaining` header of describe, get, enrich and quote: the smb balance (credits) the body shows (docs/limits.md). */
export const creditsRemaining = (smbCredits: number): Record<string, string> => ({ 'credits-remaining': String(smbCredits) });

/** Key hash → organization of the API keys this process has seen (one per container; lib/http/auth.ts). */
const apiKeyCache: () => ApiKeyCache = /* @__PURE__ */ once(() => new ApiKeyCache());

/**
 * What this deployment builds an API handler of `operation` with (lib/http/pipeline.ts `ApiHandlerDependencies`):
 * the key reader and the process's key cache, its request limiter, and the audit log when the operation is audited;
 * an idempotent operation's handler adds its idempotency stage to them.
 */
const apiDependencies = (operation: Operation): ApiHandlerDependencies => ({
  findApiKey: (keyHash) => apiKeyReader().findByHash(keyHash),
  apiKeyCache: apiKeyCache(),
  requestLimiter: requestLimiter(),
  ...(operation.audited ? { audit: requestAudit() } : {}),
});

/**
 * The Lambda handler of an API operation that is not `idempotent`, wired to
 * this deployment's API-key lookup and the process's key cache (see
 * {@link createApiHandler} for the pipeline). Its bundle carries no
 * idempotency code; an idempotent operation needs {@link idempotentApiHandler}
 * (createApiHandler throws at load otherwise).
 *
 * @param options.keyCheck - `in-read` for operations whose use case hands `keyCheck` to its first
 *   store read (the key is read in the same round trip; lib/http/pipeline.ts {@link KeyCheckMode}).
 *
 * @example
 * export const handler = apiHandler(getCampaignOperation, (input, { organizationId, keyCheck }) => getCampaign({ campaigns: campaigns() }, organizationId, input.campaignId, keyCheck), { keyCheck: 'in-read' });
 */
export const apiHandler = <S extends z.core.$ZodObject, R>(
  operation: Operation<S>,
  useCase: (input: z.output<S>, context: RequestContext) => Promise<R>,
  options: { keyCheck?: KeyCheckMode; headers?: (data: R) => Record<string, string> } = {},
): ApiHandler => createApiHandler(operation, useCase, apiDependencies(operation as Operation), options);

/**
 * The Lambda handler of a `streaming` operation (docs/results.md "The
 * stream"): {@link apiHandler}'s pipeline, whose use case answers a
 * {@link StreamedAnswer}; in the Lambda runtime it answers through response
 * streaming (lib/http/stream-lambda.ts), elsewhere the local server pipes
 * the body.
 */
export const streamingApiHandler = <S extends z.core.$ZodObject>(
  operation: Operation<S>,
  useCase: (input: z.output<S>, context: RequestContext) => Promise<StreamedAnswer>,
): StreamingApiHandler =>
  streamifiedHandler(
    createApiHandler(operation, useCase, apiDependencies(operation as Operation), {
      streamedAnswer: streamedAnswerOf,
    }) as StreamingApiHandler,
  );

/** The pace of a results stream: this deployment's settings (lib/config.ts; docs/results.md "The stream"). */
export const resultsStreamTiming = () => ({
  keepAliveMs: setting(resultsStreamKeepAliveSecondsSetting) * 1000,
  maxMs: setting(resultsStreamMaxSecondsSetting) * 1000,
});

/** Options of {@link idempotentApiHandler} and {@link jsonIdempotentApiHandler}. */
export interface IdempotentHandlerOptions<R> {
  keyCheck?: KeyCheckMode;
  headers?: (data: R) => Record<string, string>;
  settlesCommit?: boolean;
  /**
   * For an answer that holds a secret: how it is saved without it and replayed
   * (lib/idempotency/middleware.ts {@link SavedAnswerCodec}).
   */
  savedAnswer?: SavedAnswerCodec;
  /**
   * The answer can name a person (identifier hashes): saved answers are listed so an erasure purges those that
   * hold the person (docs/privacy.md "Erasure").
   */
  personalAnswers?: boolean;
}

/** An idempotent operation's handler built by `build` (with or without the form parsers) and this deployment's records. */
const idempotentHandlerOf =
  (build: typeof createApiHandler) =>
  <S extends z.core.$ZodObject, R>(
    operation: Operation<S>,
    useCase: (input: z.output<S>, context: RequestContext) => Promise<R>,
    { savedAnswer, personalAnswers, ...options }: IdempotentHandlerOptions<R> = {},
  ): ApiHandler => {
    const stage = idempotencyStage({ store: idempotencyClaims, ttlSeconds: () => setting(idempotencyTtlSecondsSetting) });
    return build(
      operation,
      useCase,
      { ...apiDependencies(operation as Operation), idempotency: (op) => stage(op, savedAnswer, personalAnswers) },
      options,
    );
  };

/**
 * The Lambda handler of an `idempotent` operation: {@link apiHandler} plus
 * `Idempotency-Key` handling with this deployment's records (docs/idempotency.md;
 * lib/idempotency/stage.ts). A `jsonOnly` operation's is {@link jsonIdempotentApiHandler}
 * (this one throws at load for it).
 *
 * @example
 * export const handler = idempotentApiHandler(createCampaignOperation, (input, { organizationId }) => createCampaign(…, organizationId, input));
 */
export const idempotentApiHandler = /* @__PURE__ */ idempotentHandlerOf(createApiHandler);

/**
 * {@link idempotentApiHandler} for a `jsonOnly` operation (lib/http/operation.ts): built without the urlencoded and
 * multipart parsers (lib/http/pipeline.ts `createJsonApiHandler`), so its bundle carries neither them nor busboy.
 * Throws at load for an operation that takes form bodies.
 */
export const jsonIdempotentApiHandler = /* @__PURE__ */ idempotentHandlerOf(createJsonApiHandler);

/** The audit log as the pipeline writes it (lib/audit/log.ts, docs/audit.md). */
export const requestAudit: () => RequestAudit = /* @__PURE__ */ once(() =>
  createRequestAudit({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** Reads pages of the audit log (lib/audit/log.ts). */
export const auditLog: () => AuditStore = /* @__PURE__ */ once(() =>
  createAuditStore({ client: ddb, tableName: setting(tableNameSetting) }),
);

/** What `org/audit` needs (lib/audit/use-cases.ts). */
export const auditDependencies = (): AuditDependencies => ({ audit: auditLog(), cursorSecret: setting(cursorSecretSetting) });

/**
 * The entry of an operator's change (`keyId: "operator"`, docs/audit.md), as a Put for the change's own
 * transaction on this deployment's table.
 */
export const operatorAuditItem = (change: OperatorChange): TransactItem => operatorChangeItem(setting(tableNameSetting), change);

/** Suppressions and erasures (lib/privacy/store.ts). */
export const suppressions: () => SuppressionStore = /* @__PURE__ */ once(() =>
  createSuppressionStore({ client: ddb, tableName: setting(tableNameSetting) }),
);

// Each operation's narrow privacy store (lib/db/methods.ts): its function's bundle carries no other store method.
/** What `privacy/erasures/get` reads. */
export const erasureReader = /* @__PURE__ */ tableStore({ getErasure: privacyMethods.getErasure });
/** What `privacy/erasures/list` reads, and the cursor secret. */
export const erasureListDependencies = () => ({ suppressions: erasureLister(), cursorSecret: setting(cursorSecretSetting) });
const erasureLister = /* @__PURE__ */ tableStore({ listErasures: privacyMethods.listErasures });
/** What `privacy/suppressions/list` reads, and the cursor secret. */
export const suppressionListDependencies = () => ({ suppressions: suppressionLister(), cursorSecret: setting(cursorSecretSetting) });
const suppressionLister = /* @__PURE__ */ tableStore({ listSuppressions: privacyMethods.listSuppressions });
/** What `privacy/suppressions/delete` writes. */
export const suppressionRemover = /* @__PURE__ */ tableStore({ unsuppress: privacyMethods.unsuppress });

/** The copy index: which stored result parts hold which identifier digests (lib/privacy/copies.ts). */
export const copyIndex: () => CopyIndex = /* @__PURE__ */ once(() =>
  createCopyIndex({ client: ddb, tableName: setting(tableNameSetting) }),
);

/**
 * The copy index an organization's workflow records its result parts in: a live organization's; none for a test twin
 * (its contacts are made up from account IDs, docs/test-mode.md: no person's erasure can meet them).
 */
export const copyIndexFor = (organizationId: string): CopyIndex | undefined =>
  forMode<CopyIndex | undefined>(organizationId, { live: copyIndex, test: () => undefined });

/**
 * What may be delivered to an organization beyond its request's selection
 * (lib/results/deliverable.ts): the one policy every delivery path (export,
 * results, campaigns/accounts' `contactsFound`, the workflow's FindContacts)
 * is given, read once per request or batch. Privacy withholds suppressed
 * contacts (lib/privacy/deliverable.ts, docs/privacy.md).
 */
export const deliveryPolicy: DeliveryPolicyOf = (organizationId) => suppressionPolicies()(organizationId);
/** The container's suppression policies, kept by the sets' versions (lib/privacy/deliverable.ts `cachedSuppressionPolicies`). */
const suppressionPolicies = /* @__PURE__ */ once(() => cachedSuppressionPolicies(suppressionSets()));
/** What the suppression policies read: the compact sets and their versions, no other method of the suppression store. */
const suppressionSets = /* @__PURE__ */ tableStore({
  versionedHashSet: privacyMethods.versionedHashSet,
  setVersions: privacyMethods.setVersions,
});

/**
 * The erasure-receipt signer (lib/privacy/receipt.ts): in AWS the KMS key the
 * stack names (`RECEIPT_KEY_ID`, `RECEIPT_PUBLISHED_KEY_IDS`), locally the key file of the data folder.
 */
export const receiptSigner: () => ReceiptSigner = /* @__PURE__ */ once(() =>
  setting(receiptKeyIdSetting) !== undefined || setting(receiptPublishedKeyIdsSetting).length > 0
    ? createKmsReceiptSigner({
        client: kms(),
        keyId: setting(receiptKeyIdSetting) ?? '',
        publishedKeyIds: setting(receiptPublishedKeyIdsSetting),
      })
    : createFileReceiptSigner(setting(privacySigningKeyFileSetting)),
);

/** What the privacy operations need. */
export const privacyDependencies = (): PrivacyDependencies => ({
  suppressions: suppressions(),
  cursorSecret: setting(cursorSecretSetting),
});

/** Records an event unless it is already recorded (its ID derives from what it is about: one event per change). */
const recordEventOnce = async (event: WebhookEvent): Promise<void> => {
  await webhooks()
    .putEvent(event)
    .catch((error: unknown) => {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    });
};

/** What erasing from an organization's stored data needs (lib/privacy/erasure.ts). */
export const eraseDependencies = (): EraseDependencies => ({ campaigns: campaigns(), results: results(), objects: objects() });

/** What the erasure job needs: the stores, the signer and the `privacy.erasure_completed` event. */
export const erasureJobDependencies = (): ErasureJobDependencies => ({
  ...eraseDependencies(),
  suppressions: suppressions(),
  signer: receiptSigner(),
  purgeSavedAnswers: (organizationId, hashes) =>
    idempotencyRecords().purgeAnswers(organizationId, (body) => [...hashes].some((hash) => body.includes(hash))),
  erasureCompleted: (erasure: ErasureRecord) => {
    const { organizationId: _organizationId, ...shown } = erasure;
    return recordEventOnce(
      privacyEvent('privacy.erasure_completed', erasure.organizationId, erasure.completedAt!, { erasure: shown }, erasure.id),
    );
  },
});

/** What the vendor's erasure needs (lib/privacy/vendor.ts): the operator's global list, the embedded warehouse, every organization. */
export const vendorErasureDependencies = (): VendorErasureDependencies => ({
  ...eraseDependencies(),
  suppressions: suppressions(),
  removeFromWarehouse: (hashes) => embeddedWarehouse().removeContacts(hashes),
  copies: copyIndex(),
  contactErased: async (organizationId, data) => {
    const event = privacyEvent('privacy.contact_erased', organizationId, new Date().toISOString(), data, data.contactId);
    try {
      await webhooks().putEvent(event);
      return true;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      return false;
    }
  },
});

/** Erasure jobs running in this process (the local stack), so tests and shutdown can wait for them. */
const runningErasures = /* @__PURE__ */ new Set<Promise<unknown>>();

/** What the erasure queue carries: one job (functions/privacy-erasure-worker.ts). */
export interface ErasureJobMessage {
  organizationId: string;
  erasureId: string;
}

/**
 * Runs one erasure job (lib/privacy/erasure.ts `runErasure`): what the AWS
 * queue's worker runs per message, and what the local stack runs in its own process.
 * @throws whatever stops the job (it stays `running`; a rerun resumes it).
 */
export const runErasureJob = ({ organizationId, erasureId }: ErasureJobMessage, options: { takeOver?: boolean } = {}) =>
  runErasure(erasureJobDependencies(), organizationId, erasureId, undefined, options);

/**
 * Runs a job in this process after the answer (the local stack); a failure is logged, and the job resumes at the next start.
 * @param options - `takeOver`: the job's run died with this data folder's previous process (the resume at start).
 */
const runHere = (message: ErasureJobMessage, options: { takeOver?: boolean } = {}): void => {
  const job = runErasureJob(message, options)
    .catch((error: unknown) => logger.error('Erasure job failed', { erasureId: message.erasureId, error }))
    .finally(() => runningErasures.delete(job));
  runningErasures.add(job);
};

/**
 * Starts an erasure job (docs/privacy.md "The erasure job"): in AWS one message
 * to the erasure queue, whose worker runs it with retries and a dead-letter
 * queue; locally in this process, after the answer.
 */
export const startErasure = async (organizationId: string, erasureId: string): Promise<void> => {
  const message: ErasureJobMessage = { organizationId, erasureId };
  const queueUrl = setting(erasureQueueUrlSetting);
  if (queueUrl === undefined) {
    if (!inProcessErasures)
      throw new Error('Erasure jobs have nowhere to run: set ERASURE_QUEUE_URL (AWS), or call runErasuresInProcess() (the local stack)');
    return inProcessErasures(message);
  }
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
};

/**
 * Where {@link startErasure} runs a job without a queue: set by {@link runErasuresInProcess} (the local stack), so a
 * deployed erasures/create bundle holds only what it runs (the job's code, S3, KMS and the signer are the worker's).
 */
let inProcessErasures: ((message: ErasureJobMessage) => void) | undefined;

/**
 * Makes this process run erasure jobs itself, after the answer, when no queue is configured (the local stack:
 * infra/local/stack.ts calls it when it starts the API; docs/privacy.md "The erasure job").
 */
export const runErasuresInProcess = (): void => {
  inProcessErasures = runHere;
};

/** Jobs resumed at most per start of the local stack. */
const RESUMED_PER_START = 1000;

/**
 * The local stack's resume at start: every erasure job still `pending` or
 * `running` (a crash stopped it) runs again in this process, from its saved progress.
 * @param organizationIds - only these organizations' jobs (a test sharing the table with others); every job when absent.
 * @returns how many were started.
 */
export const resumeErasures = async (organizationIds?: ReadonlySet<string>): Promise<number> => {
  const unfinished = (await suppressions().unfinishedErasures(RESUMED_PER_START)).filter(
    ({ organizationId }) => organizationIds === undefined || organizationIds.has(organizationId),
  );
  // The data folder serves one stack at a time (README.md "Set up"): a job still held is held by a run that died with the previous process.
  for (const { organizationId, id } of unfinished) runHere({ organizationId, erasureId: id }, { takeOver: true });
  return unfinished.length;
};

/** Waits for every erasure job this process started. */
export const erasuresSettled = async (): Promise<void> => {
  while (runningErasures.size > 0) await Promise.allSettled([...runningErasures]);
};

/** What erasures/create needs. */
export const erasureCreateDependencies = (): ErasureCreateDependencies => ({ ...privacyDependencies(), startErasure });

// What the handlers (functions/) call: they reach lib/ only through this
// module and the request schemas (.dependency-cruiser.cjs, docs/architecture.md).
export { createDocsHandler } from './http/docs';
export { ACCEPTED_CHARGE_FIELD, acceptedChargeOf } from './http/accepted-charge';
export { ORIGIN_VERIFY_HEADER } from './http/source-address';
export { buildOpenApiDocument } from './contract/openapi';
export { buildAsyncApiDocument } from './contract/asyncapi';
export { config, setting, bucketNameSetting, cursorSecretSetting, exportUrlTtlSecondsSetting, resultsStreamUrlSetting } from './config';
export { listAuditEntries } from './audit/use-cases';
export { listCampaignAccounts } from './enrichment/accounts';
export { createCampaign, createCampaignOnce, getCampaign, listCampaigns, updateCampaign } from './campaigns/use-cases';
export { createUpload, readUploadedAccountIds } from './uploads/use-cases';
export { enrichCampaign, LaunchChargeChangedError } from './enrichment/launch';
export { cancelCampaign } from './enrichment/cancel';
export { exportCampaign } from './exports/export';
export { streamCampaignResults } from './exports/stream';
export { listCampaignResults } from './exports/results';
export { s3 } from './aws';
export { quoteCampaign } from './enrichment/quote';
export { createCatchAllHandler } from './http/catch-all';
export { reconcileCredits, totalDrift } from './credits/reconcile';
export { emitMetrics, logger } from './observability';
export { reconcileEnrichments } from './enrichment/reconcile';
export { describeOrganization } from './organizations/describe';
export { describeLimits } from './organizations/limits';
export { createKey, listKeys, revokeKey, rotateKey } from './organizations/keys';
export { orgUsage } from './organizations/usage';

/** What `POST /v1/org/usage` needs: the request day items and the ledger (docs/authentication.md "Usage"). */
export const usageDependencies = (): UsageDependencies => ({
  requestDays: createRequestDayReader({ client: ddb, tableName: setting(tableNameSetting) }),
  usageMonths: createUsageMonthReader({ client: ddb, tableName: setting(tableNameSetting) }),
  ledger: ledgerSpan(),
});
export { listLedger } from './credits/use-cases';
export { endpointSecretAnswer } from './webhooks/use-cases';
export {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listEvents,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhook,
  rotateWebhookSecret,
  sendTestEvent,
} from './webhooks/use-cases';
export { createTaskHandler } from './enrichment/task-handler';
export { attemptDelivery, dispatchEvent } from './webhooks/delivery';
export { compensateAttempt, completeEnrichment, expireResults, findContactsBatch, finishRecording } from './enrichment/steps';
export { createErasure, createSuppressions, deleteSuppression, getErasure, listErasures, listSuppressions } from './privacy/use-cases';
export {
  buildMcpTools,
  isMcpTool,
  buildServerCard,
  buildApiCatalog,
  buildLlmsTxt,
  MCP_SERVER_INFO,
  MCP_PATH,
  SERVER_CARD_PATH,
  API_CATALOG_PATH,
  LLMS_TXT_PATH,
  MAX_TOOL_DESCRIPTION_CHARS,
  toolName,
} from './contract/mcp';
export type { McpTool, McpToolBinding } from './contract/mcp';
export type { Operation } from './http/operation';
