/**
 * Typed TypeScript client of the Campaign Enrichment API (this package's
 * README, client/README.md): one method per operation of the API's OpenAPI
 * document, named by its `operationId`, and helpers for the multi-call flows.
 *
 * Types are generated from the API's OpenAPI document (`/openapi.json`) by openapi-typescript
 * (`client/schema.d.ts`, `npm run openapi:write`); requests go through
 * openapi-fetch. What it adds on top:
 *
 * - the envelope unwrapped: a method resolves with `data`, or rejects with a
 *   {@link CampaignEnrichmentError} carrying `code`, `status`, `details`
 *   (typed per code: narrow with {@link isApiError}) and the `requestId` to
 *   quote to support;
 * - safe retries: every operation that honours `Idempotency-Key` sends one
 *   (generated per call unless given) and keeps it across its retries, so a
 *   retried call never runs twice. Network failures, 5xx, gateway
 *   throttling, 409 `idempotency_key_in_use` and 409 `enrichment_pending`
 *   are retried, waiting `Retry-After` seconds when the API says so,
 *   otherwise exponential backoff with full jitter; so is 429 `rate_limited`,
 *   waiting its `Retry-After` when it is at most `maxRetryAfterSeconds`;
 * - {@link CampaignEnrichmentClient.rateLimit}: the organization's request
 *   rate as the last answer's `RateLimit-Policy` / `RateLimit` fields told it,
 *   to pace on;
 * - async iterators over every paginated list ({@link CampaignEnrichmentClient.campaigns},
 *   `campaignAccounts`, `ledgerEntries`, `webhookDeliveries`, `events`, `apiKeys`): they follow
 *   `nextCursor` to the end;
 * - {@link CampaignEnrichmentClient.uploadAccountIds} (upload first, client/README.md "Large account lists"),
 *   {@link CampaignEnrichmentClient.waitForEnrichment} (poll until `enriched`),
 *   {@link CampaignEnrichmentClient.downloadExport} (export, then fetch the file);
 * - {@link verifyWebhook} (client/webhooks.ts): checks the Standard Webhooks
 *   signature of a pushed campaign event and returns it typed.
 *
 * @example
 * const api = createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.API_KEY! });
 * const campaign = await api.createCampaign({ name: 'Q4 targets', accountIds: ['acc_00001', 'acc_00002'] });
 * const quote = await api.quoteCampaign({ campaignId: campaign.id });
 * await api.enrichCampaign({ campaignId: campaign.id });
 * const enriched = await api.waitForEnrichment(campaign.id, { timeoutSeconds: 300 });
 * const { csv } = await api.downloadExport({ campaignId: campaign.id, hasEmail: true });
 * for await (const account of api.campaignAccounts({ campaignId: campaign.id })) console.log(account.outcome);
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks.js';

type Schemas = components['schemas'];
/** A campaign, one variant per status. */
export type Campaign = Schemas['Campaign'];
/** A campaign whose enrichment completed: `results`, `completedAt`, `resultsExpireAt` present. */
export type EnrichedCampaign = Schemas['EnrichedCampaign'];
/** One page of `listCampaigns`. */
export type CampaignPage = Schemas['CampaignPage'];
/** The result of `exportCampaign`. */
export type ExportResult = Schemas['ExportResult'];
/** One account of the results as they arrive (`listCampaignResults`, `results()`). */
export type ResultAccount = Schemas['ResultAccount'];
/** The result of `createUpload`: a presigned PUT URL for a large account list (client/README.md "Large account lists"). */
export type Upload = Schemas['Upload'];
/** The result of `describeOrganization`. */
export type OrganizationDescription = Schemas['OrganizationDescription'];

/**
 * Every operation of the document: operationId → path, and whether it
 * honours `Idempotency-Key`. The client has one method per entry, of the
 * same name. The entries are written by `npm run openapi:write` from the
 * routes (infra/routes.ts); test/operations-coverage.test.ts fails when they
 * are stale.
 */
