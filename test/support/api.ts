/**
 * Test harness: the local API server (the same one `npm start` runs) on a
 * free port in the test worker, and helpers to call it over real HTTP.
 */
import { afterAll, beforeAll } from 'vitest';
import { startLocalApi, type LocalApi } from '../../infra/local/stack';
import { limits, organizations } from '../../lib/root';
import type { NewOrganization } from '../../lib/organizations/store';
import type { LimitsChange } from '../../lib/organizations/limits';
import { SPAWNED_RUN_MS } from './spawned';

/** A parsed API response. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: { data: T; error: null } | { data: null; error: { code: string; message: string; details?: any } };
  /** `body.data`, typed loosely for assertions. */
  data: T;
  /** `body.error`. */
  error: { code: string; message: string; details?: any } | null;
}

let api: LocalApi | undefined;

/**
 * Starts the API server, with the local Step Functions endpoint on the same
 * port, for the current test file; returns a getter of its base URL.
 * @param options.webhooks - also runs the webhook delivery loop (test files that deliver webhooks).
 */
export function useApi(options: { webhooks?: boolean | { intervalMs?: number } } = {}): () => string {
  beforeAll(async () => {
    // Every answer's error code is one its operation's document lists, or the test sees a 500 naming it (docs/errors.md).
    api = await startLocalApi({
      healthCheck: async () => undefined,
      checkDeclaredErrors: true,
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    });
  });
  afterAll(async () => {
    await api?.close();
  });
  return () => api?.url ?? '';
}

/** Waits until every workflow execution started so far has ended. */
export async function settleWorkflows(): Promise<void> {
  await api?.stepFunctions.settle();
}

/**
 * Waits until a workflow execution of this file's server has entered `state`
 * (e.g. `ExpireResults`: every step before it has run), instead of sleeping.
 * @throws after `timeoutMs` without it.
 */
export async function waitForWorkflowState(executionArn: string, state: string, timeoutMs = SPAWNED_RUN_MS): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !api?.stepFunctions.enteredStates(executionArn).includes(state);) {
    if (Date.now() > deadline)
      throw new Error(
        `execution ${executionArn} did not enter ${state} within ${timeoutMs} ms; entered: ${api?.stepFunctions.enteredStates(executionArn).join(', ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until no task of a workflow execution of this file's server is running (a stopped execution's held task has returned and finished). */
export async function waitForWorkflowTasks(executionArn: string): Promise<void> {
  await api?.stepFunctions.tasksSettled(executionArn);
}

/**
 * Creates a fresh organization (and its first key) for one test.
 * @param input.limits - the operator's overrides of its limits (docs/limits.md), set before its first request:
 *   a file that sends thousands of requests from one organization raises its request rate.
 */
export async function newOrganization(input: Partial<NewOrganization> & { limits?: LimitsChange } = {}) {
  const { organization, apiKey } = await organizations().create({
    name: input.name ?? 'Test Org',
    smbCredits: input.smbCredits ?? 10_000,
    researchAgentCredits: input.researchAgentCredits ?? 100,
    maxEnrichingAccounts: input.maxEnrichingAccounts ?? 5_000,
  });
  if (input.limits) await limits().setLimits(organization.id, input.limits);
  return { organizationId: organization.id, apiKey };
}

/** Options of {@link call}. */
export interface CallOptions {
  apiKey?: string;
  /** Raw Authorization header (overrides apiKey). */
  authorization?: string;
  /** Sent as JSON unless `form`, `multipart` or `raw` is given. */
  body?: unknown;
  form?: URLSearchParams;
  multipart?: FormData;
  raw?: { body: string | Buffer; contentType?: string };
  /** Extra request headers, e.g. `Idempotency-Key`. */
  headers?: Record<string, string>;
}

/** POSTs to an API path over HTTP and parses the envelope. */
export async function call<T = any>(baseUrl: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const authorization = options.authorization ?? (options.apiKey ? `Bearer ${options.apiKey}` : undefined);
  if (authorization !== undefined) headers.authorization = authorization;
  let body: RequestInit['body'];
  if (options.raw) {
    body = options.raw.body as RequestInit['body'];
    if (options.raw.contentType) headers['content-type'] = options.raw.contentType;
  } else if (options.form) {
    body = options.form;
  } else if (options.multipart) {
    body = options.multipart;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body });
  // A stream's success (docs/results.md "The stream") is not the envelope: JSON Lines become `data` as a list of objects.
  const contentType = response.headers.get('content-type') ?? '';
  const parsed = (
    /^application\/(jsonl|x-ndjson)/.test(contentType)
      ? {
          data: (await response.text())
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line)),
          error: null,
        }
      : /^text\/event-stream/.test(contentType)
        ? { data: await response.text(), error: null }
        : await response.json()
  ) as ApiResponse<T>['body'];
  return { status: response.status, headers: response.headers, body: parsed, data: parsed.data as T, error: parsed.error };
}
