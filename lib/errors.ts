/**
 * The API's error family (docs/errors.md).
 *
 * Every failure a caller can see is an {@link ApiError}: a stable `code`, the
 * HTTP `statusCode`, a human `message` and optional `details`. One place,
 * `errorEnvelope` in `lib/http/pipeline.ts`, turns them into the `{ data: null, error }`
 * envelope; anything that is not an ApiError becomes `internal_error`.
 */

/** Campaign lifecycle states (docs/README.md#a-campaigns-life-in-one-paragraph). */
export const CAMPAIGN_STATUSES = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'] as const;
/** A campaign lifecycle state. */
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * Every error code and its HTTP status: the one list of codes, and the one owner of each status. What the published
 * documents say of a code (its `details` schema, meaning, example, when and what to do) is its declaration in
 * lib/contract/errors.ts, which must have exactly one per code here (docs/errors.md, generated from both); the class
 * below that answers it builds its message, `details` and headers. Adding a code: its status here, its class below,
 * its declaration there (docs/architecture.md "Add an error code").
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_api_key: 401,
  revoked_api_key: 401,
  insufficient_credits: 402,
  not_found: 404,
  method_not_allowed: 405,
  campaign_not_enrichable: 409,
  campaign_not_editable: 409,
  campaign_not_cancelable: 409,
  enrichment_pending: 409,
  results_not_ready: 409,
  idempotency_key_in_use: 409,
  results_expired: 410,
  no_eligible_accounts: 422,
  idempotency_key_reused: 422,
  concurrency_limit_exceeded: 429,
  webhook_endpoint_limit_reached: 409,
  webhook_endpoint_disabled: 409,
  rate_limited: 429,
  spend_limit_exceeded: 402,
  key_spend_limit_exceeded: 402,
  suppression_locked: 409,
  insufficient_scope: 403,
  expired_api_key: 401,
  internal_error: 500,
} as const satisfies Record<string, number>;

/** A stable error code (docs/errors.md): a key of {@link ERROR_STATUS}. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The `error` member of a failure envelope. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Base of every error a caller may see.
 *
 * @example
 * throw new NotFoundError('campaign', 'camp_…');
 */
export class ApiError extends Error {
  /** The class name, spelled out: the bundles are minified without esbuild's keepNames (infra/constructs/service-function.ts). */
  override name = 'ApiError';
  /** HTTP status of {@link code}. */
  readonly statusCode: number;
  /**
   * Response headers that belong to this error (lower-case names), e.g.
   * `retry-after` (seconds) on `enrichment_pending` or `allow` on
   * `method_not_allowed` (docs/errors.md). Never part of the body.
   */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = ERROR_STATUS[code];
    this.headers = headers;
  }

  /** The envelope's `error` object. */
  toJSON(): ErrorBody {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** 400 `invalid_request`: `issues` are one line per problem, each naming the field path. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
  constructor(message: string, issues?: string[]) {
    super('invalid_request', message, issues && issues.length > 0 ? { issues } : undefined);
  }
}

/** Why a request's key was refused with `invalid_api_key`: each case has its own message, saying what to send. */
export type InvalidApiKeyReason = 'missing_header' | 'not_bearer' | 'unknown_key';

const INVALID_API_KEY_MESSAGES: Record<InvalidApiKeyReason, string> = {
  missing_header: 'The Authorization header is missing: send "Authorization: Bearer <API key>".',
  not_bearer: 'The Authorization header is not "Bearer <API key>": send the word Bearer, one space, then the key (it starts with cek_).',
  unknown_key:
    'The API key is not recognized: send a key issued to your organization, whole (cek_ and 40 more characters), as "Authorization: Bearer <API key>".',
};

/** 401 `invalid_api_key`: missing header, not `Bearer <key>`, or unknown key (docs/authentication.md); the code is the same, the message tells the cases apart. */
export class InvalidApiKeyError extends ApiError {
  override name = 'InvalidApiKeyError';
  constructor(readonly reason: InvalidApiKeyReason = 'unknown_key') {
    super('invalid_api_key', INVALID_API_KEY_MESSAGES[reason]);
  }
}

/** 401 `revoked_api_key` (docs/authentication.md). */
export class RevokedApiKeyError extends ApiError {
  override name = 'RevokedApiKeyError';
  constructor() {
    super('revoked_api_key', 'The API key has been revoked.');
  }
}

/** 401 `expired_api_key`: the key's `expiresAt` has passed, or the 24 h a rotated secret keeps working (docs/authentication.md). */
export class ExpiredApiKeyError extends ApiError {
  override name = 'ExpiredApiKeyError';
  constructor() {
    super('expired_api_key', 'The API key has expired: use a current key (an organization key with keys:manage can create or rotate one).');
  }
}

/** 403 `insufficient_scope`: the key lacks the scope the operation needs (`details.required`; docs/authentication.md "Scopes"). Nothing was done. */
export class InsufficientScopeError extends ApiError {
  override name = 'InsufficientScopeError';
  constructor(required: string) {
    super('insufficient_scope', `This API key lacks the scope ${required}: use a key that holds it (keys/create grants scopes).`, {
      required,
    });
  }
}

