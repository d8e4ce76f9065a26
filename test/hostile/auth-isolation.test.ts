/**
 * Authentication and tenant isolation under hostile use (issue item 2;
 * docs/pagination.md, docs/authentication.md): every operation with no key, a
 * malformed header, an unknown key, a revoked key (also revoked while
 * requests are in flight), and another organization's key against this
 * organization's campaign IDs and cursors. No answer may carry another
 * organization's data, and nothing of the victim may change.
 */
import fc from 'fast-check';
import pMap from 'p-map';
import { beforeAll, describe, expect, it } from 'vitest';
import { ID_ALPHABET } from '../../lib/ids';
import { apiKeys, organizations } from '../../lib/root';
import { newOrganization, useApi } from '../support/api';
import { OPERATIONS, OPERATION_NAMES, envelopeViolations, send, sendJson, type OperationName, type RawAnswer } from './support/contract';
import { createDraft, createEnriched, directCampaign, organizationSnapshot, uniquePrefix, warehouseAccounts } from './support/fixtures';
import { checkInvariants, waitUntilSettled, type OrganizationBook } from './support/invariants';

const api = useApi();

/** Scales every property's run count (HOSTILE_RUNS_SCALE=5 for a deeper, slower pass; default 1). */
const runs = (n: number) => Math.max(1, Math.round(n * Number(process.env.HOSTILE_RUNS_SCALE ?? 1)));

const BOUNDARY = 'isolationBoundary4Kq9';
const randomKey = (length = 40, alphabet = ID_ALPHABET) =>
  `cek_${Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('')}`;

/** The victim: campaigns in every state, with names that must never appear in anyone else's answers. */
let A: { organizationId: string; apiKey: string; campaigns: Record<string, string>; names: string[] };
/** The attacker: a real organization with its own key and campaigns. */
let B: { organizationId: string; apiKey: string; own: string };
let revokedKey: string;

beforeAll(async () => {
  const p = uniquePrefix();
  const ids = await warehouseAccounts(p, 4);
  // Thousands of requests from these organizations: the request rate (docs/limits.md) is test/rate-limit.test.ts's.
  const a = await newOrganization({ name: `Victim ${p}`, smbCredits: 500, limits: { requests: 1_000_000 } });
  const secret = (label: string) => `SECRET-${p}-${label}`;
  const campaigns: Record<string, string> = {
    apiDraft: await createDraft(api(), a.apiKey, ids.slice(0, 2), secret('apiDraft')),
    apiEnriched: await createEnriched(api(), a.apiKey, ids.slice(2, 4), secret('apiEnriched')),
    uiEnriching: await directCampaign(a.organizationId, 'enriching', secret('uiEnriching')),
    uiExpired: await directCampaign(a.organizationId, 'expired', secret('uiExpired')),
    tamOnly: await directCampaign(a.organizationId, 'tam_only', secret('tamOnly')),
    uiDraft: await directCampaign(a.organizationId, 'ui_draft', secret('uiDraft')),
    dataCubeDraft: await directCampaign(a.organizationId, 'data_cube_draft', secret('dataCubeDraft')),
  };
  // Enough drafts for several list pages at small limits (cursors to steal).
  for (let i = 0; i < 6; i++) campaigns[`more${i}`] = await createDraft(api(), a.apiKey, [`${p}_more_${i}`], secret(`more${i}`));
  A = { ...a, campaigns, names: Object.keys(campaigns).map(secret) };
  const b = await newOrganization({ name: `Attacker ${p}`, smbCredits: 500, limits: { requests: 1_000_000 } });
  B = { ...b, own: await createDraft(api(), b.apiKey, [`${p}_b_1`], 'Attacker draft') };
  const revoked = await newOrganization({ name: `Revoked ${p}` });
  await apiKeys().revoke(revoked.apiKey);
  revokedKey = revoked.apiKey;
});

/** Violations when an answer carries anything of the victim beyond the ID the caller sent. */
function leaks(res: RawAnswer, sentId?: string): string[] {
  const v: string[] = [];
  const text = res.text;
  if (text.includes(A.organizationId)) v.push(`answer carries the victim's organization ID: ${text.slice(0, 200)}`);
  for (const name of A.names) if (text.includes(name)) v.push(`answer carries the victim's campaign name ${name}`);
  for (const id of Object.values(A.campaigns))
    if (id !== sentId && text.includes(id)) v.push(`answer carries a victim campaign ID it was not sent: ${id}`);
  return v;
}

