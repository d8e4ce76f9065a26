/**
 * Typed TypeScript client of the Campaign Enrichment API (decisions §13).
 *
 * Types are generated from `docs/openapi.json` by openapi-typescript
 * (`client/schema.d.ts`, `npm run openapi:write`); requests go through
 * openapi-fetch. What it adds on top:
 *
 * - the envelope unwrapped: a method resolves with `data`, or rejects with a
 *   {@link CampaignEnrichmentError} carrying `code`, `status`, `details` and
 *   the `requestId` to quote to support;
 * - safe retries: every create, update and enrich call sends one
 *   `Idempotency-Key` (generated per call unless given) and keeps it across
 *   its retries, so a retried call never runs twice. Network failures, 5xx,
 *   gateway throttling, 409 `idempotency_key_in_use` and 409
 *   `enrichment_pending` are retried, waiting `Retry-After` seconds when the
 *   API says so, otherwise exponential backoff with jitter; so is 429
 *   `rate_limited` (decisions §15), waiting its `Retry-After` when it is at
 *   most `maxRetryAfterSeconds`;
 * - {@link CampaignEnrichmentClient.rateLimit}: the organization's request
 *   rate as the last answer's `RateLimit-Policy` / `RateLimit` fields told it,
 *   to pace on;
 * - {@link CampaignEnrichmentClient.waitForEnrichment}: polls until a launched
 *   campaign is `enriched`.
 *
 * - {@link verifyWebhook} (client/webhooks.ts): checks the Standard Webhooks
 *   signature of a pushed campaign event and returns it typed.
 *
 * @example
 * const api = createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.API_KEY! });
 * const campaign = await api.createCampaign({ name: 'Q4 targets', accountIds: ['acc_00001', 'acc_00002'] });
 * await api.enrichCampaign(campaign.id);
 * const enriched = await api.waitForEnrichment(campaign.id, { timeoutSeconds: 300 });
 * const { url } = await api.exportCampaign({ campaignId: campaign.id, hasEmail: true });
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths } from './schema';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks';

type Schemas = components['schemas'];
/** A campaign, one variant per status. */
export type Campaign = Schemas['Campaign'];
/** A campaign whose enrichment completed: `results`, `completedAt`, `resultsExpireAt` present. */
export type EnrichedCampaign = Schemas['EnrichedCampaign'];
/** One page of `listCampaigns`. */
export type CampaignPage = Schemas['CampaignPage'];
/** The result of `exportCampaign`. */
export type ExportResult = Schemas['ExportResult'];
/** The result of `createUpload`: a presigned PUT URL for a large account list (decisions §14). */
export type Upload = Schemas['Upload'];
/** The result of `describeOrganization`. */
export type OrganizationDescription = Schemas['OrganizationDescription'];

