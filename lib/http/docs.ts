/**
 * The published contract (README.md): `GET /openapi.json` (the document
 * generated from the operations' zod schemas), `GET /asyncapi.json` (the
 * webhook events, issue #34) and `GET /docs`, a reference
 * page rendered by Redoc that needs nothing but itself: the Redoc standalone
 * bundle and the document are inlined, no CDN, no second request. The page
 * links to every guide of the repository's `docs/` folder, each served as
 * Markdown at `GET /docs/<name>.md` (their relative links resolve there too).
 *
 * The same handler serves both paths in AWS (one Lambda behind two routes)
 * and locally (the local server calls it). Bodies are compressed with
 * Brotli or gzip when the client accepts it, and computed once per process.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { NotFoundError } from '../errors';
import { logger } from '../observability';
import { failure } from './envelope';
import { requestTracing } from './request-id';

/** File name of the Redoc standalone bundle, next to the docs function's handler in AWS. */
export const RENDERER_FILE = 'redoc.standalone.js';
/** Where the renderer comes from in the project (a devDependency, copied into the function's asset at bundling). */
export const RENDERER_MODULE = `redoc/bundles/${RENDERER_FILE}`;

/** Reads the Redoc standalone bundle: beside the bundled handler in AWS, from node_modules locally. */
export function readRendererBundle(): string {
  const beside = new URL(`./${RENDERER_FILE}`, import.meta.url);
  if (beside.protocol === 'file:' && existsSync(beside)) return readFileSync(beside, 'utf8');
  return readFileSync(createRequire(import.meta.url).resolve(RENDERER_MODULE), 'utf8');
}

/** A guide of the repository's `docs/` folder: its file name (`limits.md`) and its Markdown. */
export interface Guide {
  name: string;
  markdown: string;
}

/**
 * The guides: the `*.md` files copied next to the bundled handler in AWS (the docs function's asset files,
 * infra/routes.ts), else the repository's `docs/` folder. Sorted by name.
 */
export function readGuides(): Guide[] {
  const beside = new URL('./', import.meta.url);
  const folders = beside.protocol === 'file:' ? [fileURLToPath(beside), fileURLToPath(new URL('../../docs/', import.meta.url))] : [];
  for (const folder of folders) {
    if (!existsSync(folder)) continue;
    const names = readdirSync(folder)
      .filter((name) => name.endsWith('.md'))
      .sort();
    if (names.length > 0) return names.map((name) => ({ name, markdown: readFileSync(`${folder}/${name}`, 'utf8') }));
  }
  return [];
}

/** Path a guide is served at. */
export const guidePath = (name: string): string => `/docs/${name}`;

/** The first `# ` heading of a guide, or its file name. */
const guideTitle = ({ name, markdown }: Guide): string => /^# (.+)$/m.exec(markdown)?.[1]?.trim() ?? name;

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * Makes JavaScript safe to inline in a `<script>` element: the HTML
 * tokenizer must never see `</script`, `<script` or `<!--` inside it (they
 * end the element or switch it into its "escaped" states). `\x3C` is `<` in
 * every JavaScript string, template and regular expression.
 */