/** A body of each operation naming a victim campaign (valid in every other respect). */
function bodyFor(op: OperationName, campaignId: string): Record<string, unknown> | undefined {
  switch (op) {
    case 'describe':
      return undefined;
    case 'create':
      return { name: 'Intruder', accountIds: ['x_1'] };
    case 'update':
      return { campaignId, name: 'Renamed by an intruder' };
    case 'list':
      return { limit: 5 };
    default:
      return { campaignId };
  }
}

/** Encodes a flat body as JSON, urlencoded or multipart. */
function encode(
  body: Record<string, unknown> | undefined,
  encoding: 'json' | 'urlencoded' | 'multipart',
): { contentType?: string; body?: string } {
  if (body === undefined) return {};
  const pairs = Object.entries(body).flatMap(([k, v]): [string, string][] =>
    Array.isArray(v) ? v.map((x): [string, string] => [k, String(x)]) : [[k, String(v)]],
  );
  if (encoding === 'json') return { contentType: 'application/json', body: JSON.stringify(body) };
  if (encoding === 'urlencoded') return { contentType: 'application/x-www-form-urlencoded', body: new URLSearchParams(pairs).toString() };
  return {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body:
      pairs.map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') +
      `--${BOUNDARY}--\r\n`,
  };
}

const expectClean = (violations: string[], context: unknown) => {
  if (violations.length > 0) throw new Error(`${violations.join('\n')}\n  request: ${JSON.stringify(context).slice(0, 500)}`);
};

describe('no key, a malformed header, an unknown key, a revoked key', () => {
  const printable = fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)));
  const header = fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc
      .constantFrom(
        '',
        'Bearer',
        'Bearer ',
        'bearer',
        'Basic',
        'Token x',
        'Bearer null',
        'Bearer undefined',
        'Bearer cek_',
        'Bearer cek',
        'Negotiate abc',
      )
      .map((h) => ({ kind: 'header' as const, value: () => h })),
    fc.string({ unit: printable, maxLength: 120 }).map((h) => ({ kind: 'header' as const, value: () => h })),
    fc
      .string({ unit: printable, minLength: 1, maxLength: 80 })
      .map((t) => ({ kind: 'header' as const, value: () => `Bearer ${t.trim() || 'x'}` })),
    fc
      .constantFrom<[string, () => string]>(
        ['another scheme carrying a real key', () => `Basic ${A.apiKey}`],
        ['the key without a scheme', () => A.apiKey],
        ['a real key followed by another token', () => `Bearer ${A.apiKey} ${B.apiKey}`],
        ['two real keys in one header', () => `Bearer ${A.apiKey},Bearer ${B.apiKey}`],
        ['a real key with a character appended', () => `Bearer ${A.apiKey}x`],
        ['a real key one character short', () => `Bearer ${A.apiKey.slice(0, -1)}`],
        ['a real key in lower case', () => `Bearer ${A.apiKey.toLowerCase() === A.apiKey ? `${A.apiKey}Z` : A.apiKey.toLowerCase()}`],
        ['a real key with another prefix', () => `Bearer sk_${A.apiKey.slice(4)}`],
        ['39 characters', () => `Bearer ${randomKey(39)}`],
        ['41 characters', () => `Bearer ${randomKey(41)}`],
        ['characters outside base58', () => `Bearer ${randomKey(40, '0OIl+/=')}`],
        ['a very long token', () => `Bearer ${'a'.repeat(8_000)}`],
      )
      .map(([, value]) => ({ kind: 'header' as const, value })),
    fc.constant({ kind: 'unknown' as const }),
    fc.constant({ kind: 'revoked' as const }),
  );
  const bodyKind = fc.constantFrom('victim-valid' as const, 'invalid' as const, 'malformed' as const, 'none' as const);

  it('every operation answers 401 invalid_api_key (or revoked_api_key for a revoked key) with WWW-Authenticate: Bearer, before reading the body, and leaks nothing', async () => {
    const before = await organizationSnapshot(A.organizationId, A.apiKey);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATION_NAMES),
        header,
        bodyKind,
        fc.constantFrom('json' as const, 'urlencoded' as const, 'multipart' as const),
        async (op, h, kind, encoding) => {
          const authorization =
            h.kind === 'none'
              ? undefined
              : h.kind === 'unknown'
                ? `Bearer ${randomKey()}`
                : h.kind === 'revoked'
                  ? `Bearer ${revokedKey}`
                  : h.value();
          const target = A.campaigns.apiDraft!;
          const encoded =
            kind === 'victim-valid'
              ? encode(bodyFor(op, target), encoding)
              : kind === 'invalid'
                ? encode({ campaignId: 'nope', extra: 1 }, encoding)
                : kind === 'malformed'
                  ? { contentType: 'application/json', body: '{"campaignId":' }
                  : {};
          const res = await send(api(), OPERATIONS[op], { authorization, ...encoded });
          const code = h.kind === 'revoked' ? 'revoked_api_key' : 'invalid_api_key';
          const v = [...envelopeViolations(op, res), ...leaks(res)];
          if (res.status !== 401 || res.body?.error?.code !== code)
            v.push(`expected 401 ${code}, got ${res.status} ${res.text.slice(0, 200)}`);
          expectClean(v, { op, authorization: authorization?.slice(0, 80), kind, encoding });
        },
      ),
      { numRuns: runs(150) },
    );
    expect(await organizationSnapshot(A.organizationId, A.apiKey)).toEqual(before);
  });
});

