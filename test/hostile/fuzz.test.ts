/**
 * Hostile input, property-based (issue item 1): every operation, over real
 * HTTP, with arbitrary JSON values, values of the wrong type, numbers beyond
 * 9007199254740991 (negative, fractional, exponent forms), deep nesting,
 * prototype-pollution keys, invalid UTF-8, NUL bytes, duplicated form keys,
 * malformed multipart boundaries and bodies of every content type under
 * mismatched headers.
 *
 * Every answer must be the `{ data, error }` envelope with a code documented
 * for the operation and its documented status (contract.ts), never a 5xx,
 * never a hang (each request has a deadline). Where an independent oracle
 * (oracle.ts, written from the spec) can tell, the answer must also be the
 * right one: a valid body is served, an invalid one is `invalid_request`
 * whose issues name the offending field. The last test proves the fuzzed
 * organization's data is exactly as it was before (docs/errors.md: a refused
 * request changes nothing).
 *
 * Run sizes are bounded (fast-check numRuns per property) so the file stays
 * within the suite's time budget.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newOrganization, useApi } from '../support/api';
import { OPERATIONS, OPERATION_NAMES, envelopeViolations, send, type OperationName, type RawAnswer } from './support/contract';
import { FIELDS, formFieldVerdict, jsonBodyValid, type FormVerdict } from './support/oracle';
import { createDraft, createEnriched, organizationSnapshot, uniquePrefix, warehouseAccounts } from './support/fixtures';
import { capturingUncaught } from './support/uncaught';
import { MAX_NESTING_DEPTH } from '../../lib/http/depth';

const api = useApi();

/** The fuzzed organization: a draft D and an enriched campaign E; invalid requests go here and must change nothing. */
let G: { organizationId: string; apiKey: string; draft: string; enriched: string };
/** A scratch organization that receives the creates the oracle says are valid. */
let C: { organizationId: string; apiKey: string };
let before: Awaited<ReturnType<typeof organizationSnapshot>>;
const prototypeNames = () => Object.getOwnPropertyNames(Object.prototype).sort();
const prototypeBefore = prototypeNames();

/** Scales every property's run count (HOSTILE_RUNS_SCALE=5 for a deeper, slower pass; default 1). */
const runs = (n: number) => Math.max(1, Math.round(n * Number(process.env.HOSTILE_RUNS_SCALE ?? 1)));

/** A well-formed campaign ID no organization holds. */
const UNKNOWN_ID = 'camp_7Hq2kXv9LmN3pR5sT8wYz';
const BOUNDARY = 'hostileBoundary7Fq2Lm9Xw';

beforeAll(async () => {
  const p = uniquePrefix();
  const ids = await warehouseAccounts(p, 4);
  // Thousands of requests from these organizations: the request rate (docs/limits.md) is test/rate-limit.test.ts's.
  const g = await newOrganization({ name: 'Fuzzed', smbCredits: 1_000, limits: { requests: 1_000_000 } });
  const draft = await createDraft(api(), g.apiKey, ids.slice(0, 2), 'Fuzz draft');
  const enriched = await createEnriched(api(), g.apiKey, ids.slice(2, 4), 'Fuzz enriched');
  G = { ...g, draft, enriched };
  C = await newOrganization({ name: 'Scratch', limits: { requests: 1_000_000 } });
  before = await organizationSnapshot(G.organizationId, G.apiKey);
});

afterAll(() => {
  // Nothing any request sent may reach Object.prototype of the server's process (it is this process).
  expect(prototypeNames()).toEqual(prototypeBefore);
});

// ---------------------------------------------------------------------------
// Sending and judging
// ---------------------------------------------------------------------------

/** An answer and the exceptions the server raised uncaught while producing it. */
type Answer = RawAnswer & { uncaught: Error[] };

/** Sends a body to `op` as organization G (or C for a valid create); a request that hangs throws after `timeoutMs`. */
async function hit(
  op: OperationName,
  body: string | Buffer | undefined,
  contentType: string | undefined,
  as: 'G' | 'C' = 'G',
  timeoutMs = 20_000,
): Promise<Answer> {
  const apiKey = as === 'G' ? G.apiKey : C.apiKey;
  const { result, uncaught } = await capturingUncaught(() =>
    send(api(), OPERATIONS[op], { authorization: `Bearer ${apiKey}`, contentType, body, timeoutMs }),
  );
  return { ...result, uncaught };
}

