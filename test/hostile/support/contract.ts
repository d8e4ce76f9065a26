/**
 * The contract the hostile suite holds the service to, spelled out from the
 * specification and the pages of docs/ (never imported from the code under test):
 * the operations, the error codes each may answer, the HTTP status of every
 * code, and the shape of every answer (the `{ data, error }` envelope).
 *
 * The helpers here return lists of violations instead of asserting, so the
 * soak runner (outside vitest) uses them too.
 */
import { SPAWNED_RUN_MS } from '../../support/spawned';

/** Every operation of the API (docs/README.md; docs/campaigns.md). */
export const OPERATIONS = {
  describe: '/v1/org/describe',
  create: '/v1/campaigns/create',
  update: '/v1/campaigns/update',
  get: '/v1/campaigns/get',
  list: '/v1/campaigns/list',
  enrich: '/v1/campaigns/enrich',
  export: '/v1/campaigns/export',
} as const;

/** An operation name. */
export type OperationName = keyof typeof OPERATIONS;
/** Every operation name. */
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** HTTP status of every error code (docs/errors.md, docs/campaigns.md). */
export const STATUS_OF: Record<string, number> = {
  invalid_request: 400,
  invalid_api_key: 401,
  revoked_api_key: 401,
  insufficient_credits: 402,
  not_found: 404,
  campaign_not_enrichable: 409,
  campaign_not_editable: 409,
  enrichment_pending: 409,
  results_not_ready: 409,
  results_expired: 410,
  no_eligible_accounts: 422,
  concurrency_limit_exceeded: 429,
  internal_error: 500,
};

const AUTH = ['invalid_api_key', 'revoked_api_key'];

/**
 * Codes each operation may answer besides `internal_error` (docs/errors.md
 * table; docs/campaigns.md for create and update).
 */
export const CODES_OF: Record<OperationName, string[]> = {
  describe: ['invalid_request', ...AUTH],
  create: ['invalid_request', ...AUTH],
  update: ['invalid_request', ...AUTH, 'not_found', 'campaign_not_editable'],
  get: ['invalid_request', ...AUTH, 'not_found'],
  list: ['invalid_request', ...AUTH],
  enrich: [
    'invalid_request',
    ...AUTH,
    'insufficient_credits',
    'not_found',
    'campaign_not_enrichable',
    'enrichment_pending',
    'no_eligible_accounts',
    'concurrency_limit_exceeded',
  ],
  export: ['invalid_request', ...AUTH, 'not_found', 'results_not_ready', 'results_expired', 'no_eligible_accounts'],
};

/** Required `details` members of each code that carries details (docs/errors.md). */
const DETAILS_OF: Record<string, string[] | 'issues' | 'none'> = {
  invalid_request: 'issues',
  invalid_api_key: 'none',
  revoked_api_key: 'none',
  insufficient_credits: ['available', 'required', 'shortfall'],
  not_found: ['id', 'resource'],
  campaign_not_enrichable: ['status'],
  campaign_not_editable: ['status'],
  enrichment_pending: 'none',
  no_eligible_accounts: ['requested'],
  concurrency_limit_exceeded: ['inFlight', 'limit', 'requested'],
  results_not_ready: 'none',
  results_expired: 'none',
  internal_error: 'none',
};

/** Campaign states (docs/README.md#a-campaigns-life-in-one-paragraph). */
export const CAMPAIGN_STATUSES = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'];

