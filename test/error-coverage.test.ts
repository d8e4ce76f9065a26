/**
 * An operation's document lists every error code the operation can answer
 * (issue #38: `spend_limit_exceeded` once reached the server and not the
 * document, and Prism turned the real 402 into a 500). What a function can
 * answer is read from what it is built from: its deployed bundle (esbuild,
 * the CDK options, not minified) holds the error classes its code can
 * construct, each calling `super("<code>", …)`, and nothing else. Every such
 * code must stand in the operation's responses of docs/openapi.json
 * (`examples` are keyed by code under each status).
 *
 * The bundle over-approximates: a code whose class is bundled but that the
 * operation cannot answer is listed in UNREACHABLE with the reason.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../bench/lib/bundle';
import { API_ROUTES } from '../infra/routes';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors';
import { routeBundles } from './support/route-bundles';

/**
 * `not_found` names its resource (`new NotFoundError("<resource>", …)`). The
 * organization's is the guard of a read every handler's authentication has
 * just vouched for: the organization item of the key that authenticated
 * (organizations are never deleted), so no operation answers it. Until
 * session 51 this set was computed, as the resources every API bundle
 * constructs; since the API bundles no longer carry the limit store's
 * writer (lib/organizations/limits.ts `readLimits`), no resource is in every
 * bundle, and the organization is named here. (Authentication reads keys
 * through `createApiKeyReader`, so the key store's `api_key` guard is bundled
 * only by the keys operations; those that read none are in UNREACHABLE.) So
 * `not_found` counts as answerable only when a bundle constructs it for
 * another resource: a new operation needs no line here.
 */
const AUTHENTICATED_RESOURCES: ReadonlySet<string> = new Set(['organization']);

/**
 * Codes a function's bundle holds that the operation cannot answer, and why
 * (beyond the authenticated resources above).
 */
const UNREACHABLE: Partial<Record<ErrorCode, { operations: readonly string[]; reason: string }>> = {
  not_found: {
    operations: ['createCampaign'],
    reason:
      "the store it bundles reads by ID for the operations that name one (a campaign for get and update); create reads none (keys/create builds the key store's issue method alone, which reads no key by ID)",
  },
};

const document = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'docs/openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    { post: { responses: Record<string, { content?: { 'application/json'?: { examples?: Record<string, unknown> } } }> } }
  >;
};

/** The codes the document lists for an operation path. */
function documentedCodes(operationPath: string): Set<string> {
  const codes = new Set<string>();
  for (const [status, response] of Object.entries(document.paths[operationPath]!.post.responses)) {
    if (status === '200') continue;
    for (const code of Object.keys(response.content?.['application/json']?.examples ?? {})) codes.add(code);
  }
  return codes;
}

/** What a function's bundle can construct: error codes (by their classes' `super("<code>", …)`) and the resources of `NotFoundError`. */
interface Bundle {
  codes: Set<string>;
  notFound: Set<string>;
}

/** The error codes and not-found resources constructed in a bundle's text. */
const bundled = (text: string): Bundle => ({
  codes: new Set([...text.matchAll(/super\(\s*"([a-z_]+)"/g)].map((match) => match[1]!).filter((code) => code in ERROR_STATUS)),
  notFound: new Set([...text.matchAll(/new NotFoundError\(\s*"([^"]+)"/g)].map((match) => match[1]!)),
});

/** The codes a bundle lets its operation answer: `not_found` only for a resource beyond the authenticated ones. */
const answerable = ({ codes, notFound }: Bundle, authenticated: ReadonlySet<string>): Set<string> =>
  new Set([...codes].filter((code) => code !== 'not_found' || [...notFound].some((resource) => !authenticated.has(resource))));

describe('every code an operation can answer is in its document', () => {
  const bundles = new Map<string, Bundle>();

  beforeAll(async () => {
    const texts = await routeBundles({ minify: false });
    for (const route of API_ROUTES) bundles.set(route.operation.operationId, bundled(texts.get(route.functionId)!));
  });

  it('finds error classes in the bundles (the scan works)', () => {
    // Every operation's pipeline can refuse a request: invalid_request and invalid_api_key are in each bundle.
    for (const [operationId, { codes }] of bundles)
      expect([...codes].filter((code) => code === 'invalid_request' || code === 'invalid_api_key').sort(), operationId).toEqual([
        'invalid_api_key',
        'invalid_request',
      ]);
    // The organization's guard is found where its reads are bundled: describe reads the organization item itself.
    expect([...bundles.get('describeOrganization')!.notFound]).toContain('organization');
    // And a resource beyond it is found too: a campaign read by ID.
    expect([...bundles.get('getCampaign')!.notFound]).toContain('campaign');
  });

  it('lists, for each operation, every code its function can answer', () => {
    const undocumented: Record<string, string[]> = {};
    for (const route of API_ROUTES) {
      const { operationId, path: operationPath } = route.operation;
      const listed = documentedCodes(operationPath);
      const missing = [...answerable(bundles.get(operationId)!, AUTHENTICATED_RESOURCES)].filter(
        (code) => !listed.has(code) && !UNREACHABLE[code as ErrorCode]?.operations.includes(operationId),
      );
      if (missing.length > 0) undocumented[operationId] = missing.sort();
    }
    expect(undocumented, 'codes a function can answer that its operation does not document: add them to its errors in docs.ts').toEqual({});
  });

  it('keeps no stale exception: each UNREACHABLE entry is bundled and undocumented where it is claimed', () => {
    for (const [code, { operations }] of Object.entries(UNREACHABLE)) {
      for (const operationId of operations) {
        const route = API_ROUTES.find((r) => r.operation.operationId === operationId)!;
        expect({
          operationId,
          code,
          bundled: answerable(bundles.get(operationId)!, AUTHENTICATED_RESOURCES).has(code),
          documented: documentedCodes(route.operation.path).has(code),
        }).toEqual({ operationId, code, bundled: true, documented: false });
      }
    }
  });
});