/** Deepest bracket nesting of a JSON text (V8 cannot revive JSON nested beyond about 2,500 levels: such a body "could not be parsed"). */
function nesting(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

/** The answer a valid request of `op` gets for the campaign it names (fixtures: D draft, E enriched, others unknown). */
function validOutcome(op: OperationName, campaignId: unknown): { status: number; code?: string } {
  const known = campaignId === G.enriched || campaignId === G.draft;
  switch (op) {
    case 'describe':
    case 'list':
    case 'create':
      return { status: 200 };
    case 'get':
      return known ? { status: 200 } : { status: 404, code: 'not_found' };
    case 'update':
      return campaignId === G.enriched ? { status: 409, code: 'campaign_not_editable' } : { status: 404, code: 'not_found' };
    case 'enrich':
      return campaignId === G.enriched ? { status: 409, code: 'campaign_not_enrichable' } : { status: 404, code: 'not_found' };
    case 'export':
      return campaignId === G.enriched ? { status: 200 } : { status: 404, code: 'not_found' };
  }
}

/** Contract violations plus, when the oracle decides, whether the answer is the right one. */
function judge(
  op: OperationName,
  res: Answer,
  expectation: { verdict: FormVerdict; blame?: string[]; campaignId?: unknown; parsed?: boolean },
): string[] {
  const v = [
    ...res.uncaught.map((error) => `the server raised an uncaught exception while answering: ${error.name}: ${error.message}`),
    ...envelopeViolations(op, res),
  ];
  if (v.length > 0) return v;
  const code = res.body.error?.code;
  if (expectation.verdict === 'valid') {
    const want = validOutcome(op, expectation.campaignId);
    if (res.status !== want.status || (want.code && code !== want.code))
      v.push(`a valid ${op} body got ${res.status} ${res.text.slice(0, 300)}; expected ${want.status} ${want.code ?? ''}`);
  } else if (expectation.verdict === 'invalid') {
    if (res.status !== 400 || code !== 'invalid_request')
      v.push(`an invalid ${op} body got ${res.status} ${res.text.slice(0, 300)}; expected 400 invalid_request`);
    else if (expectation.parsed) {
      const issues: string[] = res.body.error.details?.issues ?? [];
      if (issues.length === 0)
        v.push(`invalid_request for a body that parsed must carry details.issues (docs/errors.md): ${res.text.slice(0, 300)}`);
      else if (expectation.blame && !issues.some((line) => expectation.blame!.some((field) => line.startsWith(field)))) {
        v.push(`issues ${JSON.stringify(issues)} name none of ${JSON.stringify(expectation.blame)}`);
      }
    }
  }
  return v;
}

const expectNoViolations = (violations: string[], context: unknown) => {
  if (violations.length > 0)
    throw new Error(
      `${violations.join('\n')}\n  request: ${typeof context === 'string' ? context : JSON.stringify(context)?.slice(0, 600)}`,
    );
};

/** Builds a JSON object text from already-serialized member values (keeps raw number tokens such as 1e400 as written). */
const objectText = (members: [string, string][]) => `{${members.map(([k, t]) => `${JSON.stringify(k)}:${t}`).join(',')}}`;

/** A urlencoded body from pairs (repeated keys allowed). */
const urlencoded = (pairs: [string, string][]) => new URLSearchParams(pairs).toString();

/** A multipart body from pairs, every part a plain field. */
const multipart = (pairs: [string, string][], boundary = BOUNDARY) =>
  pairs.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
  `--${boundary}--\r\n`;
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

// ---------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------

/** Number tokens as they can be written in JSON: beyond 2^53, negative, fractional, exponent forms, ±0, overflow. */
const numberToken = fc.oneof(
  fc.constantFrom(
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '-9007199254740991',
    '-9007199254740993',
    '18446744073709551616',
    '1e16',
    '1E2',
    '1e+2',
    '100e-2',
    '1e400',
    '-1e400',
    '1e-400',
    '-0',
    '0',
    '-1',
    '1.5',
    '1.0',
    '0.1e1',
    '3650',
    '3651',
    '3650.5',
    '100',
    '101',
    '25',
    '4.2e1',
    '123456789012345678901234567890',
    '0.000001',
  ),
  fc.integer({ min: -200, max: 4_000 }).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? '-0' : String(d))),
  fc
    .tuple(fc.integer({ min: -99, max: 99 }), fc.constantFrom('e', 'E'), fc.integer({ min: -30, max: 400 }))
    .map(([m, e, x]) => `${m}${e}${x}`),
);

/** Deeply nested arrays or objects, as text. */
const deepText = (depth: number, kind: 'array' | 'object') =>
  kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Strings worth trying anywhere a string goes. */
const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '   ',
    '\u0000',
    'a\u0000b',
    '\t',
    '\r\n',
    '\u202e',
    '\ufeff',
    '\ud800',
    '\udfff',
    'null',
    'true',
    '5',
    '1e2',
    'camp_',
    UNKNOWN_ID,
    `${UNKNOWN_ID} `,
    'CAMP_7HQ2KXV9LMN3PR5ST8WYZ',
    'camp_0OIl0OIl0OIl0OIl0OIl0',
    'draft',
    'api',
    '<script>',
    "'; DROP TABLE",
    '%00',
    '../../etc/passwd',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 190, maxLength: 260 }),
);

/** A JSON value text that is likely wrong for whatever field it lands in. */
const hostileValueText = fc.oneof(
  { weight: 4, arbitrary: numberToken },
  { weight: 3, arbitrary: nastyString.map((s) => JSON.stringify(s)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'null',
      'true',
      'false',
      '[]',
      '{}',
      '[1]',
      '["draft"]',
      '["api","ui"]',
      '[null]',
      '{"status":"draft"}',
      '{"status":[]}',
      '{"status":["draft","draft","draft","draft","draft","draft","draft","draft","draft","draft","draft"]}',
      '{"createdVia":"x"}',
      '{"foo":1}',
      '["a"]',
      '[""]',
      '["a\\u0000"]',
      '[1,2]',
    ),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 50, max: 3_000 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([d, k]) => deepText(d, k)),
  },
  { weight: 1, arbitrary: fc.array(nastyString, { minLength: 1, maxLength: 5 }).map((a) => JSON.stringify(a)) },
);

/** A valid JSON body of each operation (the base a mutation starts from); `id` is the campaign it names. */
function validMembers(op: OperationName, id: string): [string, string][] {
  switch (op) {
    case 'describe':
      return [];
    case 'create':
      return [
        ['name', '"Fuzz"'],
        ['accountIds', '["fz_1","fz_2"]'],
      ];
    case 'update':
      return [
        ['campaignId', JSON.stringify(id)],
        ['name', '"Renamed"'],
      ];
    case 'get':
    case 'enrich':
      return [['campaignId', JSON.stringify(id)]];
    case 'list':
      return [['limit', '10']];
    case 'export':
      return [
        ['campaignId', JSON.stringify(id)],
        ['maxContactsPerAccount', '2'],
      ];
  }
}