describe('another organization’s key against this organization’s campaigns', () => {
  it('get, update, enrich and export of any victim campaign (every state, every surface, every encoding) answer not_found for exactly the sent ID, and change nothing', async () => {
    const beforeA = await organizationSnapshot(A.organizationId, A.apiKey);
    const beforeB = await organizationSnapshot(B.organizationId, B.apiKey);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('get' as const, 'update' as const, 'enrich' as const, 'export' as const),
        fc.constantFrom(...Object.keys(A.campaigns)),
        fc.constantFrom('json' as const, 'urlencoded' as const, 'multipart' as const),
        fc.record({
          maxContactsPerAccount: fc.option(fc.nat({ max: 5 }), { nil: undefined }),
          hasEmail: fc.option(fc.boolean(), { nil: undefined }),
        }),
        async (op, label, encoding, extras) => {
          const campaignId = A.campaigns[label]!;
          const body = {
            ...bodyFor(op, campaignId)!,
            ...(op === 'export' ? Object.fromEntries(Object.entries(extras).filter(([, v]) => v !== undefined)) : {}),
          };
          const res = await send(api(), OPERATIONS[op], { authorization: `Bearer ${B.apiKey}`, ...encode(body, encoding) });
          const v = [...envelopeViolations(op, res), ...leaks(res, campaignId)];
          if (res.status !== 404) v.push(`expected 404 not_found, got ${res.status} ${res.text.slice(0, 300)}`);
          else
            expect(res.body.error).toEqual({
              code: 'not_found',
              message: expect.any(String),
              details: { resource: 'campaign', id: campaignId },
            });
          expectClean(v, { op, label, encoding, body });
        },
      ),
      { numRuns: runs(100) },
    );
    // Nothing of either organization moved: no lock taken, no charge, no rename.
    expect(await organizationSnapshot(A.organizationId, A.apiKey)).toEqual(beforeA);
    expect(await organizationSnapshot(B.organizationId, B.apiKey)).toEqual(beforeB);
  });

  it('concurrent enrich bursts by another organization on the victim’s draft never take its launch lock, charge anyone, or block the owner', async () => {
    const draft = A.campaigns.apiDraft!;
    const beforeA = await organizationSnapshot(A.organizationId, A.apiKey);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => sendJson(api(), OPERATIONS.enrich, B.apiKey, { campaignId: draft })),
    );
    for (const res of answers)
      expectClean([...envelopeViolations('enrich', res), ...leaks(res, draft), ...(res.status === 404 ? [] : [`got ${res.status}`])], {
        draft,
      });
    expect(await organizationSnapshot(A.organizationId, A.apiKey)).toEqual(beforeA);
    // The owner is not told enrichment_pending: no foreign call left a lock behind.
    const owner = await sendJson(api(), OPERATIONS.get, A.apiKey, { campaignId: draft });
    expect(owner.body.data).toMatchObject({ id: draft, status: 'draft', credits: { charged: 0, remaining: 500 - 2 } });
  });

  it('list with another organization’s key never shows a victim campaign, whatever the filters and page size', async () => {
    const victimIds = new Set(Object.values(A.campaigns));
    const statuses = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'];
    const vias = ['api', 'ui', 'data_cube'];
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.subarray(statuses, { minLength: 1 }), { nil: undefined }),
        fc.option(fc.subarray(vias, { minLength: 1 }), { nil: undefined }),
        fc.integer({ min: 1, max: 100 }),
        async (status, createdVia, limit) => {
          const filters = { ...(status ? { status } : {}), ...(createdVia ? { createdVia } : {}) };
          let cursor: string | undefined;
          for (let page = 0; page < 50; page++) {
            const res = await sendJson(api(), OPERATIONS.list, B.apiKey, { filters, limit, ...(cursor ? { cursor } : {}) });
            expectClean([...envelopeViolations('list', res), ...leaks(res)], { filters, limit });
            expect(res.status).toBe(200);
            for (const item of res.body.data.campaigns) expect(victimIds.has(item.id)).toBe(false);
            cursor = res.body.data.nextCursor ?? undefined;
            if (!cursor) break;
          }
        },
      ),
      { numRuns: runs(25) },
    );
  });

  it('a victim’s cursor sent with the attacker’s key (same filters, same limit, any encoding) is invalid_request and returns no page; and the reverse', async () => {
    const statuses = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'];
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.subarray(statuses, { minLength: 1 }), { nil: undefined }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom('json' as const, 'urlencoded' as const),
        async (status, limit, pages, encoding) => {
          const filters = status ? { status } : {};
          // Walk the victim's pages to a cursor.
          let cursor: string | undefined;
          for (let i = 0; i <= pages; i++) {
            const page = await sendJson(api(), OPERATIONS.list, A.apiKey, { filters, limit, ...(cursor ? { cursor } : {}) });
            expect(page.status).toBe(200);
            const next: string | null = page.body.data.nextCursor;
            if (!next) break;
            cursor = next;
          }
          if (!cursor) return;
          const stolen =
            encoding === 'json'
              ? await sendJson(api(), OPERATIONS.list, B.apiKey, { filters, limit, cursor })
              : await send(api(), OPERATIONS.list, {
                  authorization: `Bearer ${B.apiKey}`,
                  contentType: 'application/x-www-form-urlencoded',
                  body: new URLSearchParams([
                    ...(status ?? []).map((s): [string, string] => ['filters[status]', s]),
                    ['limit', String(limit)],
                    ['cursor', cursor],
                  ]).toString(),
                });
          const v = [...envelopeViolations('list', stolen), ...leaks(stolen)];
          if (stolen.status !== 400 || stolen.body.error?.code !== 'invalid_request')
            v.push(`a stolen cursor got ${stolen.status} ${stolen.text.slice(0, 300)}`);
          else if (!stolen.body.error.details?.issues?.some((line: string) => line.startsWith('cursor')))
            v.push(`issues do not name the cursor: ${stolen.text}`);
          expectClean(v, { filters, limit, pages, encoding });
          // The owner's own cursor still works.
          const own = await sendJson(api(), OPERATIONS.list, A.apiKey, { filters, limit, cursor });
          expect(own.status).toBe(200);
        },
      ),
      { numRuns: runs(30) },
    );
    // An attacker's cursor is refused to the victim too.
    const first = await sendJson(api(), OPERATIONS.list, B.apiKey, { limit: 1 });
    await createDraft(api(), B.apiKey, ['x_2'], 'Attacker second');
    const again = await sendJson(api(), OPERATIONS.list, B.apiKey, { limit: 1 });
    const cursor = again.body.data.nextCursor ?? first.body.data.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const reverse = await sendJson(api(), OPERATIONS.list, A.apiKey, { limit: 1, cursor });
    expect(reverse.status).toBe(400);
    expect(reverse.body.error.code).toBe('invalid_request');
  });
});

