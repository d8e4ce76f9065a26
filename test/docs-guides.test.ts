/**
 * `GET /docs` reaches the guides (issue #37; lib/http/docs.ts): the API
 * reference page links to every `docs/*.md` guide of the repository, and each
 * link answers 200 with the guide's Markdown, through the local server and the
 * deployed stack's docs handler (one handler; the CDK route `GET
 * /docs/{guide}` and the function's asset files are checked beside it). The
 * documents' contact block is a real one: the support guide's URL on the
 * serving deployment and the product's support address, no placeholder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_ROUTES, GUIDES_ROUTE, SUPPORT_FUNCTIONS } from '../infra/routes';
import { SUPPORT } from '../lib/contract/openapi';
import { useApi } from './support/api';

const api = useApi();
const DOCS = path.resolve(import.meta.dirname, '../docs');
const guides = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort();

describe('GET /docs links to every guide and serves it', () => {
  it('every docs/*.md is linked from /docs, and every link answers 200 with that guide', async () => {
    expect(guides.length).toBeGreaterThan(10);
    const page = await fetch(`${api()}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const links = [...html.matchAll(/<a href="(\/docs\/[^"]+)">/g)].map((match) => match[1]!);
    expect(links.sort()).toEqual(guides.map((name) => `/docs/${name}`));
    for (const link of links) {
      const res = await fetch(`${api()}${link}`);
      expect(res.status, link).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(await res.text()).toBe(readFileSync(path.join(DOCS, path.basename(link)), 'utf8'));
    }
    // Anything else under /docs is the envelope's 404, as any unknown path.
    const unknown = await fetch(`${api()}/docs/nope.md`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('the deployed stack routes GET /docs/{guide} to the docs function, which carries every guide', () => {
    expect(DOCS_ROUTES).toContain(GUIDES_ROUTE);
    const copied = SUPPORT_FUNCTIONS.docs
      .assetFiles()
      .map((file) => path.basename(file))
      .filter((name) => name.endsWith('.md'))
      .sort();
    expect(copied).toEqual(guides);
  });

  it("the documents' contact is the support guide of the serving deployment and the product's address", async () => {
    const openapi = (await (await fetch(`${api()}/openapi.json`)).json()) as { info: { contact: Record<string, string> } };
    expect(openapi.info.contact).toEqual({ name: SUPPORT.name, url: `${api()}${SUPPORT.guidePath}`, email: SUPPORT.email });
    const asyncapi = (await (await fetch(`${api()}/asyncapi.json`)).json()) as { info: { contact: Record<string, string> } };
    expect(asyncapi.info.contact).toEqual(openapi.info.contact);
    expect((await fetch(openapi.info.contact.url!)).status).toBe(200);
    expect(JSON.stringify([openapi.info, asyncapi.info])).not.toMatch(/example\.(com|org|net)/);
    expect(readFileSync(path.join(DOCS, 'support.md'), 'utf8')).toContain(SUPPORT.email);
  });
});
