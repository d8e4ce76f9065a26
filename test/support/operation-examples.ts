/**
 * One valid request per operation, derived from what the operation already declares (issue #38: no per-operation
 * table kept by hand beside infra/routes.ts): its documented request example (`example` of its docs.ts, the one the
 * API reference shows), with each resource ID of the example replaced by one of the test's own resources, found by
 * the ID's prefix (`camp_…` → a campaign of the test's organization). An operation without fields takes `{}`.
 *
 * Tests that need a success of every operation (test/rate-limit-headers.test.ts, test/prism-judge.test.ts,
 * test/client.test.ts, test/scopes.test.ts) read it here, so a new route needs no line in any of them: its docs.ts
 * example is its test request (docs/architecture.md "Add an operation").
 */
import * as z from 'zod/mini';
import type { ApiRoute } from '../../infra/routes';
import { documented } from '../../lib/contract/openapi';

/**
 * The resources a test made, by the prefix of the IDs they replace (`camp_`, `whe_`, `msg_`, `key_`, `sup_`,
 * `era_`, `upl_`), and the URL of a webhook receiver for an example's `url`. `byOperation` gives an operation its own
 * resource of a kind when the shared one would not do (enrich launches a draft, cancel needs an enriching campaign,
 * revoke and rotate each their own key): operationId → prefix → ID.
 */
export interface ExampleResources {
  ids: Readonly<Record<string, string>>;
  byOperation?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Replaces an example's `url` (a webhook endpoint must be one the test receives on). */
  webhookUrl?: string;
  /** Keeps an example's ID of a kind `ids` lacks (a resource that exists nowhere) instead of throwing. */
  keepOtherIds?: boolean;
}

/** The prefix of a resource ID (`camp_7Hq…` → `camp_`), or undefined for any other value. */
const idPrefix = (value: string) => /^([a-z]+_)[A-Za-z0-9]{16,}$/.exec(value)?.[1];

/**
 * A valid request body of `route`'s operation: its documented example with the test's resources in it.
 * @throws Error naming the operation when it has fields and no documented example (a new operation's docs.ts needs one),
 *   or when the example names a resource kind `resources` lacks.
 */
export function exampleRequest(route: ApiRoute, resources: ExampleResources): Record<string, unknown> {
  const { operationId } = route.operation;
  const docs = documented(route.operation);
  if (!docs.example) {
    if (z.safeParse(route.operation.request, {}).success) return {};
    throw new Error(`${operationId} documents no request example: add \`example\` to its documentation (its domain's docs.ts)`);
  }
  const own = resources.byOperation?.[operationId] ?? {};
  const replace = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => replace(item));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([field, inner]) => [field, replace(inner, field)]));
    if (key === 'url' && resources.webhookUrl && typeof value === 'string') return resources.webhookUrl;
    const prefix = typeof value === 'string' ? idPrefix(value) : undefined;
    if (!prefix) return value;
    const id = own[prefix] ?? resources.ids[prefix];
    if (!id && resources.keepOtherIds) return value;
    if (!id) throw new Error(`${operationId}'s example names a ${prefix}… resource the test did not make: add one to its resources`);
    return id;
  };
  return replace(docs.example) as Record<string, unknown>;
}
