/**
 * The error catalogue (docs/errors.md): one declaration per error code of what the published contract says about
 * it: its `details` schema, its meaning, a real example, when the API answers it and what the caller should do.
 *
 * What a function needs at run time (the code, its HTTP status, the class that builds its message, `details` and
 * headers) is declared beside it in `lib/errors.ts`, whose `ERROR_STATUS` is the one owner of each status; this
 * catalogue adds what only the documents read, so that no Lambda bundle carries it (the handlers import
 * `lib/errors.ts` and never this module). Its type has exactly one entry per code of `ERROR_STATUS`: a code added
 * there without its declaration here, or a declaration of a code that does not exist, fails the type check.
 *
 * From it derive: the OpenAPI document's error components and each operation's responses (lib/contract/openapi.ts,
 * `npm run openapi:write`), and docs/errors.md's table and its section of each code (scripts/docs-figures.ts, checked
 * by test/docs-generated.test.ts).
 */
import * as z from 'zod';
import {
  ApiError,
  CAMPAIGN_STATUSES,
  CampaignNotCancelableError,
  CampaignNotEditableError,
  CampaignNotEnrichableError,
  ConcurrencyLimitExceededError,
  ERROR_STATUS,
  EnrichmentPendingError,
  ExpiredApiKeyError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InsufficientCreditsError,
  InsufficientScopeError,
  InternalError,
  InvalidApiKeyError,
  InvalidRequestError,
  KEY_SPEND_PERIODS,
  KeySpendLimitExceededError,
  MethodNotAllowedError,
  NoEligibleAccountsError,
  NotFoundError,
  RATE_LIMIT_POLICIES,
  RateLimitedError,
  ResultsExpiredError,
  ResultsNotReadyError,
  RevokedApiKeyError,
  SpendLimitExceededError,
  SuppressionLockedError,
  WebhookEndpointDisabledError,
  WebhookEndpointLimitReachedError,
  type ErrorCode,
} from '../errors';
import { SETTINGS } from '../config';
import { SCOPES } from '../http/scopes';
import { MAX_WEBHOOK_ENDPOINTS } from '../webhooks/schema';

/** What the contract says about one error code (its status is `ERROR_STATUS[code]`, lib/errors.ts). */
export interface ErrorDeclaration {
  /**
   * One sentence (Markdown): what the code means. The OpenAPI component's and responses' description, and the
   * first line of the code's section in docs/errors.md.
   */
  meaning: string;
  /** The typed `details` (a strict object); absent: the code has none. `required: false`: it may be absent. */
  details?: { schema: z.ZodObject; required: boolean };
  /**
   * A real error of this code, built by its class as the API answers it: the document's example of every
   * operation that lists the code (`invalid_request` is shown per operation with its own schema's answer instead),
   * and the example of docs/errors.md.
   */
  example: ApiError;
  /** docs/errors.md: when the API answers it, and what `details` holds (Markdown paragraphs). */
  when: string;
  /** docs/errors.md: what the caller does about it (Markdown). */
  whatToDo: string;
}

const nonNegative = () => z.int().min(0);

