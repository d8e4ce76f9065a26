/**
 * The client covers the document (issue #34): every operation of
 * docs/openapi.json has a method of the same name (its operationId), at the
 * same path, sending `Idempotency-Key` exactly where the operation honours
 * it; and the client is a package that builds to ESM with its types
 * (`npm pack` in client/).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPERATIONS, createCampaignEnrichmentClient } from '../client/index';
import { SPAWNED_RUN_MS } from './support/spawned';

const ROOT = path.resolve(import.meta.dirname, '..');
const document = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
const operations = Object.entries(document.paths as Record<string, { post: { operationId: string; parameters?: { $ref: string }[] } }>).map(
  ([p, item]) => ({
    path: p,
    operationId: item.post.operationId,
    idempotent: (item.post.parameters ?? []).some((parameter) => parameter.$ref === '#/components/parameters/IdempotencyKey'),
  }),
);

describe('client coverage', () => {
  it('has a method for every operation of the document, at its path, idempotent where the operation is', () => {
    const client = createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'cek_x' }) as unknown as Record<string, unknown>;
    const missing = operations
      .filter((operation) => typeof client[operation.operationId] !== 'function')
      .map((operation) => operation.operationId);
    expect(missing, 'operations of docs/openapi.json without a client method: add them to OPERATIONS in client/index.ts').toEqual([]);
    for (const operation of operations) {
      expect(OPERATIONS[operation.operationId as keyof typeof OPERATIONS], operation.operationId).toEqual({
        path: operation.path,
        idempotent: operation.idempotent,
      });
    }
    expect(Object.keys(OPERATIONS).sort()).toEqual(operations.map((operation) => operation.operationId).sort());
  });

  it(
    'packs as an ESM package with its types, and the built module loads',
    async () => {
      const clientDir = path.join(ROOT, 'client');
      // --dry-run still runs prepack (the build into client/dist) and lists what the tarball would hold.
      const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false'], {
        cwd: clientDir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const [packed] = JSON.parse(output.slice(output.indexOf('['))) as { name: string; files: { path: string }[] }[];
      expect(packed!.name).toBe('@campaign-enrichment/client');
      expect(packed!.files.map((file) => file.path).sort()).toEqual([
        'README.md',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/mcp-protocol.d.ts',
        'dist/mcp-protocol.js',
        'dist/mcp-stdio.d.ts',
        'dist/mcp-stdio.js',
        'dist/mcp.d.ts',
        'dist/mcp.js',
        'dist/schema.d.ts',
        'dist/webhooks.d.ts',
        'dist/webhooks.js',
        'package.json',
      ]);
      const manifest = JSON.parse(readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
      expect(manifest).toMatchObject({ type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } });
      const built = (await import(pathToFileURL(path.join(clientDir, 'dist/index.js')).href)) as typeof import('../client/index');
      const client = built.createCampaignEnrichmentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'cek_x' }) as unknown as Record<
        string,
        unknown
      >;
      for (const operation of operations) expect(typeof client[operation.operationId], operation.operationId).toBe('function');
      expect(readFileSync(path.join(clientDir, 'dist/index.d.ts'), 'utf8')).toContain("from './schema.js'");
    },
    SPAWNED_RUN_MS,
  );
});