/** Where a request goes so that only refused requests ever reach the fuzzed organization's mutable draft. */
function route(op: OperationName, body: unknown, valid: boolean): { as: 'G' | 'C'; campaignId: string } {
  if (op === 'create') return { as: valid ? 'C' : 'G', campaignId: '' };
  // A valid update or enrich names the enriched campaign (refused with 409, nothing changes); an invalid one names the draft.
  const named = (body as { campaignId?: unknown } | null)?.campaignId;
  return { as: 'G', campaignId: typeof named === 'string' ? named : '' };
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

describe('arbitrary JSON values', () => {
  it('every operation answers any JSON value in the envelope with a documented code; non-objects and unknown members are invalid_request naming the body or the member', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OPERATION_NAMES), fc.jsonValue({ maxDepth: 4 }), async (op, value) => {
        const text = JSON.stringify(value);
        const { valid, blame } = jsonBodyValid(op, value);
        const { as, campaignId } = route(op, value, valid);
        const res = await hit(op, text, 'application/json', as);
        expectNoViolations(judge(op, res, { verdict: valid ? 'valid' : 'invalid', blame, campaignId, parsed: true }), { op, text });
      }),
      { numRuns: runs(80) },
    );
  });
});

describe('wrong types, huge numbers, exponent forms, out-of-range values (JSON)', () => {
  it('replacing any field of a valid body with a hostile value is served when the spec allows the value, and is invalid_request naming the field otherwise', async () => {
    const mutation = fc.record({
      op: fc.constantFrom(...OPERATION_NAMES),
      kind: fc.constantFrom('replace', 'replace', 'replace', 'add'),
      fieldPick: fc.nat(),
      extraKey: fc.oneof(
        fc.constantFrom(
          'foo',
          'toString',
          'valueOf',
          'hasOwnProperty',
          'prototype',
          'constructor',
          'isPrototypeOf',
          'campaignID',
          'Limit',
          '',
        ),
        fc.string({ maxLength: 12 }),
      ),
      value: hostileValueText,
    });
    await fc.assert(
      fc.asyncProperty(mutation, async ({ op, kind, fieldPick, extraKey, value }) => {
        const fields = FIELDS[op];
        const addKey = kind === 'add' || fields.length === 0;
        const key = addKey ? (fields.includes(extraKey) ? `${extraKey}_x` : extraKey) : fields[fieldPick % fields.length]!;
        // Decide the target campaign from the oracle: valid bodies name E, invalid ones D (they must not touch it).
        const probe = (id: string) => {
          const members = validMembers(op, id).filter(([k]) => k !== key);
          members.push([key, value]);
          return objectText(members);
        };
        const parsedWithE = JSON.parse(probe(G.enriched));
        const { valid } = jsonBodyValid(op, parsedWithE);
        const text = probe(valid ? G.enriched : G.draft);
        const parsed = JSON.parse(text);
        const { blame } = jsonBodyValid(op, parsed);
        const { as, campaignId } = route(op, parsed, valid);
        const res = await hit(op, text, 'application/json', as);
        expectNoViolations(judge(op, res, { verdict: valid ? 'valid' : 'invalid', blame, campaignId, parsed: nesting(text) < 1_000 }), {
          op,
          text: text.slice(0, 400),
        });
      }),
      { numRuns: runs(100) },
    );
  });
});

/** A valid form body of each operation as name/value pairs (`id`: the campaign it names; describe takes none). */
const validFormPairs = (op: OperationName, id: string): [string, string][] =>
  ({
    describe: [],
    create: [
      ['name', 'Fuzz'],
      ['accountIds', 'fz_1'],
    ],
    update: [
      ['campaignId', id],
      ['name', 'Renamed'],
    ],
    get: [['campaignId', id]],
    list: [['limit', '10']],
    enrich: [['campaignId', id]],
    export: [['campaignId', id]],
  })[op] as [string, string][];

describe('wrong types and ranges as form text (urlencoded and multipart)', () => {
  const formField: Record<OperationName, string[]> = {
    describe: ['foo'],
    create: ['name', 'accountIds', 'excludeEnrichedWithinDays'],
    update: ['name', 'excludeEnrichedWithinDays', 'campaignId'],
    get: ['campaignId'],
    list: ['limit', 'filters[status]', 'filters[createdVia]', 'cursor'],
    enrich: ['campaignId'],
    export: ['maxContactsPerAccount', 'hasMobilePhone', 'hasEmail', 'campaignId'],
  };
  const baseForm = validFormPairs;
  const formText = fc.oneof(
    fc.constantFrom(
      '5',
      '0',
      '1',
      '100',
      '101',
      '3650',
      '3651',
      '9007199254740991',
      '9007199254740992',
      '-1',
      '-0',
      '1.0',
      '1.5',
      ' 5',
      '5 ',
      '+5',
      '1e2',
      '0x10',
      '1_000',
      'Infinity',
      'NaN',
      '',
      'null',
      'true',
      'false',
      'TRUE',
      'yes',
      'draft',
      'enriched',
      'api',
      'ui',
      'data_cube',
      'bogus',
      UNKNOWN_ID,
      '\u0000',
      'a\u0000b',
      '\ud800',
    ),
    nastyString,
    fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String),
  );
  it.each(['urlencoded', 'multipart'] as const)('%s: every field of every operation with hostile text', async (encoding) => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OPERATION_NAMES), fc.nat(), formText, async (op, pick, text) => {
        const field = formField[op][pick % formField[op].length]!;
        const verdict: FormVerdict = op === 'describe' ? 'invalid' : formFieldVerdict(field, text);
        // Valid (or maybe valid) bodies name E; surely invalid ones name D.
        const id = field === 'campaignId' ? text : verdict === 'invalid' ? G.draft : G.enriched;
        const pairs = baseForm(op, id).filter(([k]) => k !== field);
        pairs.push([field, text]);
        const as = op === 'create' && verdict !== 'invalid' ? 'C' : 'G';
        const body = encoding === 'urlencoded' ? urlencoded(pairs) : multipart(pairs);
        const res = await hit(op, body, encoding === 'urlencoded' ? 'application/x-www-form-urlencoded' : MULTIPART, as);
        const blame = [field.replace(/\[.*$/, ''), 'body'];
        expectNoViolations(judge(op, res, { verdict, blame, campaignId: id, parsed: true }), { op, encoding, pairs });
      }),
      { numRuns: runs(50) },
    );
  });
});