export function inlineScript(source: string): string {
  return source.replace(/<(?=\/?script|!--)/gi, '\\x3C').replace(/^\/\/# sourceMappingURL=.*$/gm, '');
}

/** The docs page: the guides' links, then Redoc with the document inlined. */
export function docsPage(document: unknown, rendererBundle: string, guides: readonly Guide[] = []): string {
  const nav =
    guides.length === 0
      ? ''
      : `<nav aria-label="Guides" style="font: 14px/1.5 sans-serif; padding: 12px 20px; border-bottom: 1px solid #ddd">Guides: ${guides
          .map((guide) => `<a href="${guidePath(guide.name)}">${escapeHtml(guideTitle(guide))}</a>`)
          .join(' · ')}</nav>
`;
  const spec = JSON.stringify(document).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Campaign Enrichment API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<noscript>This page needs JavaScript. The OpenAPI document itself is at <a href="openapi.json">/openapi.json</a>.</noscript>
${nav}<div id="redoc"></div>
<script>${inlineScript(rendererBundle)}</script>
<script>Redoc.init(${spec}, { expandResponses: '200', jsonSampleExpandLevel: 4, hideHostname: false }, document.getElementById('redoc'));</script>
</body>
</html>
`;
}

type Encoding = 'br' | 'gzip' | 'identity';

/** The best encoding the client accepts (`Accept-Encoding` with q-values): Brotli, then gzip, else none. */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => weights.get(name) ?? weights.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

interface Resource {
  contentType: string;
  body: () => string;
}

/** Options of {@link createDocsHandler}. */
export interface DocsOptions {
  /** The OpenAPI document for a base URL (the origin the request came to). */
  document: (serverUrl: string) => unknown;
  /** The AsyncAPI document of the webhook events for a base URL (`GET /asyncapi.json`, issue #34); without it the path is 404. */
  asyncapi?: (serverUrl: string) => unknown;
  /** The guides linked from `/docs` and served under it. @default readGuides */
  guides?: () => readonly Guide[];
  /** More documents by path, built for the request's origin (the discovery documents: api-catalog, llms.txt, the MCP server card; docs/agents.md). */
  more?: (serverUrl: string) => Record<string, { contentType: string; body: () => string }>;
  /** The Redoc standalone bundle. @default readRendererBundle */
  renderer?: () => string;
}

/** The Lambda handler of `GET /openapi.json` and `GET /docs`. */
export type DocsHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Builds the handler of the two documentation routes. Each body is built and
 * compressed once per process and origin.
 */
export function createDocsHandler(options: DocsOptions): DocsHandler {
  const renderer = options.renderer ?? readRendererBundle;
  let guides: readonly Guide[] | undefined;
  const guidesOnce = () => (guides ??= (options.guides ?? readGuides)());
  const cache = new Map<string, Buffer | string>();
  const resources = (serverUrl: string): Record<string, Resource> => ({
    '/openapi.json': { contentType: 'application/json; charset=utf-8', body: () => JSON.stringify(options.document(serverUrl), null, 2) },
    '/docs': { contentType: 'text/html; charset=utf-8', body: () => docsPage(options.document(serverUrl), renderer(), guidesOnce()) },
    ...Object.fromEntries(
      guidesOnce().map((guide) => [guidePath(guide.name), { contentType: 'text/markdown; charset=utf-8', body: () => guide.markdown }]),
    ),
    ...options.more?.(serverUrl),
    ...(options.asyncapi
      ? {
          '/asyncapi.json': {
            contentType: 'application/json; charset=utf-8',
            body: () => JSON.stringify(options.asyncapi!(serverUrl), null, 2),
          },
        }
      : {}),
  });

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(requestTracing())
    .use(injectLambdaContext(logger)) // keys: reset by requestTracing at the next request's start
    .handler(async (event) => {
      const method = event.requestContext?.http?.method ?? 'GET';
      const rawPath = event.rawPath ?? '/';
      const path = rawPath === '/docs/' ? '/docs' : rawPath;
      const host = event.headers?.host ?? event.requestContext?.domainName ?? 'localhost';
      const scheme = event.headers?.['x-forwarded-proto'] ?? (event.requestContext?.apiId === 'local' ? 'http' : 'https');
      const serverUrl = `${scheme}://${host}`;
      const resource = resources(serverUrl)[path];
      if (!resource || (method !== 'GET' && method !== 'HEAD')) {
        const error = new NotFoundError('route', `${method} ${rawPath}`);
        return failure(error.statusCode, error.toJSON());
      }
      const encoding = negotiateEncoding(event.headers?.['accept-encoding']);
      const cacheKey = `${serverUrl} ${path} ${encoding}`;
      let body = cache.get(cacheKey);
      if (body === undefined) {
        const text = resource.body();
        body =
          encoding === 'br'
            ? brotliCompressSync(text, {
                params: {
                  [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
                  [zlib.BROTLI_PARAM_QUALITY]: 9,
                  [zlib.BROTLI_PARAM_SIZE_HINT]: text.length,
                },
              })
            : encoding === 'gzip'
              ? gzipSync(text, { level: 9 })
              : text;
        cache.set(cacheKey, body);
      }
      const headers: Record<string, string> = {
        'content-type': resource.contentType,
        'cache-control': 'public, max-age=300',
        vary: 'accept-encoding',
      };
      if (encoding !== 'identity') headers['content-encoding'] = encoding;
      if (method === 'HEAD') return { statusCode: 200, headers, body: '' };
      return typeof body === 'string'
        ? { statusCode: 200, headers, body }
        : { statusCode: 200, headers, body: body.toString('base64'), isBase64Encoded: true };
    }) as unknown as DocsHandler;
}