/** Every error code the API answers (the `code` of each `…Error` schema of the document). */
export type ApiErrorCode = { [K in keyof Schemas]: Schemas[K] extends { code: infer C extends string; message: string } ? C : never }[keyof Schemas];
/** Codes of failures the client itself observes. */
export type ClientErrorCode = 'network_error' | 'unexpected_response' | 'timeout' | 'enrichment_failed' | 'not_enriching' | 'upload_failed';

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

  constructor(init: { code: ApiErrorCode | ClientErrorCode; message: string; status: number; details?: Record<string, unknown>; requestId?: string; retryAfterSeconds?: number; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CampaignEnrichmentError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
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
 * The organization's request rate as the last answer told it (decisions §15):
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
  return { limit: Number(policy[1]), windowSeconds: Number(policy[2]), remaining: Number(left[1]), resetSeconds: Number(left[2]), observedAt: Date.now() };
}

/** Per-call options of the mutating operations. */
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

type Op<P extends keyof paths> = NonNullable<paths[P]['post']>;
type Body<P extends keyof paths> = NonNullable<Op<P>['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
type Data<P extends keyof paths> = Op<P>['responses'] extends { 200: { content: { 'application/json': { data: infer D } } } } ? D : never;

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

/** The client's operations. */
export interface CampaignEnrichmentClient {
  /** `POST /v1/org/describe`. */
  describeOrganization(): Promise<Data<'/v1/org/describe'>>;
  /** `POST /v1/org/limits`: the organization's limits and this month's spend (decisions §15). */
  describeLimits(): Promise<Data<'/v1/org/limits'>>;
  /** The request rate the last answer (success or error) reported; `undefined` before any authenticated answer. */
  readonly rateLimit: RateLimitState | undefined;
  /** `POST /v1/campaigns/create`; retried safely with one `Idempotency-Key`. */
  createCampaign(body: Body<'/v1/campaigns/create'>, options?: IdempotentCallOptions): Promise<Data<'/v1/campaigns/create'>>;
  /** `POST /v1/uploads/create`: a presigned URL to PUT a large account list to; retried safely with one `Idempotency-Key`. */
  createUpload(body?: Body<'/v1/uploads/create'>, options?: IdempotentCallOptions): Promise<Data<'/v1/uploads/create'>>;
  /**
   * Uploads an account list too large for a request body (decisions §14):
   * `createUpload`, then a PUT of `content` (the `accountIdsFile` format) to
   * its URL. Pass the result to `createCampaign` as `accountIdsUploadId`.
   * @returns the upload ID.
   * @throws CampaignEnrichmentError `upload_failed` when the PUT is refused (`status` is S3's), `network_error` without an answer.
   */
  uploadAccountIds(content: string | Uint8Array | Blob, options?: { contentType?: 'text/csv' | 'text/plain' }): Promise<string>;
  /** `POST /v1/campaigns/update`; retried safely with one `Idempotency-Key`. */
  updateCampaign(body: Body<'/v1/campaigns/update'>, options?: IdempotentCallOptions): Promise<Data<'/v1/campaigns/update'>>;
  /** `POST /v1/campaigns/get`. */
  getCampaign(campaignId: string): Promise<Data<'/v1/campaigns/get'>>;
  /** `POST /v1/campaigns/list`. */
  listCampaigns(body?: Body<'/v1/campaigns/list'>): Promise<Data<'/v1/campaigns/list'>>;
  /** `POST /v1/campaigns/enrich`; retried safely with one `Idempotency-Key` (never charged twice). */
  enrichCampaign(campaignId: string, options?: IdempotentCallOptions): Promise<Data<'/v1/campaigns/enrich'>>;
  /** `POST /v1/campaigns/export`. */
  exportCampaign(body: Body<'/v1/campaigns/export'>): Promise<Data<'/v1/campaigns/export'>>;
  /**
   * Polls a launched campaign until it is `enriched` and returns it.
   * @throws CampaignEnrichmentError `enrichment_failed` (back in `draft` with `lastEnrichment`, in `details`),
   *   `not_enriching` (not launched, or expired), `timeout`, or any API error of get.
   */
  waitForEnrichment(campaignId: string, options?: WaitOptions): Promise<EnrichedCampaign>;
}

/** Builds a client; see the module documentation. */
export function createCampaignEnrichmentClient(options: ClientOptions): CampaignEnrichmentClient {
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const http = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: fetchImpl, headers: { authorization: `Bearer ${options.apiKey}` } });
  const maxRetries = options.maxRetries ?? 3;
  const initialBackoffMs = options.initialBackoffMs ?? 500;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60;
  let lastRateLimit: RateLimitState | undefined;

  /** One attempt: the unwrapped `data`, or the failure as a CampaignEnrichmentError. */
  async function attempt<P extends keyof paths>(path: P, body: unknown, idempotencyKey: string | undefined): Promise<Data<P>> {
    let outcome: { data?: unknown; error?: unknown; response: Response };
    try {
      const post = http.POST as unknown as (path: string, init: { body: unknown; headers?: Record<string, string> }) => Promise<typeof outcome>;
      outcome = await post(path, { body: body ?? {}, ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}) });
    } catch (cause) {
      throw new CampaignEnrichmentError({ code: 'network_error', status: 0, message: `No answer from ${path}: ${(cause as Error)?.message ?? String(cause)}`, cause });
    }
    const { response } = outcome;
    lastRateLimit = rateLimitOf(response) ?? lastRateLimit;
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const envelope = (response.ok ? outcome.data : outcome.error) as { data?: unknown; error?: { code?: string; message?: string; details?: Record<string, unknown> } | null } | undefined;
    if (response.ok && envelope && 'data' in envelope && envelope.error === null) return envelope.data as Data<P>;
    const error = envelope?.error;
    throw new CampaignEnrichmentError({
      code: (error?.code as ApiErrorCode | undefined) ?? 'unexpected_response',
      message: error?.message ?? `Unexpected ${response.status} answer from ${path}`,
      status: response.status,
      ...(error?.details ? { details: error.details } : {}),
      ...(requestId ? { requestId } : {}),
      ...(retryAfterOf(response) !== undefined ? { retryAfterSeconds: retryAfterOf(response) } : {}),
    });
  }

  /** A logical call: attempts until success, a final error, or the retries run out; one Idempotency-Key for all of them. */
  async function call<P extends keyof paths>(path: P, body: unknown, idempotent: boolean, idempotencyKey?: string): Promise<Data<P>> {
    const key = idempotent ? (idempotencyKey ?? globalThis.crypto.randomUUID()) : undefined;
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

  const client: CampaignEnrichmentClient = {
    describeOrganization: () => call('/v1/org/describe', {}, false),
    describeLimits: () => call('/v1/org/limits', {}, false),
    get rateLimit() {
      return lastRateLimit;
    },
    createCampaign: (body, callOptions) => call('/v1/campaigns/create', body, true, callOptions?.idempotencyKey),
    createUpload: (body, callOptions) => call('/v1/uploads/create', body ?? {}, true, callOptions?.idempotencyKey),
    async uploadAccountIds(content, uploadOptions = {}) {
      const upload = await client.createUpload(uploadOptions.contentType ? { contentType: uploadOptions.contentType } : {});
      const headers: Record<string, string> = uploadOptions.contentType ? { 'content-type': uploadOptions.contentType } : {};
      let response: Response;
      try {
        response = await fetchImpl(new Request(upload.url, { method: 'PUT', headers, body: content as RequestInit['body'] }));
      } catch (cause) {
        throw new CampaignEnrichmentError({ code: 'network_error', status: 0, message: `No answer from the upload URL: ${(cause as Error)?.message ?? String(cause)}`, cause });
      }
      if (!response.ok) {
        throw new CampaignEnrichmentError({ code: 'upload_failed', status: response.status, message: `The upload URL refused the file (${response.status}): ${(await response.text()).slice(0, 500)}` });
      }
      return upload.uploadId;
    },
    updateCampaign: (body, callOptions) => call('/v1/campaigns/update', body, true, callOptions?.idempotencyKey),
    getCampaign: (campaignId) => call('/v1/campaigns/get', { campaignId }, false),
    listCampaigns: (body) => call('/v1/campaigns/list', body ?? {}, false),
    enrichCampaign: (campaignId, callOptions) => call('/v1/campaigns/enrich', { campaignId }, true, callOptions?.idempotencyKey),
    exportCampaign: (body) => call('/v1/campaigns/export', body, false),
    async waitForEnrichment(campaignId, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutSeconds ?? 600) * 1000;
      const intervalMs = (waitOptions.intervalSeconds ?? 2) * 1000;
      for (;;) {
        const campaign = await client.getCampaign(campaignId);
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
          throw new CampaignEnrichmentError({ code: 'not_enriching', status: 0, message: `Campaign ${campaignId} is ${campaign.status}, not enriching.`, details: { status: campaign.status } });
        }
        if (Date.now() + intervalMs > deadline) {
          throw new CampaignEnrichmentError({ code: 'timeout', status: 0, message: `Campaign ${campaignId} was still enriching after ${waitOptions.timeoutSeconds ?? 600} s.` });
        }
        await sleep(intervalMs);
      }
    },
  };
  return client;
}