describe('invalid UTF-8 and NUL bytes', () => {
  const badBytes = fc.constantFrom<readonly number[]>(
    [0x00],
    [0xff],
    [0xfe],
    [0xc0, 0x80],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0x80],
    [0xed, 0xa0, 0x80],
    [0xed, 0xbf, 0xbf],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
    [0xe2, 0x82],
    [0x80],
    [0xbf],
    [0xef, 0xbb, 0xbf],
    [0x0d],
    [0x0a],
    [0x22],
    [0x5c],
  );
  // describe takes no field: one unknown pair gives the body something to break.
  const multipartPairs = (op: OperationName): [string, string][] => (op === 'describe' ? [['x', 'y']] : validFormPairs(op, G.enriched));
  const bodyOf = (op: OperationName, encoding: 'json' | 'urlencoded'): string =>
    encoding === 'json' ? objectText(op === 'describe' ? [['x', '"y"']] : validMembers(op, G.enriched)) : urlencoded(multipartPairs(op));
  it('bodies of every encoding with invalid UTF-8 sequences and NUL bytes spliced in anywhere are answered in the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATION_NAMES),
        fc.constantFrom('json' as const, 'urlencoded' as const, 'multipart' as const),
        fc.array(fc.tuple(fc.nat(), badBytes), { minLength: 1, maxLength: 6 }),
        async (op, encoding, splices) => {
          const splice = (target: Buffer, at: number, seq: number[]) => {
            const i = at % (target.length + 1);
            return Buffer.concat([target.subarray(0, i), Buffer.from(seq), target.subarray(i)]);
          };
          let bytes: Buffer;
          if (encoding === 'multipart') {
            // Inside field names and values only: a broken part structure is the subject of the multipart tests below.
            const pairs = multipartPairs(op).map(([n, v]) => [Buffer.from(n), Buffer.from(v)] as [Buffer, Buffer]);
            for (const [at, seq] of splices) {
              const [pair, side] = [pairs[at % pairs.length]!, (at >> 4) % 2];
              pair[side] = splice(
                pair[side]!,
                at >> 5,
                [...seq].filter((b) => b !== 0x0d && b !== 0x0a && b !== 0x22),
              );
            }
            bytes = Buffer.concat([
              ...pairs.flatMap(([n, v]) => [
                Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="`),
                n,
                Buffer.from('"\r\n\r\n'),
                v,
                Buffer.from('\r\n'),
              ]),
              Buffer.from(`--${BOUNDARY}--\r\n`),
            ]);
          } else {
            bytes = Buffer.from(bodyOf(op, encoding), 'utf8');
            for (const [at, seq] of splices) bytes = splice(bytes, at, [...seq]);
          }
          const contentType =
            encoding === 'json' ? 'application/json' : encoding === 'urlencoded' ? 'application/x-www-form-urlencoded' : MULTIPART;
          // A corrupted create may still be a valid create (a name with U+FFFD): it goes to the scratch organization.
          const res = await hit(op, bytes, contentType, op === 'create' ? 'C' : 'G');
          expectNoViolations(judge(op, res, { verdict: 'either', campaignId: G.enriched }), {
            op,
            encoding,
            bytes: bytes.toString('base64'),
          });
        },
      ),
      { numRuns: runs(70) },
    );
  });

  it('a campaign ID carrying a NUL byte, an invalid UTF-8 sequence or a lone surrogate is invalid_request in every encoding, never a lookup', async () => {
    const tails = [Buffer.from([0x00]), Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0x80])];
    for (const op of ['get', 'enrich', 'export', 'update'] as const) {
      for (const tail of tails) {
        const raw = Buffer.concat([Buffer.from(G.draft.slice(0, -1)), tail]);
        const extra = op === 'update' ? ',"name":"x"' : '';
        const bodies: [string, Buffer][] = [
          ['application/json', Buffer.concat([Buffer.from('{"campaignId":"'), raw, Buffer.from(`"${extra}}`)])],
          [
            'application/x-www-form-urlencoded',
            Buffer.concat([Buffer.from('campaignId='), raw, Buffer.from(op === 'update' ? '&name=x' : '')]),
          ],
          [
            MULTIPART,
            Buffer.concat([
              Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="campaignId"\r\n\r\n`),
              raw,
              Buffer.from(
                `\r\n${op === 'update' ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n` : ''}--${BOUNDARY}--\r\n`,
              ),
            ]),
          ],
        ];
        for (const [contentType, body] of bodies) {
          const res = await hit(op, body, contentType);
          // A raw NUL inside a JSON string is a parse error (no issues); everything else parses and names campaignId.
          expectNoViolations(
            judge(op, res, {
              verdict: 'invalid',
              blame: ['campaignId'],
              parsed: !(contentType === 'application/json' && tail[0] === 0x00),
            }),
            { op, contentType, body: body.toString('base64') },
          );
        }
      }
    }
  });
});

