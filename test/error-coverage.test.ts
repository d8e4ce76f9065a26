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
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { CDK_BUNDLE_OPTIONS, PROJECT_ROOT } from '../bench/lib/bundle';
import { API_ROUTES } from '../infra/routes';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors';

/**
 * Codes a function's bundle holds that the operation cannot answer, and why.
 * `not_found` with `resource: "organization"`: the organization stores every
 * handler shares throw it when the authenticated key's organization item is
 * missing, which authentication (it read that item) rules out for the request.
 */
const UNREACHABLE: Partial<Record<ErrorCode, { operations: readonly string[]; reason: string }>> = {
  not_found: {
    operations: [
      'describeOrganization',
      'describeLimits',
      'createCampaign',
      'createUpload',
      'listCampaigns',
      'listLedger',
      'orgUsage',
      'createWebhookEndpoint',
      'listWebhookEndpoints',
      'listWebhookDeliveries',
      'listEvents',
      'createKey',
      'listKeys',
      'createSuppressions',
      'listSuppressions',
      'createErasure',
      'listErasures',
      'listAuditEntries',
    ],
    reason:
      "the shared organization stores' guard against a missing organization item, which authentication has just read; for the privacy creates and lists, also the lookups by ID of delete and get, bundled from the same privacy use-cases module",
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

/** Error codes constructed by the classes in a bundle's text. */
const bundledCodes = (text: string) =>
  new Set([...text.matchAll(/super\(\s*"([a-z_]+)"/g)].map((match) => match[1]!).filter((code) => code in ERROR_STATUS));

describe('every code an operation can answer is in its document', () => {
  const bundles = new Map<string, Set<string>>();

  beforeAll(async () => {
    for (const route of API_ROUTES) {
      const result = await build({
        ...CDK_BUNDLE_OPTIONS,
        minify: false,
        absWorkingDir: PROJECT_ROOT,
        entryPoints: [path.join(PROJECT_ROOT, route.entry)],
        outfile: path.join('/tmp', `${route.functionId}-errors.mjs`),
        write: false,
        logLevel: 'silent',
      });
      bundles.set(route.operation.operationId, bundledCodes(result.outputFiles.find((file) => file.path.endsWith('.mjs'))!.text));
    }
  });

  it('finds error classes in the bundles (the scan works)', () => {
    // Every operation's pipeline can refuse a request: invalid_request and invalid_api_key are in each bundle.
    for (const [operationId, codes] of bundles)
      expect([...codes].filter((code) => code === 'invalid_request' || code === 'invalid_api_key').sort(), operationId).toEqual([
        'invalid_api_key',
        'invalid_request',
      ]);
  });

  it('lists, for each operation, every code its function can answer', () => {
    const undocumented: Record<string, string[]> = {};
    for (const route of API_ROUTES) {
      const { operationId, path: operationPath } = route.operation;
      const listed = documentedCodes(operationPath);
      const missing = [...bundles.get(operationId)!].filter(
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
          bundled: bundles.get(operationId)!.has(code),
          documented: documentedCodes(route.operation.path).has(code),
        }).toEqual({ operationId, code, bundled: true, documented: false });
      }
    }
  });
});