export const OPERATIONS = {
  // generated:client-operations (npm run openapi:write, from infra/routes.ts)
  describeOrganization: { path: '/v1/org/describe', idempotent: false },
  describeLimits: { path: '/v1/org/limits', idempotent: false },
  createKey: { path: '/v1/keys/create', idempotent: false },
  listKeys: { path: '/v1/keys/list', idempotent: false },
  orgUsage: { path: '/v1/org/usage', idempotent: false },
  revokeKey: { path: '/v1/keys/revoke', idempotent: false },
  rotateKey: { path: '/v1/keys/rotate', idempotent: false },
  createCampaign: { path: '/v1/campaigns/create', idempotent: true },
  createUpload: { path: '/v1/uploads/create', idempotent: true },
  updateCampaign: { path: '/v1/campaigns/update', idempotent: true },
  getCampaign: { path: '/v1/campaigns/get', idempotent: false },
  listCampaigns: { path: '/v1/campaigns/list', idempotent: false },
  enrichCampaign: { path: '/v1/campaigns/enrich', idempotent: true },
  cancelCampaign: { path: '/v1/campaigns/cancel', idempotent: true },
  exportCampaign: { path: '/v1/campaigns/export', idempotent: false },
  listCampaignResults: { path: '/v1/campaigns/results', idempotent: false },
  streamCampaignResults: { path: '/v1/campaigns/results/stream', idempotent: false },
  listLedger: { path: '/v1/org/ledger', idempotent: false },
  listAuditEntries: { path: '/v1/org/audit', idempotent: false },
  quoteCampaign: { path: '/v1/campaigns/quote', idempotent: false },
  listCampaignAccounts: { path: '/v1/campaigns/accounts', idempotent: false },
  createWebhookEndpoint: { path: '/v1/webhooks/create', idempotent: true },
  listWebhookEndpoints: { path: '/v1/webhooks/list', idempotent: false },
  deleteWebhookEndpoint: { path: '/v1/webhooks/delete', idempotent: true },
  rotateWebhookSecret: { path: '/v1/webhooks/rotate-secret', idempotent: true },
  testWebhookEndpoint: { path: '/v1/webhooks/test', idempotent: true },
  listWebhookDeliveries: { path: '/v1/webhooks/deliveries', idempotent: false },
  listEvents: { path: '/v1/events/list', idempotent: false },
  redeliverWebhook: { path: '/v1/webhooks/redeliver', idempotent: true },
  createSuppressions: { path: '/v1/privacy/suppressions/create', idempotent: true },
  listSuppressions: { path: '/v1/privacy/suppressions/list', idempotent: false },
  deleteSuppression: { path: '/v1/privacy/suppressions/delete', idempotent: true },
  createErasure: { path: '/v1/privacy/erasures/create', idempotent: true },
  getErasure: { path: '/v1/privacy/erasures/get', idempotent: false },
  listErasures: { path: '/v1/privacy/erasures/list', idempotent: false },
  // /generated:client-operations
} as const satisfies Record<string, { path: keyof paths; idempotent: boolean }>;

/** An operation of the client, by operationId. */
export type OperationId = keyof typeof OPERATIONS;

/** The error objects of the document (`…Error` schemas), by code. */
type ErrorObjects = { [K in keyof Schemas as Schemas[K] extends { code: string; message: string } ? K : never]: Schemas[K] };
type ErrorObject = ErrorObjects[keyof ErrorObjects];
/** Every error code the API answers (the `code` of each `…Error` schema of the document). */
export type ApiErrorCode = ErrorObject extends { code: infer C extends string } ? C : never;
/** The typed `details` of an API error code (`undefined` for a code without details). */
export type ApiErrorDetails<C extends ApiErrorCode> = Extract<ErrorObject, { code: C }> extends { details?: infer D } ? D : undefined;
/** Codes of failures the client itself observes. */
export type ClientErrorCode =
  | 'network_error'
  | 'unexpected_response'
  | 'timeout'
  | 'enrichment_failed'
  | 'not_enriching'
  | 'upload_failed'
  | 'download_failed'
  | 'attempt_replaced';

/**
 * A failed call: the API's error envelope (`code`, `message`, `details`), its
 * HTTP `status` and `requestId` (the `X-Request-Id` to quote to support), or
 * a failure the client observed (`status` 0 when no answer arrived).
 */