describe('bodies of every content type under mismatched headers', () => {
  type Kind = 'json' | 'urlencoded' | 'multipart';
  const headers: [string | undefined, Kind | null][] = [
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['APPLICATION/JSON', 'json'],
    ['application/vnd.api+json', 'json'],
    ['application/x-www-form-urlencoded', 'urlencoded'],
    ['application/x-www-form-urlencoded; charset=UTF-8', 'urlencoded'],
    [MULTIPART, 'multipart'],
    [`multipart/form-data; boundary="${BOUNDARY}"`, 'multipart'],
    ['multipart/form-data; boundary=someOtherBoundary', null],
    ['multipart/form-data', null],
    [`multipart/mixed; boundary=${BOUNDARY}`, null],
    ['text/plain', null],
    ['text/plain; charset=utf-8', null],
    ['application/xml', null],
    ['application/octet-stream', null],
    ['application/jsonx', null],
    ['application/json, text/plain', null],
    ['*/*', null],
    ['', null],
    [undefined, null],
  ];
  const bodies = (op: OperationName): [Kind | 'other', string][] => {
    const id = G.enriched;
    const pairs: [string, string][] = (
      {
        describe: [],
        create: [
          ['name', 'Mismatch'],
          ['accountIds', 'mm_1'],
        ],
        update: [
          ['campaignId', id],
          ['name', 'Renamed'],
        ],
        get: [['campaignId', id]],
        list: [['limit', '3']],
        enrich: [['campaignId', id]],
        export: [['campaignId', id]],
      } as Record<OperationName, [string, string][]>
    )[op];
    const json = JSON.stringify(Object.fromEntries(pairs.map(([k, v]) => [k, k === 'limit' ? Number(v) : k === 'accountIds' ? [v] : v])));
    const list: [Kind | 'other', string][] = [
      ['json', json],
      ['multipart', multipart(pairs)],
      ['other', `<request><campaignId>${id}</campaignId></request>`],
      ['other', 'just some text'],
      ['other', '\u0001\u0002binary\u00ff'],
    ];
    // An empty urlencoded body is no body at all: only non-empty ones take part.
    if (pairs.length > 0) list.push(['urlencoded', urlencoded(pairs)]);
    return list;
  };
  it('a body is parsed only under the content type of its own encoding; under any other header it is invalid_request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OPERATION_NAMES), fc.nat(), fc.nat(), async (op, b, h) => {
        const options = bodies(op);
        const [kind, body] = options[b % options.length]!;
        const [contentType, headerKind] = headers[h % headers.length]!;
        const matches = headerKind !== null && headerKind === kind;
        const res = await hit(op, body, contentType, op === 'create' && matches ? 'C' : 'G');
        expectNoViolations(judge(op, res, { verdict: matches ? 'valid' : 'invalid', campaignId: G.enriched }), {
          op,
          kind,
          contentType,
          body: body.slice(0, 200),
        });
      }),
      { numRuns: runs(80) },
    );
  });
});