/** A raw HTTP answer. */
export interface RawAnswer {
  status: number;
  contentType: string | null;
  wwwAuthenticate: string | null;
  text: string;
  /** The parsed body, when it is JSON. */
  body?: any;
  /** Milliseconds from sending to the last byte. */
  ms: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks one answer of `operation` against the contract: JSON, exactly the
 * envelope's two members with exactly one non-null, a documented code with
 * its status and detail members, `internal_error` only as the fixed message,
 * 401s naming the Bearer scheme. `allow500` admits `internal_error` (fault
 * tests); otherwise a 5xx is a violation.
 * @returns violations, empty when the answer honours the contract.
 */
export function envelopeViolations(operation: OperationName, answer: RawAnswer, options: { allow500?: boolean } = {}): string[] {
  const v: string[] = [];
  const where = `${operation} → ${answer.status}`;
  if (!/^application\/json(;|$)/i.test(answer.contentType ?? '')) v.push(`${where}: content-type ${answer.contentType}`);
  const body = answer.body;
  if (!isObject(body)) return [...v, `${where}: body is not a JSON object: ${answer.text.slice(0, 200)}`];
  const members = Object.keys(body).sort();
  if (members.join() !== 'data,error') v.push(`${where}: envelope members ${JSON.stringify(members)}`);
  const { data, error } = body;
  if ((data === null) === (error === null)) v.push(`${where}: exactly one of data and error must be null: ${answer.text.slice(0, 200)}`);
  if (answer.status === 200) {
    if (!isObject(data)) v.push(`${where}: data must be an object`);
    if (error !== null) v.push(`${where}: error must be null on success`);
    return v;
  }
  if (data !== null) v.push(`${where}: data must be null on failure`);
  if (!isObject(error)) return [...v, `${where}: error must be an object`];
  const code = error.code;
  if (typeof code !== 'string') return [...v, `${where}: error.code missing`];
  if (typeof error.message !== 'string' || !/\S/.test(error.message)) v.push(`${where}: error.message must be a non-empty string`);
  const extra = Object.keys(error).filter((k) => !['code', 'message', 'details'].includes(k));
  if (extra.length > 0) v.push(`${where}: unexpected error members ${extra.join(',')}`);
  if (code === 'internal_error') {
    if (!options.allow500) v.push(`${where}: internal_error (a 5xx) for a request the service should have answered`);
    if (error.message !== 'Internal error.') v.push(`${where}: internal_error must say only "Internal error."`);
    if (error.details !== undefined) v.push(`${where}: internal_error carries no details`);
  } else if (!CODES_OF[operation].includes(code)) {
    v.push(`${where}: code ${code} is not documented for ${operation}`);
  }
  if (STATUS_OF[code] === undefined) v.push(`${where}: unknown code ${code}`);
  else if (STATUS_OF[code] !== answer.status) v.push(`${where}: code ${code} must answer ${STATUS_OF[code]}`);
  const rule = DETAILS_OF[code];
  if (rule === 'none' && error.details !== undefined) v.push(`${where}: ${code} carries no details, got ${JSON.stringify(error.details)}`);
  if (rule === 'issues' && error.details !== undefined) {
    const d = error.details;
    const ok =
      isObject(d) &&
      Object.keys(d).join() === 'issues' &&
      Array.isArray(d.issues) &&
      d.issues.length > 0 &&
      d.issues.every((line) => typeof line === 'string' && line.length > 0);
    if (!ok) v.push(`${where}: invalid_request details must be { issues: non-empty string[] }, got ${JSON.stringify(d)}`);
  }
  if (Array.isArray(rule)) {
    const d = error.details;
    if (!isObject(d) || Object.keys(d).sort().join() !== rule.join())
      v.push(`${where}: ${code} details must be exactly ${rule.join(',')}, got ${JSON.stringify(d)}`);
  }
  if (answer.status === 401 && !/^Bearer\b/i.test(answer.wwwAuthenticate ?? ''))
    v.push(`${where}: a 401 must carry WWW-Authenticate: Bearer`);
  return v;
}

/** Options of {@link send}. */
export interface SendOptions {
  /** Raw `Authorization` header; omitted means none. */
  authorization?: string;
  /** Raw `Content-Type` header; omitted means none. */
  contentType?: string;
  /** The body exactly as bytes go on the wire. */
  body?: string | Buffer | Uint8Array;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** Milliseconds before the request counts as hung (default 20 s). */
  timeoutMs?: number;
}

/**
 * POSTs raw bytes to an API path. A request that does not answer within
 * `timeoutMs` throws (a hang is a failure of the suite, never skipped).
 */
export async function send(baseUrl: string, path: string, options: SendOptions = {}): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? SPAWNED_RUN_MS;
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers,
      body: options.body as RequestInit['body'],
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(`POST ${path} did not answer within ${timeoutMs} ms (or failed at the socket): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    wwwAuthenticate: response.headers.get('www-authenticate'),
    text,
    body,
    ms: performance.now() - started,
  };
}

/** `send` with a JSON body. */
export const sendJson = (baseUrl: string, path: string, apiKey: string | undefined, body?: unknown) =>
  send(baseUrl, path, {
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    ...(body === undefined ? {} : { contentType: 'application/json', body: JSON.stringify(body) }),
  });