/** 402 `insufficient_credits`; all figures in credits. */
export class InsufficientCreditsError extends ApiError {
  override name = 'InsufficientCreditsError';
  constructor(figures: { available: number; required: number }) {
    const shortfall = Math.max(0, figures.required - figures.available);
    super('insufficient_credits', `This launch needs ${figures.required} credits; ${figures.available} are available.`, {
      available: figures.available,
      required: figures.required,
      shortfall,
    });
  }
}

/** 404 `not_found`; also answered for another organization's resources. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  /** @param hint - a sentence appended to the message (what to send instead); details stay `{ resource, id }`. */
  constructor(resource: string, id: string, hint?: string) {
    super('not_found', `No ${resource} with id "${id}".${hint ? ` ${hint}` : ''}`, { resource, id });
  }
}

/** 409 `campaign_not_enrichable`: not an API-created `draft` (docs/launch.md). */
export class CampaignNotEnrichableError extends ApiError {
  override name = 'CampaignNotEnrichableError';
  constructor(status: CampaignStatus, reason?: string) {
    super('campaign_not_enrichable', reason ?? `A campaign in status "${status}" cannot be enriched.`, { status });
  }
}

/** 409 `campaign_not_editable`: only API-created drafts can be updated (docs/campaigns.md). */
export class CampaignNotEditableError extends ApiError {
  override name = 'CampaignNotEditableError';
  constructor(status: CampaignStatus, reason?: string) {
    super('campaign_not_editable', reason ?? `A campaign in status "${status}" cannot be updated.`, { status });
  }
}

/**
 * 409 `campaign_not_cancelable`: the campaign is not `enriching` (it finished
 * first, never launched, or another surface created it; docs/launch.md#canceling).
 */
export class CampaignNotCancelableError extends ApiError {
  override name = 'CampaignNotCancelableError';
  constructor(status: CampaignStatus, reason?: string) {
    super(
      'campaign_not_cancelable',
      reason ?? `A campaign in status "${status}" cannot be canceled: only an enriching campaign can be canceled.`,
      { status },
    );
  }
}

/**
 * 409 `enrichment_pending`: another enrich call is evaluating this campaign's
 * launch (docs/errors.md), with `Retry-After` until its launch lock expires (docs/idempotency.md).
 */
export class EnrichmentPendingError extends ApiError {
  override name = 'EnrichmentPendingError';
  /** @param retryAfterSeconds - seconds until the launch lock expires (at least 1). */
  constructor(retryAfterSeconds = 1) {
    super('enrichment_pending', 'Another enrich call for this campaign is evaluating its launch; retry shortly.', undefined, {
      'retry-after': String(retryAfterHeader(retryAfterSeconds)),
    });
  }
}

/** 422 `no_eligible_accounts`: `requested` distinct accounts, none eligible. */
export class NoEligibleAccountsError extends ApiError {
  override name = 'NoEligibleAccountsError';
  constructor(requested: number, message = 'No account of this campaign is eligible for enrichment.') {
    super('no_eligible_accounts', message, { requested });
  }
}

/** 429 `concurrency_limit_exceeded`: figures in accounts. */
export class ConcurrencyLimitExceededError extends ApiError {
  override name = 'ConcurrencyLimitExceededError';
  constructor(figures: { limit: number; inFlight: number; requested: number }) {
    super(
      'concurrency_limit_exceeded',
      `This launch would enrich ${figures.requested} accounts; ${figures.inFlight} of the organization's ${figures.limit} are already enriching.`,
      { ...figures },
    );
  }
}

/** 409 `results_not_ready`: the campaign is not `enriched` yet (docs/errors.md). */
export class ResultsNotReadyError extends ApiError {
  override name = 'ResultsNotReadyError';
  constructor(message = 'The campaign has no results yet; poll get until its status is "enriched".', details?: Record<string, unknown>) {
    super('results_not_ready', message, details);
  }
}

/** 410 `results_expired`: the result access period has ended (docs/errors.md). */
export class ResultsExpiredError extends ApiError {
  override name = 'ResultsExpiredError';
  constructor() {
    super('results_expired', 'The result access period of this campaign has ended.');
  }
}

/** 422 `idempotency_key_reused`: the key was first used with another request body (docs/idempotency.md). */
export class IdempotencyKeyReusedError extends ApiError {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
  }
}

/** 409 `idempotency_key_in_use`: the first request with this key is still running; `Retry-After: 1` (docs/idempotency.md). */
export class IdempotencyKeyInUseError extends ApiError {
  override name = 'IdempotencyKeyInUseError';
  constructor() {
    super('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.', undefined, {
      'retry-after': '1',
    });
  }
}

/** 405 `method_not_allowed`: a known operation path called with another method; `Allow` names the methods (docs/errors.md). */
export class MethodNotAllowedError extends ApiError {
  override name = 'MethodNotAllowedError';
  constructor(method: string, path: string, allow: readonly string[] = ['POST']) {
    super(
      'method_not_allowed',
      `${method} is not allowed on ${path}; use ${allow.join(', ')}.`,
      { allow: [...allow] },
      { allow: allow.join(', ') },
    );
  }
}