describe('malformed multipart bodies and boundaries', () => {
  const mutations = [
    'no-closing-boundary',
    'lf-only',
    'truncate',
    'preamble',
    'epilogue',
    'no-disposition',
    'no-name',
    'empty-name',
    'header-without-colon',
    'boundary-mismatch',
    'boundary-in-value',
    'duplicate-part',
    'file-part',
    'long-header',
    'garbage-between',
    'no-blank-line',
    'quoted-name-escape',
    'transfer-encoding',
    'nested-multipart',
    'only-closing',
    'boundary-prefix-only',
    'huge-part-count',
  ] as const;
  type Mutation = (typeof mutations)[number];
  const build = (fields: [string, string][], mutation: Mutation, cut: number): { body: string; contentType: string } => {
    const B = BOUNDARY;
    const part = (name: string, value: string, headers = `Content-Disposition: form-data; name="${name}"`) =>
      `--${B}\r\n${headers}\r\n\r\n${value}\r\n`;
    const ok = fields.map(([n, v]) => part(n, v)).join('');
    const close = `--${B}--\r\n`;
    let body = ok + close;
    let contentType = MULTIPART;
    switch (mutation) {
      case 'no-closing-boundary':
        body = ok;
        break;
      case 'lf-only':
        body = body.replace(/\r\n/g, '\n');
        break;
      case 'truncate':
        body = body.slice(0, Math.max(1, cut % body.length));
        break;
      case 'preamble':
        body = `This is a preamble.\r\n${body}`;
        break;
      case 'epilogue':
        body = `${body}trailing epilogue text`;
        break;
      case 'no-disposition':
        body = fields.map(([, v]) => `--${B}\r\nContent-Type: text/plain\r\n\r\n${v}\r\n`).join('') + close;
        break;
      case 'no-name':
        body = fields.map(([, v]) => part('', v, 'Content-Disposition: form-data')).join('') + close;
        break;
      case 'empty-name':
        body = fields.map(([, v]) => part('', v)).join('') + close;
        break;
      case 'header-without-colon':
        body = fields.map(([n, v]) => part(n, v, `Content-Disposition form-data name="${n}"`)).join('') + close;
        break;
      case 'boundary-mismatch':
        contentType = 'multipart/form-data; boundary=notTheBoundary';
        break;
      case 'boundary-in-value':
        body = fields.map(([n, v]) => part(n, `${v}\r\n--${B}`)).join('') + close;
        break;
      case 'duplicate-part':
        body = ok + ok + close;
        break;
      case 'file-part':
        body =
          fields
            .map(([n, v]) => part(n, v, `Content-Disposition: form-data; name="${n}"; filename="${n}.txt"\r\nContent-Type: text/plain`))
            .join('') + close;
        break;
      case 'long-header':
        body =
          fields.map(([n, v]) => part(n, v, `Content-Disposition: form-data; name="${n}"\r\nX-Long: ${'x'.repeat(100_000)}`)).join('') +
          close;
        break;
      case 'garbage-between':
        body = fields.map(([n, v]) => `${part(n, v)}garbage\r\n`).join('') + close;
        break;
      case 'no-blank-line':
        body = fields.map(([n, v]) => `--${B}\r\nContent-Disposition: form-data; name="${n}"\r\n${v}\r\n`).join('') + close;
        break;
      case 'quoted-name-escape':
        body = fields.map(([n, v]) => part(n, v, `Content-Disposition: form-data; name="${n}\\"; x="`)).join('') + close;
        break;
      case 'transfer-encoding':
        body =
          fields
            .map(([n, v]) =>
              part(
                n,
                Buffer.from(v).toString('base64'),
                `Content-Disposition: form-data; name="${n}"\r\nContent-Transfer-Encoding: base64`,
              ),
            )
            .join('') + close;
        break;
      case 'nested-multipart':
        body =
          part(
            'campaignId',
            `--inner\r\nContent-Disposition: form-data; name="x"\r\n\r\ny\r\n--inner--`,
            `Content-Disposition: form-data; name="campaignId"\r\nContent-Type: multipart/mixed; boundary=inner`,
          ) + close;
        break;
      case 'only-closing':
        body = close;
        break;
      case 'boundary-prefix-only':
        body = `--${B}`;
        break;
      case 'huge-part-count':
        body = Array.from({ length: 3_000 }, (_, i) => part(`p${i}`, 'x')).join('') + close;
        break;
    }
    return { body, contentType };
  };
  // Bodies that end inside a part, and part headers not closed by a blank line, have their own tests below.
  const ownTests: Mutation[] = ['no-closing-boundary', 'truncate', 'no-blank-line'];
  it('structural mutations of a valid multipart body never crash or hang the parser; duplicated scalar parts are invalid_request', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATION_NAMES.filter((op) => op !== 'describe')),
        fc.constantFrom(...mutations.filter((m) => !ownTests.includes(m))),
        fc.nat(),
        async (op, mutation, cut) => {
          const id = G.enriched;
          const fields: [string, string][] = (
            {
              create: [
                ['name', 'Multipart'],
                ['accountIds', 'mp_1'],
              ],
              update: [
                ['campaignId', id],
                ['name', 'Renamed'],
              ],
              get: [['campaignId', id]],
              list: [['limit', '3']],
              enrich: [['campaignId', id]],
              export: [['campaignId', id]],
            } as Record<string, [string, string][]>
          )[op]!;
          const { body, contentType } = build(fields, mutation, cut);
          const res = await hit(op, body, contentType, op === 'create' ? 'C' : 'G');
          const duplicated = mutation === 'duplicate-part';
          expectNoViolations(
            judge(op, res, { verdict: duplicated ? 'invalid' : 'either', campaignId: id, blame: fields.map(([k]) => k), parsed: true }),
            { op, mutation, body: body.slice(0, 300) },
          );
        },
      ),
      { numRuns: runs(70) },
    );
  });

  it('a multipart body cut short at any byte (e.g. right after a part, before the closing delimiter) is invalid_request, answered promptly, with no uncaught exception in the server', async () => {
    // Minimal case: `--B CRLF Content-Disposition: form-data; name="limit" CRLF CRLF 3 CRLF` and nothing after it.
    // An uncaught exception ends the process: Lambda's runtime (a bare 502, not the envelope) or `npm start` itself.
    const body = multipart([['limit', '3']]);
    const failures: string[] = [];
    for (let cut = 1; cut < body.length; cut++) {
      const truncated = body.slice(0, cut);
      try {
        const res = await hit('list', truncated, MULTIPART, 'G', 3_000);
        const v = judge('list', res, { verdict: 'either' });
        if (v.length > 0) failures.push(`cut after byte ${cut} (…${JSON.stringify(truncated.slice(-20))}): ${v.join('; ')}`);
      } catch (error) {
        failures.push(`cut after byte ${cut} (…${JSON.stringify(truncated.slice(-20))}): ${(error as Error).message}`);
      }
    }
    if (failures.length > 0)
      throw new Error(
        `${failures.length} of ${body.length - 1} cuts of ${JSON.stringify(body)} failed, e.g.:\n${failures.slice(0, 4).join('\n')}`,
      );
  });

  it('a multipart part whose headers are not followed by a blank line is answered (invalid_request) instead of hanging', async () => {
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="limit"\r\n3\r\n--${BOUNDARY}--\r\n`;
    const res = await hit('list', body, MULTIPART, 'G', 3_000).catch((error: Error) => error);
    if (res instanceof Error)
      throw new Error(
        `no answer within 3 s (a Lambda would run until its timeout; the caller gets API Gateway's 503/504, not the envelope): ${res.message}`,
      );
    expectNoViolations(judge('list', res, { verdict: 'invalid' }), body);
  });

  it.each([
    ['boundary longer than 70 characters', `multipart/form-data; boundary=${'b'.repeat(71)}`, 'b'.repeat(71)],
    ['empty boundary parameter', 'multipart/form-data; boundary=', ''],
    ['boundary with a space, unquoted', 'multipart/form-data; boundary=a b', 'a b'],
    ['boundary given twice', `multipart/form-data; boundary=${BOUNDARY}; boundary=other`, BOUNDARY],
    ['boundary with characters RFC 2046 forbids', 'multipart/form-data; boundary=@@@{}', '@@@{}'],
  ])('a content type with %s is answered in the envelope', async (_label, contentType, boundary) => {
    const body = multipart([['campaignId', G.enriched]], boundary);
    const res = await hit('get', body, contentType);
    expectNoViolations(judge('get', res, { verdict: 'either', campaignId: G.enriched }), { contentType });
  });
});