/** Every error code's declaration, in the order of `ERROR_STATUS` (docs/errors.md sorts by status, then this order). */
export const ERRORS: { readonly [C in ErrorCode]: ErrorDeclaration } = {
  invalid_request: {
    meaning: 'Malformed or invalid body, header or cursor; `details.issues` names each field.',
    details: {
      schema: z.strictObject({
        issues: z
          .array(z.string())
          .min(1)
          .meta({ description: 'One line per problem, starting with the field path (or the header name).' }),
      }),
      // Absent only when the body could not be parsed at all (docs/errors.md).
      required: false,
    },
    example: new InvalidRequestError('The request body is invalid.', ['campaignId: Invalid input: expected string, received undefined']),
    when: `The request cannot be served as sent. \`details.issues\` is a list of lines,
one per problem, each starting with the field path and saying what is wrong
(\`filters.status: Invalid option: expected one of "draft"|"enriching"|…\`).
It is absent only when the body could not be parsed at all.

When:

- a field is missing, of the wrong type or out of range, or the body has a
  property the operation does not take (bodies are strict);
- the body is not valid JSON, urlencoded or multipart; a body without a
  \`Content-Type\`, or with another type than \`application/json\`,
  \`application/x-www-form-urlencoded\` or \`multipart/form-data\`; JSON sent
  with a form content type (the message says so);
- a \`Content-Type\` whose \`charset\` parameter is anything but \`utf-8\`
  (\`application/json; charset=iso-8859-1\`): bodies are read as UTF-8 only,
  so such a body is refused rather than stored with its accented letters
  replaced (issue \`content-type: charset iso-8859-1 is not supported; use
  utf-8\`). Encode the body as UTF-8 and send \`charset=utf-8\` or no \`charset\`;
- the body is too large: over 5 MiB as JSON or urlencoded, over 4 MiB as
  multipart; an urlencoded body of more than 1,000 fields; JSON nested
  deeper than 64 levels ([Limits](limits.md));
- \`/v1/org/describe\`, which takes no body, with a body other than an empty
  one or \`{}\`;
- a \`cursor\` that was altered, was issued to another organization, or is
  sent with other filters or another \`limit\` than the page that produced it
  ([Pagination](pagination.md));
- an \`Idempotency-Key\` header that is empty, longer than 255 characters or
  holds characters other than visible ASCII ([Idempotency](idempotency.md));
- campaign create: both \`accountIds\` and \`accountIdsFile\`; an
  \`accountIdsFile\` that is not a file part or text; an \`accountIdsUploadId\`
  that is unknown, another organization's, expired or not uploaded yet; a
  file over the limits (the issue names the line);
- campaign update with neither \`name\` nor \`excludeEnrichedWithinDays\`;
- a webhook URL that is not \`https\`, or whose host resolves to a loopback,
  private, link-local or metadata address.`,
    whatToDo: 'fix what `details.issues` names. Sending the same request again gets the same answer.',
  },
  invalid_api_key: {
    meaning: 'Missing, malformed or unrecognized API key.',
    example: new InvalidApiKeyError(),
    when: `No \`Authorization\` header, a header that is not \`Bearer <key>\`, or a key that
is not recognized. The message says which.`,
    whatToDo: 'send `Authorization: Bearer <API key>` with a whole key of your organization.',
  },
  revoked_api_key: {
    meaning: 'The API key has been revoked.',
    example: new RevokedApiKeyError(),
    when: 'The key was revoked.',
    whatToDo: `use another key of the organization (one with \`keys:manage\` can create one, see
[Authentication](authentication.md); or ask the operator for a new one).`,
  },
  insufficient_credits: {
    meaning: 'The smb balance is below the launch charge.',
    details: {
      schema: z
        .strictObject({ available: nonNegative(), required: nonNegative(), shortfall: nonNegative() })
        .meta({ description: 'Figures in credits.' }),
      required: true,
    },
    example: new InsufficientCreditsError({ available: 120, required: 262 }),
    when: `Enrich: your organization's balance does not cover the launch. \`details\`:
\`available\` (the balance), \`required\` (eligible accounts × credits per
account), \`shortfall\` (\`required\` − \`available\`). The campaign stays
\`draft\`, nothing is charged, and the evaluation's counts are kept on it
(\`accounts.eligible\`, \`accounts.excluded\`). Quote reports the same refusal
as its \`outcome\` without changing anything.`,
    whatToDo: 'add credits (the operator adjusts balances), or launch a smaller list.',
  },
  not_found: {
    meaning:
      'No such resource (campaign, API key, webhook endpoint, message or delivery, suppression, erasure) in the authenticated organization, or no such route.',
    details: {
      schema: z.strictObject({
        resource: z.string().meta({
          description:
            '`campaign`, `api_key`, `webhook endpoint`, `webhook message`, `webhook delivery`, `suppression`, `erasure`, or `route` for an unknown path.',
        }),
        id: z.string(),
      }),
      required: true,
    },
    example: new NotFoundError('campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz'),
    when: `\`details.resource\` says what was not found and \`details.id\` the ID you sent:

| \`resource\` | when |
|---|---|
| \`campaign\` | get, update, enrich, quote, accounts, export, cancel: no campaign of your organization has this ID (another organization's campaign is not found either) |
| \`webhook endpoint\` | webhooks delete, rotate-secret, test, redeliver: no such endpoint of your organization |
| \`webhook message\`, \`webhook delivery\` | webhooks/redeliver: no such message or delivery attempt |
| \`api_key\` | keys revoke, rotate: no key of your organization has this ID |
| \`suppression\` | privacy suppressions/delete: no such suppression of your organization |
| \`erasure\` | privacy erasures/get: no such erasure of your organization |
| \`route\` | no operation at this path; \`id\` is the method and the path (\`GET /v1/campaign/get\`); the message names the nearest operation path |`,
    whatToDo: "check the ID (or the path) and the key's organization.",
  },
  method_not_allowed: {
    meaning: 'The path is an operation, which takes POST only (header `Allow: POST`).',
    details: { schema: z.strictObject({ allow: z.array(z.literal('POST')) }), required: true },
    example: new MethodNotAllowedError('GET', '/v1/campaigns/get'),
    when: `A known operation path was called with another method than \`POST\`.
\`details.allow\` is \`["POST"]\`, and the header \`Allow: POST\` says the same.`,
    whatToDo: 'send a `POST`.',
  },
  campaign_not_enrichable: {
    meaning: 'The campaign is not an API-created draft.',
    details: { schema: z.strictObject({ status: z.enum(CAMPAIGN_STATUSES) }), required: true },
    example: new CampaignNotEnrichableError('enriched'),
    when: `Enrich or quote: only a campaign created through the API and in \`draft\` can
be launched. \`details.status\` is the campaign's status. An \`enriching\`
campaign is not refused: enrich answers it as it is, with no new charge.
Campaigns created by the interactive interface or a data cube can be read
but not launched here.`,
    whatToDo: 'read the campaign (get); an `enriched` one needs no launch, an `expired` one cannot be launched again.',
  },
  campaign_not_editable: {
    meaning: 'The campaign is not an API-created draft.',
    details: { schema: z.strictObject({ status: z.enum(CAMPAIGN_STATUSES) }), required: true },
    example: new CampaignNotEditableError('enriching'),
    when: `Update: only a campaign created through the API and in \`draft\` can be
changed. \`details.status\` is its status.`,
    whatToDo: 'create a new campaign with the settings you want.',
  },
  campaign_not_cancelable: {
    meaning: 'The campaign is not enriching: it finished first, never launched, or another surface created it.',
    details: { schema: z.strictObject({ status: z.enum(CAMPAIGN_STATUSES) }), required: true },
    example: new CampaignNotCancelableError('enriched'),
    when: `Cancel: only an \`enriching\` campaign created through the API can be canceled.
\`details.status\` is its status: it finished first (\`enriched\`), was never
launched (\`draft\`), or was created by another surface. Canceling again a
campaign you just canceled is not refused: it answers the campaign as it is.`,
    whatToDo: 'read the campaign; nothing is running.',
  },
  enrichment_pending: {
    meaning: 'Another enrich call is evaluating this campaign right now; retry after `Retry-After` seconds.',
    example: new EnrichmentPendingError(42),
    when: `Enrich: another enrich call for the same campaign is evaluating its launch
at this moment (the campaign is still \`draft\`). The answer carries
\`Retry-After\` (seconds: the lock's remaining time, at most 2, since the
launch holding it answers within seconds; see [launch](launch.md)). A launch
whose caller died releases the campaign after at most 60 seconds.`,
    whatToDo: 'wait `Retry-After` seconds and call again, ideally with the same `Idempotency-Key`.',
  },
  results_not_ready: {
    meaning: 'The campaign is not enriched yet.',
    details: {
      schema: z.strictObject({
        attemptId: z.string().meta({ description: 'The current attempt, when a long poll of results outlived the attempt it read.' }),
      }),
      // Present only when a results long poll's attempt ended while it waited (docs/results.md).
      required: false,
    },
    example: new ResultsNotReadyError(),
    when: `Export: the campaign is not \`enriched\` yet. Accounts: the campaign has never
been evaluated (no launch was attempted).

Results ([results as they arrive](results.md)): the campaign is a draft
(never launched, or its last attempt failed or was canceled: that attempt's
results went with it), or the reader's position belongs to another attempt
(its \`attemptId\` is not the current one, or its \`afterSeq\` is beyond the
current attempt's accounts; the message names the current attempt), or a long poll's attempt ended while it
waited: \`details.attemptId\` names the current attempt.
A campaign enriched before results were sequenced answers this too: export it.`,
    whatToDo: `poll get until the status is \`enriched\` (or wait for the \`campaign.enriched\`
[webhook](webhooks.md)); for accounts, launch first. Results: discard what you read of the old attempt
and read the current one from \`afterSeq\` 0; a draft: launch it first.`,
  },
  idempotency_key_in_use: {
    meaning: 'A request with this Idempotency-Key is still running; retry after `Retry-After` (1) second.',
    example: new IdempotencyKeyInUseError(),
    when: 'A request with the same `Idempotency-Key` is still running. The answer carries `Retry-After: 1`.',
    whatToDo: "retry after a second with the same key and body; you will get the first request's answer once it is done.",
  },
  results_expired: {
    meaning: 'The result access period has ended.',
    example: new ResultsExpiredError(),
    when: `Export, results or accounts: the campaign's result access period has ended (30 days
after completion, [Result lifetimes](lifetimes.md)); the campaign reads
\`expired\`.`,
    whatToDo: 'nothing can bring the results back; launch a new campaign with the same accounts to enrich them again.',
  },
  no_eligible_accounts: {
    meaning: 'No account is eligible.',
    details: {
      schema: z.strictObject({ requested: nonNegative().meta({ description: 'Distinct account IDs submitted.' }) }),
      required: true,
    },
    example: new NoEligibleAccountsError(300),
    when: `Enrich: after the evaluation, no account of the campaign is eligible (every
one is invalid, recently enriched or in your CRM targets).
\`details.requested\` is the number of distinct accounts submitted; the
campaign's \`accounts.excluded\` tells why each bucket was skipped, and
\`/v1/campaigns/accounts\` tells it per account. Nothing is charged. Export
answers it too for an \`enriched\` campaign with no account to export.`,
    whatToDo: 'submit other accounts, or lower `excludeEnrichedWithinDays`.',
  },
  idempotency_key_reused: {
    meaning: 'The Idempotency-Key was first used with a different request body.',
    example: new IdempotencyKeyReusedError(),
    when: `The \`Idempotency-Key\` was used before, within 24 hours, with a different
request (another body, after validation).`,
    whatToDo: 'use a new key for a new request; reuse a key only to retry the very same request.',
  },
  concurrency_limit_exceeded: {
    meaning: "The launch would exceed the organization's ceiling on accounts enriching at once.",
    details: {
      schema: z
        .strictObject({ limit: nonNegative(), inFlight: nonNegative(), requested: nonNegative() })
        .meta({ description: 'Figures in accounts.' }),
      required: true,
    },
    example: new ConcurrencyLimitExceededError({ limit: 5000, inFlight: 4900, requested: 262 }),
    when: `Enrich: the launch would take the accounts enriching at once across your
organization over its ceiling. \`details\`: \`limit\` (the ceiling,
\`enrichment.maxEnrichingAccounts\` of describe), \`inFlight\` (accounts
enriching now, \`enrichment.enrichingAccounts\`, including campaigns launched
from the interactive interface), \`requested\` (this launch's eligible
accounts). Nothing is charged; the campaign stays \`draft\`, with the
evaluation's counts.`,
    whatToDo: `wait for running enrichments to finish (describe shows the
capacity left: \`maxEnrichingAccounts\` − \`enrichingAccounts\`), or split the
list into smaller campaigns.`,
  },
  webhook_endpoint_limit_reached: {
    meaning: `The organization already has the most webhook endpoints allowed (${MAX_WEBHOOK_ENDPOINTS}).`,
    details: {
      schema: z.strictObject({ limit: nonNegative().meta({ description: 'Endpoints an organization may have.' }) }),
      required: true,
    },
    example: new WebhookEndpointLimitReachedError(MAX_WEBHOOK_ENDPOINTS),
    when: `Webhooks create: the organization already has \`details.limit\` endpoints (${MAX_WEBHOOK_ENDPOINTS}).`,
    whatToDo: 'delete an endpoint you no longer use.',
  },
  webhook_endpoint_disabled: {
    meaning: 'The webhook endpoint answered 410 Gone and was disabled; nothing is sent to it any more.',
    details: {
      schema: z.strictObject({ id: z.string().meta({ description: 'The disabled endpoint (`whe_…`).' }) }),
      required: true,
    },
    example: new WebhookEndpointDisabledError('whe_4fJ8kQ2mN7pR9sT3vW5xY'),
    when: `Webhooks redeliver: the endpoint \`details.id\` answered \`410 Gone\` to a
delivery and was disabled; nothing is sent to it any more.`,
    whatToDo: 'create the endpoint again (a new ID and secret) and redeliver to that one, or fix the receiver first.',
  },
  rate_limited: {
    meaning:
      'The organization (all its keys together) used its limit for this window: requests per window, or exports or uploads per hour (`details.policy`); retry after `Retry-After` seconds. `POST /v1/org/limits` tells the limits.',
    details: {
      schema: z.strictObject({
        policy: z.enum(RATE_LIMIT_POLICIES).meta({
          description:
            "What was counted: authenticated requests, exports, uploads, or the account IDs a test twin's creates stored today (test mode only).",
        }),
        limit: z.int().min(1).meta({ description: 'Uses allowed per window.' }),
        windowSeconds: z.int().min(1).meta({ description: 'Length of the fixed window, in seconds.' }),
        retryAfterSeconds: z.int().min(1).meta({ description: 'Seconds until the window resets (also `Retry-After`).' }),
      }),
      required: true,
    },
    example: new RateLimitedError({
      policy: 'requests',
      limit: SETTINGS.rateLimitRequests.default,
      windowSeconds: SETTINGS.rateLimitWindowSeconds.default,
      retryAfterSeconds: 4,
    }),
    when: `Your organization used up one of its rate limits ([Limits](limits.md)).
\`details\`: \`policy\` (\`requests\`: all authenticated requests; \`exports\`:
exports per hour; \`uploads\`: uploads per hour; \`testAccountIds\`: the account IDs
a test twin's creates stored today, [test mode](test-mode.md)), \`limit\`, \`windowSeconds\`,
\`retryAfterSeconds\` (the same value as the \`Retry-After\` header). The limit
counts all keys of the organization together.`,
    whatToDo: 'wait `Retry-After` seconds, then continue; pace your requests with the `RateLimit` header of every answer.',
  },
  spend_limit_exceeded: {
    meaning:
      "The launch would take this UTC month's spend over the organization's monthly spend limit (checked after `insufficient_credits`); nothing is charged.",
    details: {
      schema: z
        .strictObject({
          limit: nonNegative(),
          spent: z.int().meta({ description: 'Spent this UTC month, net of refunds.' }),
          required: nonNegative(),
        })
        .meta({ description: 'Figures in credits.' }),
      required: true,
    },
    example: new SpendLimitExceededError({ limit: 50000, spent: 49900, required: 262 }),
    when: `Enrich: the launch would take this calendar month's spend (UTC, net of
refunds) over your organization's monthly spend limit. \`details\`: \`limit\`,
\`spent\` (this month so far), \`required\` (this launch), all in credits. It
comes after \`insufficient_credits\`: a launch refused for both answers
\`insufficient_credits\`. The campaign stays \`draft\` and nothing is charged;
quote reports it as its \`outcome\`.`,
    whatToDo: `wait for the next month (\`monthlySpend.resetsAt\` of
[\`/v1/org/limits\`](limits.md#reading-your-limits)), launch a smaller list, or
ask the operator to raise the limit.`,
  },
  key_spend_limit_exceeded: {
    meaning:
      'The launch would charge more than the request\'s API key may: its `maxCreditsPerLaunch` (`period: "launch"`) or its `monthlyCredits` this UTC month, net of refunds (`period: "month"`); checked right after `spend_limit_exceeded`; nothing is charged.',
    details: {
      schema: z
        .strictObject({
          limit: nonNegative(),
          required: nonNegative(),
          spent: z
            .nullable(z.int())
            .meta({ description: 'The key\'s net charges this UTC month (`period: "month"`); null for `period: "launch"`.' }),
          period: z
            .enum(KEY_SPEND_PERIODS)
            .meta({ description: "`launch`: the key's `maxCreditsPerLaunch`; `month`: its `monthlyCredits`." }),
        })
        .meta({ description: 'Figures in credits.' }),
      required: true,
    },
    example: new KeySpendLimitExceededError({ limit: 10000, required: 262, spent: 9900, period: 'month' }),
    when: `Enrich: the launch would charge more than the API key that sent it may
(its own [credit limits](authentication.md#per-key-credit-limits)).
\`details\`: \`limit\` and \`required\` (this launch) in credits, and \`period\`:
\`"launch"\` when the launch alone passes the key's \`maxCreditsPerLaunch\`
(\`spent\` is \`null\` then), \`"month"\` when it would take the key's net charges
this UTC month (\`spent\`, refunds subtracted) over its \`monthlyCredits\`. It
comes right after \`spend_limit_exceeded\`: a launch over the organization's
monthly limit too answers \`spend_limit_exceeded\`. The campaign stays \`draft\`
and nothing is charged; quote (sent with the same key) reports it as its
\`outcome\`.`,
    whatToDo: `launch a smaller list, launch with a key allowed more (keys of
the organization do not share these limits), or wait for the next month
(\`period: "month"\`).`,
  },
  suppression_locked: {
    meaning: 'The suppression was made by an erasure: the person stays suppressed, it cannot be deleted.',
    details: {
      schema: z.strictObject({ id: z.string().meta({ description: 'The suppression an erasure made (`sup_…`).' }) }),
      required: true,
    },
    example: new SuppressionLockedError('sup_5kP9qR2sT7vW3xY8zA4bC'),
    when: `Privacy suppressions/delete: the suppression was made by an erasure
(\`origin: "erasure"\`), so the person stays suppressed. \`details.id\` is the
suppression. Nothing changes. See [privacy](privacy.md).`,
    whatToDo: "nothing; an erasure's suppression cannot be lifted.",
  },
  insufficient_scope: {
    meaning: 'The API key lacks the scope this operation needs (`details.required`); nothing was done.',
    details: {
      schema: z.strictObject({ required: z.enum(SCOPES).meta({ description: 'The scope the operation needs.' }) }),
      required: true,
    },
    example: new InsufficientScopeError('campaigns:launch'),
    when: `The API key does not hold the scope the operation needs. \`details.required\`
names it (the API reference lists each operation's scope under its security
requirement). Nothing was done: the body was not even read.`,
    whatToDo: `use a key that holds that scope, or create one with \`keys/create\` (a key can grant
only scopes it holds); see [Authentication](authentication.md#scopes).`,
  },
  expired_api_key: {
    meaning: "The API key's `expiresAt` has passed, or it is a rotated secret past its 24 h overlap.",
    example: new ExpiredApiKeyError(),
    when: `The key's \`expiresAt\` has passed, or it is the old secret of a rotated key
and its 24 hours of overlap are over.`,
    whatToDo: "use the key's new secret (from `keys/rotate`) or another key.",
  },
  internal_error: {
    meaning: 'Unexpected failure; the message is always `Internal error.`',
    example: new InternalError(),
    when: `A backing service failed. The message is always \`Internal error.\`; the cause
is logged under the answer's \`X-Request-Id\`.`,
    whatToDo: `retry with backoff;
for create, update, enrich and the other operations that take it, retry with
the same \`Idempotency-Key\`, which answers what the first try did if it got
that far ([Idempotency](idempotency.md)). If it persists, report the
\`X-Request-Id\`.`,
  },
};