export class CampaignEnrichmentError extends Error {
  readonly code: ApiErrorCode | ClientErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly requestId: string | undefined;
  /** Seconds the API asked to wait before retrying (`Retry-After`), if it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    code: ApiErrorCode | ClientErrorCode;
    message: string;
    status: number;
    details?: Record<string, unknown>;
    requestId?: string;
    retryAfterSeconds?: number;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CampaignEnrichmentError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * Narrows an error to an API error of one code, with its `details` typed.
 * @example if (isApiError(error, 'insufficient_credits')) console.log(error.details.shortfall);
 */
export function isApiError<C extends ApiErrorCode>(
  error: unknown,
  code: C,
): error is CampaignEnrichmentError & { code: C; details: ApiErrorDetails<C> } {
  return error instanceof CampaignEnrichmentError && error.code === code;
}

/** Options of {@link createCampaignEnrichmentClient}. */
export interface ClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:3000` or the stack's `ApiUrl`. */
  baseUrl: string;
  /** The organization's API key (`cek_…`). */
  apiKey: string;
  /** Retries after the first attempt. @default 3 */
  maxRetries?: number;
  /** First backoff delay when the API gives no `Retry-After`, in ms (doubles each retry, full jitter, at most 20 s). @default 500 */
  initialBackoffMs?: number;
  /** The fetch to use (a test may inject faults). @default globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
  /** Longest `Retry-After` of a 429 `rate_limited` the client waits out before retrying (seconds); longer ones are thrown. @default 60 */
  maxRetryAfterSeconds?: number;
}

/**
 * The organization's request rate as the last answer told it (client/README.md "Rate limits"):
 * `RateLimit-Policy: "requests";q=<limit>;w=<windowSeconds>` and
 * `RateLimit: "requests";r=<remaining>;t=<resetSeconds>`.
 */
export interface RateLimitState {
  /** Requests per window (all the organization's keys together). */
  limit: number;
  /** The window (seconds). */
  windowSeconds: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets, from {@link observedAt}. */
  resetSeconds: number;
  /** When the answer arrived (epoch ms). */
  observedAt: number;
}

/** The RateLimit fields of an answer, when it carries them. */
function rateLimitOf(response: Response): RateLimitState | undefined {
  const policy = /"requests";q=(\d+);w=(\d+)/.exec(response.headers.get('ratelimit-policy') ?? '');
  const left = /"requests";r=(\d+);t=(\d+)/.exec(response.headers.get('ratelimit') ?? '');
  if (!policy || !left) return undefined;
  return {
    limit: Number(policy[1]),
    windowSeconds: Number(policy[2]),
    remaining: Number(left[1]),
    resetSeconds: Number(left[2]),
    observedAt: Date.now(),
  };
}

/** Per-call options of the operations that honour `Idempotency-Key`. */
export interface IdempotentCallOptions {
  /** The `Idempotency-Key` of this logical call. @default a random UUID, the same for every retry of the call */
  idempotencyKey?: string;
}

/** Options of {@link CampaignEnrichmentClient.waitForEnrichment}. */
export interface WaitOptions {
  /** Give up after this many seconds (`code: 'timeout'`). @default 600 */
  timeoutSeconds?: number;
  /** Seconds between two polls. @default 2 */
  intervalSeconds?: number;
}

type PathOf<O extends OperationId> = (typeof OPERATIONS)[O]['path'];
type Op<P extends keyof paths> = NonNullable<paths[P]['post']>;
type JsonBody<P extends keyof paths> = NonNullable<Op<P>['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body of an operation. */
export type RequestBody<O extends OperationId> = JsonBody<PathOf<O>>;
/** The `data` of an operation's success. */
export type ResponseData<O extends OperationId> = Op<PathOf<O>>['responses'] extends {
  200: { content: { 'application/json': { data: infer D } } };
}
  ? D
  : never;

/** An operation's method: the body is optional where the operation's is. */
type Method<O extends OperationId> = [undefined] extends [Op<PathOf<O>>['requestBody']]
  ? (
      body?: RequestBody<O>,
      ...options: (typeof OPERATIONS)[O]['idempotent'] extends true ? [IdempotentCallOptions?] : []
    ) => Promise<ResponseData<O>>
  : (
      body: RequestBody<O>,
      ...options: (typeof OPERATIONS)[O]['idempotent'] extends true ? [IdempotentCallOptions?] : []
    ) => Promise<ResponseData<O>>;

/** The list operations and the field of their page that holds the items. */
const PAGED = {
  listCampaigns: 'campaigns',
  listCampaignAccounts: 'accounts',
  listLedger: 'entries',
  listWebhookDeliveries: 'deliveries',
  listEvents: 'events',
  listKeys: 'keys',
  listSuppressions: 'suppressions',
  listErasures: 'erasures',
  listAuditEntries: 'entries',
} as const;
type Paged = keyof typeof PAGED;
type ItemOf<O extends Paged> = ResponseData<O> extends Record<(typeof PAGED)[O], (infer I)[]> ? I : never;
/** A list request without its `cursor` (the iterator owns it). */
type PageRequest<O extends Paged> = Omit<NonNullable<RequestBody<O>>, 'cursor'>;

/** The client: one method per operation, named by its operationId, and the flow helpers. */
/** One object of the results stream (`streamCampaignResults`, docs/results.md "The stream"): an account, a keep-alive, `end` or `pause`. */
export type ResultsStreamObject = Schemas['ResultsStreamObject'];

/** Operations whose success is a stream, not the envelope: their method reads one connection (see {@link CampaignEnrichmentClient.streamCampaignResults}). */
type StreamingOperationId = 'streamCampaignResults';

/** The client: one method per operation, named by its operationId, and the iterators below. */
export type CampaignEnrichmentClient = { [O in Exclude<OperationId, StreamingOperationId>]: Method<O> } & {
  /**
   * One connection of `POST /v1/campaigns/results/stream` (JSON Lines): its objects as they arrive, until the
   * stream closes (`end` or `pause`, the last object) or the connection drops (a `network_error` thrown after the
   * objects read so far). `attemptId` is the `Attempt-Id` header of the answer. Refusals throw as any call's.
   * `results(campaignId, { stream: true })` resumes by itself; use this for one connection's objects.
   * @throws CampaignEnrichmentError the API's refusal (before the first object), or `network_error`.
   */
  streamCampaignResults(
    body: RequestBody<'streamCampaignResults'>,
  ): Promise<{ attemptId: string; objects: AsyncIterableIterator<ResultsStreamObject> }>;
  /** The request rate the last answer (success or error) reported (`RateLimit-Policy` / `RateLimit`); `undefined` before any authenticated answer. */
  readonly rateLimit: RateLimitState | undefined;
  /** Every campaign of the list (newest first), page after page, to the end. */
  campaigns(request?: PageRequest<'listCampaigns'>): AsyncIterableIterator<ItemOf<'listCampaigns'>>;
  /** Every account of a campaign's outcomes, page after page, to the end. */
  campaignAccounts(request: PageRequest<'listCampaignAccounts'>): AsyncIterableIterator<ItemOf<'listCampaignAccounts'>>;
  /** Every entry of the credit ledger (newest first), page after page, to the end. */
  ledgerEntries(request?: PageRequest<'listLedger'>): AsyncIterableIterator<ItemOf<'listLedger'>>;
  /** Every attempt of the webhook delivery log (newest first), page after page, to the end. */
  webhookDeliveries(request?: PageRequest<'listWebhookDeliveries'>): AsyncIterableIterator<ItemOf<'listWebhookDeliveries'>>;
  /** Every suppression of the organization, page after page, to the end (docs/privacy.md). */
  suppressions(request?: PageRequest<'listSuppressions'>): AsyncIterableIterator<ItemOf<'listSuppressions'>>;
  /** Every erasure of the organization, page after page, to the end (docs/privacy.md). */
  erasures(request?: PageRequest<'listErasures'>): AsyncIterableIterator<ItemOf<'listErasures'>>;
  /** Every event of the organization's feed of the last 30 days (newest first, docs/events.md), page after page, to the end. */
  events(request?: PageRequest<'listEvents'>): AsyncIterableIterator<ItemOf<'listEvents'>>;
  /** Every API key of the organization (by key ID, never a secret), page after page, to the end. */
  apiKeys(request?: PageRequest<'listKeys'>): AsyncIterableIterator<ItemOf<'listKeys'>>;
  /** Every entry of the organization's audit log (newest first, docs/audit.md), page after page, to the end. */
  auditEntries(request?: PageRequest<'listAuditEntries'>): AsyncIterableIterator<ItemOf<'listAuditEntries'>>;
  /**
   * Every account of a campaign's results as they arrive (client/README.md "Results as they arrive"), in
   * seq order, each once. Pages by `afterSeq` (1,000 accounts a page); with
   * `follow` it long-polls (20 s) while the campaign enriches and ends once the
   * attempt is complete, otherwise it ends at what is readable now. After a
   * dropped connection it asks again from the last seq it handed out (the
   * retries of every call). It checks the attempt every page names, so a
   * new attempt is never mixed in: then it throws.
   * @throws CampaignEnrichmentError `attempt_replaced` (client-side, `details.attemptId` the new attempt) when another attempt replaced the one read, or any API error of results.
   */
  results(campaignId: string, options?: ResultsOptions): AsyncIterableIterator<ResultAccount>;
  /**
   * Uploads an account list too large for a request body (client/README.md "Large account lists"):
   * `createUpload`, then a PUT of `content` (the `accountIdsFile` format) to
   * its URL. Pass the result to `createCampaign` as `accountIdsUploadId`.
   * @returns the upload ID.
   * @throws CampaignEnrichmentError `upload_failed` when the PUT is refused (`status` is S3's), `network_error` without an answer.
   */
  uploadAccountIds(content: string | Uint8Array | Blob, options?: { contentType?: 'text/csv' | 'text/plain' }): Promise<string>;
  /**
   * Polls a launched campaign until it is `enriched` and returns it.
   * @throws CampaignEnrichmentError `enrichment_failed` (back in `draft` with `lastEnrichment`, in `details`),
   *   `not_enriching` (not launched, or expired), `timeout`, or any API error of get.
   */
  waitForEnrichment(campaignId: string, options?: WaitOptions): Promise<EnrichedCampaign>;
  /**
   * Exports a campaign (`exportCampaign`) and downloads the file from its URL.
   * @returns the export result and the CSV text (UTF-8, its BOM removed).
   * @throws CampaignEnrichmentError `download_failed` when the URL answers an error, `network_error` without an answer, or any API error of export.
   */
  downloadExport(body: RequestBody<'exportCampaign'>): Promise<{ result: ExportResult; csv: string }>;
};

/** Options of {@link CampaignEnrichmentClient.results}: the export's contact selection, where to start, whether to follow. */
export interface ResultsOptions {
  /** Keep reading (long polls) until the attempt is complete. Default false: what is readable now. */
  follow?: boolean;
  /** Start after this seq of `attemptId` (a reader resuming what it stored); default 0. */
  afterSeq?: number;
  /** The attempt `afterSeq` belongs to: a page of another attempt then throws `attempt_replaced` instead of mixing seqs. */
  attemptId?: string;
  /**
   * Read through the stream (`streamCampaignResults`, one connection at a time) instead of pages: follows until
   * the attempt is complete (as `follow`), and after a `pause` or a dropped connection reconnects from the last seq
   * it handed out. Default false.
   */
  stream?: boolean;
  maxContactsPerAccount?: number;
  hasMobilePhone?: boolean;
  hasEmail?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `Retry-After` in seconds: delta-seconds or an HTTP date (RFC 9110). */
function retryAfterOf(response: Response): number | undefined {
  const raw = response.headers.get('retry-after');
  if (raw === null) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** Whether a failed answer may succeed when the same request is sent again. */
function isRetryable(error: CampaignEnrichmentError): boolean {
  if (error.code === 'network_error') return true;
  if (error.status >= 500) return true;
  if (error.code === 'idempotency_key_in_use' || error.code === 'enrichment_pending') return true;
  // Throttling by the gateway (not the organization's enrichment ceiling, which a retry does not lift).
  return error.status === 429 && error.code !== 'concurrency_limit_exceeded';
}

const noAnswer = (what: string, cause: unknown) =>
  new CampaignEnrichmentError({
    code: 'network_error',
    status: 0,
    message: `No answer from ${what}: ${(cause as Error)?.message ?? String(cause)}`,
    cause,
  });

/** Builds a client; see the module documentation. */
export function createCampaignEnrichmentClient(options: ClientOptions): CampaignEnrichmentClient {
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const http = createClient<paths>({
    baseUrl,
    fetch: fetchImpl,
    headers: { authorization: `Bearer ${options.apiKey}` },
  });
  const maxRetries = options.maxRetries ?? 3;
  const initialBackoffMs = options.initialBackoffMs ?? 500;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60;
  let lastRateLimit: RateLimitState | undefined;

  /** One attempt: the unwrapped `data`, or the failure as a CampaignEnrichmentError. */
  async function attempt(path: string, body: unknown, idempotencyKey: string | undefined): Promise<unknown> {
    let outcome: { data?: unknown; error?: unknown; response: Response };
    try {
      const post = http.POST as unknown as (
        path: string,
        init: { body: unknown; headers?: Record<string, string> },
      ) => Promise<typeof outcome>;
      outcome = await post(path, { body: body ?? {}, ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}) });
    } catch (cause) {
      throw noAnswer(path, cause);
    }
    const { response } = outcome;
    lastRateLimit = rateLimitOf(response) ?? lastRateLimit;
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const envelope = (response.ok ? outcome.data : outcome.error) as
      { data?: unknown; error?: { code?: string; message?: string; details?: Record<string, unknown> } | null } | undefined;
    if (response.ok && envelope && 'data' in envelope && envelope.error === null) return envelope.data;
    const error = envelope?.error;
    const retryAfterSeconds = retryAfterOf(response);
    throw new CampaignEnrichmentError({
      code: (error?.code as ApiErrorCode | undefined) ?? 'unexpected_response',
      message: error?.message ?? `Unexpected ${response.status} answer from ${path}`,
      status: response.status,
      ...(error?.details ? { details: error.details } : {}),
      ...(requestId ? { requestId } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    });
  }

  /** A logical call: attempts until success, a final error, or the retries run out; one Idempotency-Key for all of them. */
  async function call(operationId: OperationId, body: unknown, callOptions?: IdempotentCallOptions): Promise<unknown> {
    const { path, idempotent } = OPERATIONS[operationId];
    const key = idempotent ? (callOptions?.idempotencyKey ?? globalThis.crypto.randomUUID()) : undefined;
    for (let retry = 0; ; retry++) {
      try {
        return await attempt(path, body, key);
      } catch (error) {
        if (!(error instanceof CampaignEnrichmentError) || retry >= maxRetries || !isRetryable(error)) throw error;
        // A limit whose window resets much later (exports or uploads per hour) is the caller's to plan around.
        if (error.code === 'rate_limited' && (error.retryAfterSeconds ?? Infinity) > maxRetryAfterSeconds) throw error;
        const backoff = Math.random() * Math.min(20_000, initialBackoffMs * 2 ** retry);
        await sleep(error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : backoff);
      }
    }
  }

  /** Pages of a list, following `nextCursor` until it is null, item by item. */
  async function* pages<O extends Paged>(operationId: O, request: object | undefined): AsyncIterableIterator<ItemOf<O>> {
    let cursor: string | undefined;
    do {
      const page = (await call(operationId, { ...request, ...(cursor ? { cursor } : {}) })) as Record<string, unknown> & {
        nextCursor: string | null;
      };
      yield* page[PAGED[operationId]] as ItemOf<O>[];
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /**
   * One connection of the results stream as JSON Lines: the `Attempt-Id` header and the objects, line by line.
   * @throws CampaignEnrichmentError the refusal's envelope (before the first byte), `network_error` without an answer.
   */
  async function openStream(body: RequestBody<'streamCampaignResults'>) {
    const path = OPERATIONS.streamCampaignResults.path;
    let response: Response;
    try {
      response = await fetchImpl(
        new Request(`${baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', accept: 'application/jsonl' },
          body: JSON.stringify(body),
        }),
      );
    } catch (cause) {
      throw noAnswer(path, cause);
    }
    lastRateLimit = rateLimitOf(response) ?? lastRateLimit;
    if (!response.ok || !response.body) {
      const requestId = response.headers.get('x-request-id') ?? undefined;
      const retryAfterSeconds = retryAfterOf(response);
      const envelope = (await response.json().catch(() => undefined)) as
        { error?: { code?: string; message?: string; details?: Record<string, unknown> } | null } | undefined;
      throw new CampaignEnrichmentError({
        code: (envelope?.error?.code as ApiErrorCode | undefined) ?? 'unexpected_response',
        message: envelope?.error?.message ?? `Unexpected ${response.status} answer from ${path}`,
        status: response.status,
        ...(envelope?.error?.details ? { details: envelope.error.details } : {}),
        ...(requestId ? { requestId } : {}),
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      });
    }
    const source = response.body;
    async function* objects(): AsyncIterableIterator<ResultsStreamObject> {
      const decoder = new TextDecoder();
      let buffered = '';
      const reader = source.getReader();
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (cause) {
            throw noAnswer(path, cause);
          }
          if (chunk.done) break;
          buffered += decoder.decode(chunk.value, { stream: true });
          for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
            const line = buffered.slice(0, end);
            buffered = buffered.slice(end + 1);
            if (line.trim() === '') continue;
            const object = JSON.parse(line) as ResultsStreamObject;
            yield object;
            if (object.type === 'end' || object.type === 'pause') return;
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
      // The connection closed before its closing object: dropped.
      throw noAnswer(path, new Error('the stream ended before its end or pause object'));
    }
    return { attemptId: response.headers.get('attempt-id') ?? '', objects: objects() };
  }

  const methods = Object.fromEntries(
    (Object.keys(OPERATIONS) as OperationId[]).map((operationId) => [
      operationId,
      (body?: unknown, callOptions?: IdempotentCallOptions) => call(operationId, body ?? {}, callOptions),
    ]),
  ) as { [O in OperationId]: Method<O> };

  const client: CampaignEnrichmentClient = {
    ...(methods as Omit<typeof methods, StreamingOperationId>),
    get rateLimit() {
      return lastRateLimit;
    },
    campaigns: (request) => pages('listCampaigns', request),
    campaignAccounts: (request) => pages('listCampaignAccounts', request),
    ledgerEntries: (request) => pages('listLedger', request),
    streamCampaignResults: (body) => openStream(body),
    auditEntries: (request) => pages('listAuditEntries', request),
    async *results(campaignId, resultsOptions = {}) {
      const { follow = false, stream = false, afterSeq: start = 0, attemptId: startAttempt, ...selection } = resultsOptions;
      let afterSeq = start;
      let attemptId = startAttempt;
      const replaced = (current: string) =>
        new CampaignEnrichmentError({
          code: 'attempt_replaced',
          status: 0,
          message: `Attempt ${attemptId} of campaign ${campaignId} ended and attempt ${current} replaced it: read the new one from afterSeq 0.`,
          details: { attemptId: current },
        });
      // The stream: one connection after another, each from the last seq handed out, until `end`.
      for (let failures = 0; stream;) {
        let opened: Awaited<ReturnType<typeof openStream>>;
        try {
          opened = await openStream({ campaignId, afterSeq, ...selection });
        } catch (error) {
          if (!(error instanceof CampaignEnrichmentError) || failures >= maxRetries || !isRetryable(error)) throw error;
          await sleep(
            error.retryAfterSeconds !== undefined
              ? error.retryAfterSeconds * 1000
              : Math.random() * Math.min(20_000, initialBackoffMs * 2 ** failures++),
          );
          continue;
        }
        if (attemptId !== undefined && opened.attemptId !== attemptId) throw replaced(opened.attemptId);
        attemptId = opened.attemptId;
        try {
          for await (const object of opened.objects) {
            if (object.type === 'account') {
              const { type: _type, ...account } = object;
              afterSeq = account.seq;
              failures = 0;
              yield account;
            } else if (object.type === 'end') return;
          }
        } catch (error) {
          // A dropped connection: reconnect from the last seq handed out.
          if (!(error instanceof CampaignEnrichmentError) || error.code !== 'network_error' || failures >= maxRetries) throw error;
          await sleep(Math.random() * Math.min(20_000, initialBackoffMs * 2 ** failures++));
        }
      }
      for (;;) {
        const page = await client.listCampaignResults({ campaignId, afterSeq, limit: 1_000, waitSeconds: follow ? 20 : 0, ...selection });
        // Another attempt's seqs are not the ones read so far: never mix them in.
        if (attemptId !== undefined && page.attemptId !== attemptId) throw replaced(page.attemptId);
        attemptId = page.attemptId;
        for (const account of page.accounts) {
          afterSeq = account.seq;
          yield account;
        }
        if (page.complete && page.lastSeq >= page.eligible) return;
        if (!follow && page.accounts.length === 0) return;
      }
    },
    webhookDeliveries: (request) => pages('listWebhookDeliveries', request),
    suppressions: (request) => pages('listSuppressions', request),
    erasures: (request) => pages('listErasures', request),
    events: (request) => pages('listEvents', request),
    apiKeys: (request) => pages('listKeys', request),
    async uploadAccountIds(content, uploadOptions = {}) {
      const upload = await client.createUpload(uploadOptions.contentType ? { contentType: uploadOptions.contentType } : {});
      const headers: Record<string, string> = uploadOptions.contentType ? { 'content-type': uploadOptions.contentType } : {};
      let response: Response;
      try {
        response = await fetchImpl(new Request(upload.url, { method: 'PUT', headers, body: content as RequestInit['body'] }));
      } catch (cause) {
        throw noAnswer('the upload URL', cause);
      }
      if (!response.ok) {
        throw new CampaignEnrichmentError({
          code: 'upload_failed',
          status: response.status,
          message: `The upload URL refused the file (${response.status}): ${(await response.text()).slice(0, 500)}`,
        });
      }
      return upload.uploadId;
    },
    async waitForEnrichment(campaignId, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutSeconds ?? 600) * 1000;
      const intervalMs = (waitOptions.intervalSeconds ?? 2) * 1000;
      for (;;) {
        const campaign = await client.getCampaign({ campaignId });
        if (campaign.status === 'enriched') return campaign;
        if (campaign.status === 'draft' && campaign.lastEnrichment) {
          throw new CampaignEnrichmentError({
            code: 'enrichment_failed',
            status: 0,
            message: `The enrichment of ${campaignId} ended ${campaign.lastEnrichment.status}${campaign.lastEnrichment.refunded ? '; its credits were refunded' : ''}.`,
            details: { lastEnrichment: campaign.lastEnrichment },
          });
        }
        if (campaign.status !== 'enriching') {
          throw new CampaignEnrichmentError({
            code: 'not_enriching',
            status: 0,
            message: `Campaign ${campaignId} is ${campaign.status}, not enriching.`,
            details: { status: campaign.status },
          });
        }
        if (Date.now() + intervalMs > deadline) {
          throw new CampaignEnrichmentError({
            code: 'timeout',
            status: 0,
            message: `Campaign ${campaignId} was still enriching after ${waitOptions.timeoutSeconds ?? 600} s.`,
          });
        }
        await sleep(intervalMs);
      }
    },
    async downloadExport(body) {
      const result = await client.exportCampaign(body);
      let response: Response;
      try {
        response = await fetchImpl(new Request(result.url));
      } catch (cause) {
        throw noAnswer('the export URL', cause);
      }
      if (!response.ok) {
        throw new CampaignEnrichmentError({
          code: 'download_failed',
          status: response.status,
          message: `The export URL answered ${response.status}: ${(await response.text()).slice(0, 500)}`,
        });
      }
      // TextDecoder drops the UTF-8 BOM the file starts with.
      return { result, csv: new TextDecoder('utf-8').decode(await response.arrayBuffer()) };
    },
  };
  return client;
}