describe('duplicated keys', () => {
  const scalarFields: [OperationName, string, [string, string][]][] = [
    ['get', 'campaignId', []],
    ['enrich', 'campaignId', []],
    ['export', 'campaignId', []],
    ['export', 'maxContactsPerAccount', [['campaignId', '']]],
    ['export', 'hasEmail', [['campaignId', '']]],
    ['update', 'campaignId', [['name', 'x']]],
    ['update', 'name', [['campaignId', '']]],
    ['update', 'excludeEnrichedWithinDays', [['campaignId', '']]],
    ['list', 'limit', []],
    ['list', 'cursor', []],
    ['create', 'name', [['accountIds', 'dup_1']]],
    [
      'create',
      'excludeEnrichedWithinDays',
      [
        ['name', 'x'],
        ['accountIds', 'dup_1'],
      ],
    ],
  ];
  const sample: Record<string, string[]> = {
    campaignId: ['', UNKNOWN_ID, 'x'],
    maxContactsPerAccount: ['1', '2', 'x'],
    hasEmail: ['true', 'false'],
    name: ['a', 'b'],
    excludeEnrichedWithinDays: ['1', '30'],
    limit: ['5', '6'],
    cursor: ['abc', 'def'],
  };
  const duplicate = fc.constantFrom(...scalarFields).chain(([op, field, rest]) =>
    fc.record({
      op: fc.constant(op),
      field: fc.constant(field),
      rest: fc.constant(rest),
      // Repeats of the draft's own ID: a silently accepted first or last value would launch or rename it.
      values:
        field === 'campaignId'
          ? fc.array(fc.constant(G.draft), { minLength: 2, maxLength: 4 })
          : fc.array(fc.constantFrom(...sample[field]!), { minLength: 2, maxLength: 4 }),
      encoding: fc.constantFrom('urlencoded' as const, 'multipart' as const),
    }),
  );
  it('a scalar field repeated in an urlencoded or multipart body is invalid_request naming the field, whatever the values (neither the first nor the last is silently taken)', async () => {
    await fc.assert(
      fc.asyncProperty(duplicate, async ({ op, field, rest, values, encoding }) => {
        const filled = rest.map(([k, v]): [string, string] => [k, v === '' ? G.draft : v]);
        const pairs: [string, string][] = [...filled, ...values.map((value): [string, string] => [field, value])];
        const body = encoding === 'urlencoded' ? urlencoded(pairs) : multipart(pairs);
        const res = await hit(op, body, encoding === 'urlencoded' ? 'application/x-www-form-urlencoded' : MULTIPART);
        expectNoViolations(judge(op, res, { verdict: 'invalid', blame: [field], parsed: true }), { op, encoding, pairs });
      }),
      { numRuns: runs(40) },
    );
  });

  it('a JSON member given twice is answered in the envelope (last one wins, as JSON.parse reads it) and never reaches the draft when the last value is invalid', async () => {
    for (const op of ['get', 'enrich', 'export', 'update'] as const) {
      const text = `{"campaignId":${JSON.stringify(G.draft)},"campaignId":"not-an-id"${op === 'update' ? ',"name":"x"' : ''}}`;
      const res = await hit(op, text, 'application/json');
      expectNoViolations(judge(op, res, { verdict: 'invalid', blame: ['campaignId'], parsed: true }), text);
    }
  });
});

describe('prototype-pollution keys', () => {
  const names = ['__proto__', 'constructor', 'prototype'];
  const paths = (name: string) => [
    name,
    `${name}[polluted]`,
    `filters[${name}]`,
    `filters[${name}][polluted]`,
    `constructor[prototype][${name}]`,
    `a[${name}][b]`,
  ];
  const assertUnpolluted = () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeNames()).toEqual(prototypeBefore);
  };
  it('JSON: __proto__ and constructor.prototype anywhere in the body are invalid_request and pollute nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATION_NAMES),
        fc.constantFrom('__proto__', 'constructor'),
        fc.integer({ min: 0, max: 4 }),
        async (op, name, depth) => {
          const payload = name === '__proto__' ? '{"polluted":true}' : '{"prototype":{"polluted":true}}';
          // depth 0: a top-level member; deeper: inside nested objects under "filters".
          let value = payload;
          for (let i = 1; i < depth; i++) value = `{${JSON.stringify(name)}:${value}}`;
          if (depth > 0) value = `{${JSON.stringify(name)}:${value}}`;
          const members = validMembers(op, G.draft).filter(([k]) => k !== 'filters');
          members.push(depth === 0 ? [name, payload] : ['filters', value]);
          const text = objectText(members);
          const res = await hit(op, text, 'application/json');
          expectNoViolations(judge(op, res, { verdict: 'invalid', blame: [name, 'filters', 'body'] }), text);
          assertUnpolluted();
        },
      ),
      { numRuns: runs(30) },
    );
  });

  it.each(['urlencoded', 'multipart'] as const)(
    '%s: a field named __proto__, constructor or prototype at any bracket depth is invalid_request naming it, and pollutes nothing',
    async (encoding) => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...OPERATION_NAMES), fc.constantFrom(...names), fc.nat(), async (op, name, pick) => {
          // A multipart part named exactly __proto__ has its own test below.
          const options = paths(name).filter((path) => !(encoding === 'multipart' && path === '__proto__'));
          const key = options[pick % options.length]!;
          const base: [string, string][] =
            op === 'describe'
              ? []
              : op === 'list'
                ? [['limit', '5']]
                : op === 'create'
                  ? [
                      ['name', 'x'],
                      ['accountIds', 'pp_1'],
                    ]
                  : [['campaignId', G.draft]];
          const pairs: [string, string][] = [...base, [key, 'polluted']];
          const body = encoding === 'urlencoded' ? urlencoded(pairs) : multipart(pairs);
          const res = await hit(op, body, encoding === 'urlencoded' ? 'application/x-www-form-urlencoded' : MULTIPART);
          expectNoViolations(judge(op, res, { verdict: 'invalid', blame: [key], parsed: true }), { op, encoding, key });
          assertUnpolluted();
        }),
        { numRuns: runs(30) },
      );
    },
  );
});

