/**
 * Calls to the bench stack's API over real HTTP, optionally tagged with an
 * `x-bench-id` so the stack keeps the request's round trips.
 */
import { randomUUID } from 'node:crypto';
import type { BenchStack, Scope } from './stack';
import { describeOrganizationOperation } from '../../lib/organizations/schema';
import {
  createCampaignOperation,
  enrichCampaignOperation,
  getCampaignOperation,
  listCampaignsOperation,
  updateCampaignOperation,
} from '../../lib/campaigns/schema';
import { exportCampaignOperation } from '../../lib/exports/schema';
import { campaignAccountsOperation, quoteCampaignOperation } from '../../lib/enrichment/schema';

/** A parsed envelope. */
export interface Reply<T = any> {
  status: number;
  data: T;
  error: { code: string; message: string; details?: unknown } | null;
  ms: number;
}

/** POSTs a JSON body with the API key; throws on a transport failure only. */
export async function post<T = any>(
  stack: Pick<BenchStack, 'apiUrl'>,
  path: string,
  apiKey: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply<T>> {
  const started = performance.now();
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const parsed = (await response.json()) as { data: T; error: Reply['error'] };
  return { status: response.status, data: parsed.data, error: parsed.error, ms: performance.now() - started };
}

/** POSTs and returns the round trips the server made for this request. */
export async function postCounted<T = any>(
  stack: BenchStack,
  path: string,
  apiKey: string,
  body: unknown,
): Promise<Reply<T> & { scope: Scope }> {
  const id = randomUUID();
  const reply = await post<T>(stack, path, apiKey, body, { 'x-bench-id': id });
  const scope = stack.takeScope(id);
  if (!scope) throw new Error(`No scope recorded for ${path}`);
  return { ...reply, scope };
}

/** Fails loudly when a setup call did not succeed. */
export function expectOk<T>(reply: Reply<T>, what: string): T {
  if (reply.status !== 200) throw new Error(`${what} answered ${reply.status}: ${JSON.stringify(reply.error)}`);
  return reply.data;
}

/** API paths, from the operation definitions the API serves. */
export const PATHS = {
  describe: describeOrganizationOperation.path,
  create: createCampaignOperation.path,
  update: updateCampaignOperation.path,
  get: getCampaignOperation.path,
  list: listCampaignsOperation.path,
  enrich: enrichCampaignOperation.path,
  export: exportCampaignOperation.path,
  quote: quoteCampaignOperation.path,
  accounts: campaignAccountsOperation.path,
} as const;