/**
 * What docs/errors.md says of a status before its codes' sections: what every code of that status shares.
 * A status without an entry has none.
 */
export const STATUS_NOTES: Readonly<Partial<Record<number, string>>> = {
  401: `Every 401 code carries the header \`WWW-Authenticate: Bearer\` and is answered
before the body is read. See [Authentication](authentication.md).`,
  429: `Both 429 codes of the API come in the envelope. In AWS, a throttle of the
gateway itself can also answer 429 without the envelope; treat it like
\`rate_limited\` without details and retry with backoff.`,
};

/** Every code, ordered by status, then in the order of `ERROR_STATUS` (the order of docs/errors.md). */
export function codesByStatus(): ErrorCode[] {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  return codes
    .map((code, index) => ({ code, index }))
    .sort((a, b) => ERROR_STATUS[a.code] - ERROR_STATUS[b.code] || a.index - b.index)
    .map(({ code }) => code);
}

/**
 * The fields of a code's `details`, in order, with a note when one can be null (docs/errors.md's table); empty when
 * the code has none.
 */
export function errorDetailFields(code: ErrorCode): string[] {
  const details = ERRORS[code].details;
  if (!details) return [];
  const shape = details.schema.shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([field, schema]) => (schema.safeParse(null).success ? `${field} (or null)` : field));
}