describe('prototype-pollution keys: a multipart part named exactly __proto__', () => {
  it('is invalid_request naming it, as in JSON and urlencoded bodies (unknown properties are rejected, never dropped), as a plain field or a file part', async () => {
    for (const file of [false, true]) {
      const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="__proto__"${file ? '; filename="p.txt"' : ''}\r\n\r\npolluted\r\n--${BOUNDARY}--\r\n`;
      for (const op of ['describe', 'list'] as const) {
        const res = await hit(op, part, MULTIPART);
        expectNoViolations(judge(op, res, { verdict: 'invalid', blame: ['__proto__'], parsed: true }), { op, part });
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('deep nesting', () => {
  it('deeply nested arrays and objects (up to 200,000 levels) in JSON and bracket paths in forms are invalid_request naming the depth limit, answered promptly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATION_NAMES),
        fc.constantFrom('top' as const, 'known-field' as const, 'unknown-field' as const, 'urlencoded' as const, 'multipart' as const),
        fc.constantFrom('array' as const, 'object' as const),
        fc.oneof(fc.integer({ min: MAX_NESTING_DEPTH + 1, max: 5_000 }), fc.constantFrom(MAX_NESTING_DEPTH + 1, 50_000, 100_000, 200_000)),
        async (op, where, kind, depth) => {
          const field = FIELDS[op][0] ?? 'filters';
          let body: string;
          let contentType = 'application/json';
          if (where === 'top') body = deepText(depth, kind);
          else if (where === 'known-field') body = `{${JSON.stringify(field)}:${deepText(depth, kind)}}`;
          else if (where === 'unknown-field') body = `{"nested":${deepText(depth, kind)}}`;
          else {
            const key = `${field}${'[a]'.repeat(Math.min(depth, 20_000))}`;
            if (where === 'urlencoded') {
              body = `${encodeURIComponent(key).replace(/%5B/g, '[').replace(/%5D/g, ']')}=1`;
              contentType = 'application/x-www-form-urlencoded';
            } else {
              body = multipart([[key, '1']]);
              contentType = MULTIPART;
            }
          }
          const res = await hit(op, body, contentType);
          expectNoViolations(judge(op, res, { verdict: 'invalid' }), { op, where, kind, depth });
          // Refused by the depth guard before any parsing or validation, naming the member it came in.
          const blamed = where === 'top' ? (kind === 'object' ? 'a' : 'body') : where === 'unknown-field' ? 'nested' : field;
          expect(res.body.error.details?.issues).toEqual([`${blamed}: nested deeper than ${MAX_NESTING_DEPTH} levels`]);
          expect(res.ms, `${op} ${where} ${kind} ${depth} took ${Math.round(res.ms)} ms`).toBeLessThan(10_000);
        },
      ),
      { numRuns: runs(25) },
    );
  });

  it('a list whose filters is an array nested 100,000 deep gets the envelope (400 invalid_request), not a dropped connection', async () => {
    for (const kind of ['array', 'object'] as const) {
      const res = await hit('list', `{"filters":${deepText(100_000, kind)}}`, 'application/json');
      expectNoViolations(judge('list', res, { verdict: 'invalid' }), { kind });
      expect(res.body.error.details?.issues).toEqual([`filters: nested deeper than ${MAX_NESTING_DEPTH} levels`]);
    }
  });

  it(`exactly ${MAX_NESTING_DEPTH} levels pass the depth guard and reach validation; ${MAX_NESTING_DEPTH + 1} do not (JSON, urlencoded, multipart)`, async () => {
    // `{"filters": …}` is one level; the value adds the rest. Brackets inside strings do not count.
    const json = (levels: number) => `{"filters":${deepText(levels - 1, 'array')},"note":"${'['.repeat(200)}"}`;
    const form = (levels: number) => `filters${'[a]'.repeat(levels - 1)}`;
    for (const [levels, refused] of [
      [MAX_NESTING_DEPTH, false],
      [MAX_NESTING_DEPTH + 1, true],
    ] as const) {
      const answers = [
        await hit('list', json(levels), 'application/json'),
        await hit('list', `${form(levels)}=1`, 'application/x-www-form-urlencoded'),
        await hit('list', multipart([[form(levels), '1']]), MULTIPART),
      ];
      for (const res of answers) {
        expectNoViolations(judge('list', res, { verdict: 'invalid', blame: ['filters'], parsed: true }), { levels });
        const nestingIssue = res.body.error.details.issues.includes(`filters: nested deeper than ${MAX_NESTING_DEPTH} levels`);
        expect(nestingIssue, `${levels} levels: ${JSON.stringify(res.body.error.details.issues)}`).toBe(refused);
      }
    }
  });
});

describe('create: form field names', () => {
  it('accountIdsFile given as a nested form field (accountIdsFile[x]=…) is invalid_request, not a crash', async () => {
    for (const [contentType, body] of [
      ['application/x-www-form-urlencoded', 'name=Nested&accountIdsFile[x]=acc_1'],
      [
        MULTIPART,
        multipart([
          ['name', 'Nested'],
          ['accountIdsFile[x]', 'acc_1'],
        ]),
      ],
    ] as const) {
      const res = await hit('create', body, contentType);
      expectNoViolations(judge('create', res, { verdict: 'invalid', blame: ['accountIdsFile', 'accountIds'], parsed: true }), {
        contentType,
        body,
      });
    }
  });

  it('random bracket paths under every create field name are answered in the envelope, never with a 5xx', async () => {
    const names = ['name', 'accountIds', 'accountIdsFile', 'excludeEnrichedWithinDays', 'x'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.constantFrom(...names),
            fc.array(fc.constantFrom('[]', '[0]', '[a]', '[name]', '[]'), { maxLength: 3 }),
            fc.constantFrom('acc_1', 'x', '', '1', 'account_id\nacc_2'),
          ),
          { minLength: 1, maxLength: 5 },
        ),
        fc.constantFrom('urlencoded' as const, 'multipart' as const),
        async (fields, encoding) => {
          // accountIdsFile with a named bracket has its own test above; here it is plain or an array.
          const pairs = fields.map(([n, brackets, v]): [string, string] => [
            `${n}${n === 'accountIdsFile' ? brackets.filter((b) => b === '[]').join('') : brackets.join('')}`,
            v,
          ]);
          const body = encoding === 'urlencoded' ? urlencoded(pairs) : multipart(pairs);
          const res = await hit('create', body, encoding === 'urlencoded' ? 'application/x-www-form-urlencoded' : MULTIPART, 'C');
          expectNoViolations(judge('create', res, { verdict: 'either' }), { encoding, pairs });
        },
      ),
      { numRuns: runs(30) },
    );
  });
});

describe('the database after all of the above', () => {
  it('the fuzzed organization, its campaigns, its ledger and its API key are exactly as before', async () => {
    const after = await organizationSnapshot(G.organizationId, G.apiKey);
    expect(after).toEqual(before);
  });
});