/** A `Retry-After` value: whole seconds, at least 1 (docs/idempotency.md). */
export function retryAfterHeader(seconds: number): number {
  return Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 1;
}

/** 409 `webhook_endpoint_limit_reached`: the organization already has `limit` webhook endpoints (docs/webhooks.md). */
export class WebhookEndpointLimitReachedError extends ApiError {
  override name = 'WebhookEndpointLimitReachedError';
  constructor(limit: number) {
    super('webhook_endpoint_limit_reached', `An organization can have at most ${limit} webhook endpoints; delete one first.`, { limit });
  }
}

/** 409 `webhook_endpoint_disabled`: the endpoint answered 410 and was disabled; nothing is sent to it (docs/webhooks.md). */
export class WebhookEndpointDisabledError extends ApiError {
  override name = 'WebhookEndpointDisabledError';
  constructor(endpointId: string) {
    super(
      'webhook_endpoint_disabled',
      `Webhook endpoint "${endpointId}" is disabled (it answered 410 Gone); create a new endpoint to receive events again.`,
      { id: endpointId },
    );
  }
}

/** 409 `suppression_locked`: the suppression was made by an erasure and cannot be deleted (docs/privacy.md). */
export class SuppressionLockedError extends ApiError {
  override name = 'SuppressionLockedError';
  constructor(id: string) {
    super('suppression_locked', `Suppression "${id}" was made by an erasure and cannot be deleted: the person stays suppressed.`, { id });
  }
}

/**
 * What a rate limit counts (docs/limits.md): authenticated requests, exports, uploads, or the account IDs a test
 * twin's creates store per day (docs/test-mode.md, "Limits of test mode").
 */
export const RATE_LIMIT_POLICIES = ['requests', 'exports', 'uploads', 'testAccountIds'] as const;

/** One of {@link RATE_LIMIT_POLICIES}. */
export type RateLimitPolicy = (typeof RATE_LIMIT_POLICIES)[number];

/**
 * 429 `rate_limited`: the organization used its `limit` of `policy` in the
 * current window of `windowSeconds`; `Retry-After` and `retryAfterSeconds`
 * tell when the window resets (docs/limits.md).
 */
export class RateLimitedError extends ApiError {
  override name = 'RateLimitedError';
  constructor(figures: { policy: RateLimitPolicy; limit: number; windowSeconds: number; retryAfterSeconds: number }) {
    const retryAfterSeconds = retryAfterHeader(figures.retryAfterSeconds);
    const what = figures.policy === 'testAccountIds' ? 'test account IDs' : figures.policy;
    super(
      'rate_limited',
      `The organization has used its ${figures.limit} ${what} per ${figures.windowSeconds} s; retry in ${retryAfterSeconds} s.`,
      { policy: figures.policy, limit: figures.limit, windowSeconds: figures.windowSeconds, retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}

/** 402 `spend_limit_exceeded`: the launch would take this UTC month's spend over the organization's monthly limit; figures in credits (docs/limits.md). */
export class SpendLimitExceededError extends ApiError {
  override name = 'SpendLimitExceededError';
  constructor(figures: { limit: number; spent: number; required: number }) {
    super(
      'spend_limit_exceeded',
      `This launch needs ${figures.required} credits; ${figures.spent} of the monthly spend limit of ${figures.limit} are spent this month.`,
      {
        limit: figures.limit,
        spent: figures.spent,
        required: figures.required,
      },
    );
  }
}

/** The periods of a key's credit limits: `launch` (`maxCreditsPerLaunch`), `month` (`monthlyCredits`; docs/authentication.md#per-key-credit-limits). */
export const KEY_SPEND_PERIODS = ['launch', 'month'] as const;

/**
 * 402 `key_spend_limit_exceeded`: the launch would charge more than the request's API key may
 * (docs/authentication.md#per-key-credit-limits); figures in credits. `spent`: the key's net charges this UTC month
 * (`period: "month"`), `null` for a launch's own cap (`period: "launch"`).
 */
export class KeySpendLimitExceededError extends ApiError {
  override name = 'KeySpendLimitExceededError';
  constructor(figures: { limit: number; required: number; spent: number | null; period: (typeof KEY_SPEND_PERIODS)[number] }) {
    super(
      'key_spend_limit_exceeded',
      figures.period === 'launch'
        ? `This launch needs ${figures.required} credits; this API key may charge at most ${figures.limit} per launch.`
        : `This launch needs ${figures.required} credits; ${figures.spent} of this API key's monthly limit of ${figures.limit} are spent this month.`,
      { limit: figures.limit, required: figures.required, spent: figures.spent, period: figures.period },
    );
  }
}

/** 500 `internal_error`; its message is always `Internal error.` and its cause is only logged. */
export class InternalError extends ApiError {
  override name = 'InternalError';
  constructor() {
    super('internal_error', 'Internal error.');
  }
}