describe('a key revoked while its requests are in flight', () => {
  it('requests started after the revocation completed all answer revoked_api_key; earlier ones succeed or are refused, never half-done; money and campaigns stay consistent', async () => {
    const p = uniquePrefix();
    const ids = await warehouseAccounts(p, 24);
    const { organizationId, apiKey } = await newOrganization({
      name: `Revocation ${p}`,
      smbCredits: 1_000,
      limits: { requests: 1_000_000 },
    });
    const second = await apiKeys().create(organizationId);
    const drafts = await pMap(ids.slice(0, 20), (id, i) => createDraft(api(), apiKey, [id], `rev-${i}`), { concurrency: 5 });
    const enriched = await createEnriched(api(), apiKey, ids.slice(20, 22), 'rev-enriched');
    const initialCampaigns = drafts.length + 1;

    type Sent = { op: OperationName; started: number; res: RawAnswer; body?: Record<string, unknown> };
    const sent: Sent[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    let stop = false;
    let n = 0;
    const worker = async () => {
      while (!stop) {
        const i = n++;
        const op = (['describe', 'get', 'list', 'create', 'enrich', 'export', 'update'] as const)[i % 7]!;
        const draft = drafts[i % drafts.length]!;
        const body: Record<string, unknown> | undefined = {
          describe: undefined,
          get: { campaignId: draft },
          list: { limit: 10 },
          create: { name: `rev-created-${i}`, accountIds: [ids[22]!] },
          enrich: { campaignId: draft },
          export: { campaignId: enriched },
          update: { campaignId: draft, name: `rev-renamed-${i}` },
        }[op];
        const started = performance.now();
        const res = await sendJson(api(), OPERATIONS[op], apiKey, body);
        sent.push({ op, started, res, ...(body ? { body } : {}) });
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await new Promise((r) => setTimeout(r, 400));
    await apiKeys().revoke(apiKey);
    revokedAt = performance.now();
    await new Promise((r) => setTimeout(r, 400));
    stop = true;
    await Promise.all(workers);

    const v: string[] = [];
    for (const s of sent) {
      v.push(...envelopeViolations(s.op, s.res));
      const code = s.res.body?.error?.code;
      if (code === 'invalid_api_key') v.push(`${s.op}: invalid_api_key for a key that exists (revoked is the answer)`);
      if (s.started > revokedAt && !(s.res.status === 401 && code === 'revoked_api_key'))
        v.push(
          `${s.op} started ${Math.round(s.started - revokedAt)} ms after the revocation answered ${s.res.status} ${s.res.text.slice(0, 120)}`,
        );
    }
    expect(v).toEqual([]);
    const before = sent.filter((s) => s.started < revokedAt);
    const after = sent.filter((s) => s.started > revokedAt);
    expect(before.some((s) => s.res.status === 200)).toBe(true);
    expect(after.length).toBeGreaterThan(0);

    // The organization's other key still works and sees exactly what the revoked key managed to do.
    expect((await sendJson(api(), OPERATIONS.describe, second)).status).toBe(200);
    const created = sent.filter((s) => s.op === 'create' && s.res.status === 200).map((s) => s.res.body.data.id as string);
    const book: OrganizationBook = { organizationId, apiKey: second, startingBalance: 1_000, adjustments: 0 };
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await sendJson(api(), OPERATIONS.list, second, { limit: 100, ...(cursor ? { cursor } : {}) });
      listed.push(...page.body.data.campaigns.map((c: { id: string }) => c.id));
      cursor = page.body.data.nextCursor ?? undefined;
    } while (cursor);
    expect(listed.length).toBe(initialCampaigns + created.length);
    for (const id of created) expect(listed).toContain(id);
    // Launches that answered 200 run to their end; then every invariant holds.
    const pending = await waitUntilSettled([book], new Map([[organizationId, listed]]));
    expect(pending).toEqual([]);
    const report = await checkInvariants(api(), [book], { settled: true, quiescent: true, checkCeiling: true });
    expect(report.violations).toEqual([]);
  });
});
