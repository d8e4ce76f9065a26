/**
 * Unit tests of the pipeline's pure parts: issue formatting, form bodies,
 * the error family and identifiers (docs/errors.md, docs/pagination.md, docs/authentication.md).
 */
import { createHash } from 'node:crypto';
import httpMultipartBodyParser from '@middy/http-multipart-body-parser';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues, formatPath } from '../../lib/http/issues';
import { formSchemaOf, isUploadedFile, multipartToFields, nestFormFields } from '../../lib/http/form';
import {
  ApiError,
  CampaignNotCancelableError,
  CampaignNotEditableError,
  CampaignNotEnrichableError,
  ConcurrencyLimitExceededError,
  ERROR_STATUS,
  ExpiredApiKeyError,
  InsufficientScopeError,
  EnrichmentPendingError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InsufficientCreditsError,
  MethodNotAllowedError,
  retryAfterHeader,
  InternalError,
  InvalidApiKeyError,
  InvalidRequestError,
  NoEligibleAccountsError,
  NotFoundError,
  ResultsExpiredError,
  ResultsNotReadyError,
  RevokedApiKeyError,
  WebhookEndpointDisabledError,
  RateLimitedError,
  SpendLimitExceededError,
  KeySpendLimitExceededError,
  SuppressionLockedError,
  WebhookEndpointLimitReachedError,
  type ErrorCode,
} from '../../lib/errors';
import {
  API_KEY_PATTERN,
  CAMPAIGN_ID_PATTERN,
  ID_ALPHABET,
  ORGANIZATION_ID_PATTERN,
  hashApiKey,
  newApiKey,
  newAttemptId,
  newCampaignId,
  newOrganizationId,
} from '../../lib/ids';

/** The issues zod reports for `input`, formatted; throws if the input passes. */
function issuesOf(
  schema: { safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: { issues: z.core.$ZodIssue[] } } },
  input: unknown,
): string[] {
  const result = schema.safeParse(input);
  if (result.success) throw new Error(`expected ${JSON.stringify(input)} to be rejected, got ${JSON.stringify(result.data)}`);
  return formatIssues(result.error.issues);
}

/** The `details.issues` of the InvalidRequestError `fn` throws. */
function thrownIssues(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).statusCode).toBe(400);
    return (error as InvalidRequestError).details?.issues;
  }
  throw new Error('expected an InvalidRequestError');
}

/** An object with exactly these own entries (lets `__proto__` be a plain key). */
const fields = (entries: [string, unknown][]): Record<string, unknown> => Object.fromEntries(entries);

const STATUS = z.enum(['draft', 'enriching', 'enriched', 'expired', 'tam_only']);

describe('formatPath', () => {
  it.each([
    [[], ''],
    [['limit'], 'limit'],
    [['filters', 'status'], 'filters.status'],
    [['filters', 'status', 0], 'filters.status[0]'],
    [['accountIds', 12], 'accountIds[12]'],
    [['a', 0, 'b', 1, 2], 'a[0].b[1][2]'],
    [[0], '[0]'],
    [[0, 'name'], '[0].name'],
  ] as [PropertyKey[], string][])('formats %j as %j', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe('formatIssues on real zod errors', () => {
  const schema = z.strictObject({
    name: z.string().min(1),
    limit: z.int().min(1).max(100).optional(),
    filters: z.strictObject({ status: z.array(STATUS).optional() }).optional(),
  });

  it('names a nested path with an array index', () => {
    const issues = issuesOf(schema, { name: 'x', filters: { status: ['draft', 'nope'] } });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^filters\.status\[1\]: \S/);
  });

  it('gives one line per problem, each starting with its path, in the order zod reports them', () => {
    const issues = issuesOf(schema, { name: '', limit: 101 });
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^name: \S/);
    expect(issues[1]).toMatch(/^limit: \S.*100/);
  });

  it('turns unrecognized keys into one line per key ending in "unknown property"', () => {
    expect(issuesOf(schema, { name: 'x', foo: 1, bar: 2 })).toEqual(['foo: unknown property', 'bar: unknown property']);
  });

  it('names unrecognized keys inside nested objects by their full path', () => {
    expect(issuesOf(schema, { name: 'x', filters: { createdVia: 'api', x: 1 } })).toEqual([
      'filters.createdVia: unknown property',
      'filters.x: unknown property',
    ]);
  });

  it('mixes unknown properties and value problems', () => {
    const issues = issuesOf(schema, { name: 'x', limit: 'ten', extra: true });
    expect(issues).toHaveLength(2);
    expect(issues).toContain('extra: unknown property');
    expect(issues.find((line) => line.startsWith('limit: '))).toBeDefined();
  });

  it('names the body itself when the problem has no path', () => {
    const issues = issuesOf(schema, []);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^body: \S/);
    expect(issuesOf(z.strictObject({}), 'text')[0]).toMatch(/^body: /);
  });

  it('uses the schema’s own message', () => {
    const custom = z.strictObject({ campaignId: z.string().regex(/^camp_/, { error: 'must be a campaign ID' }) });
    expect(issuesOf(custom, { campaignId: 'x' })).toEqual(['campaignId: must be a campaign ID']);
  });

  it('returns no lines for no issues', () => {
    expect(formatIssues([])).toEqual([]);
  });

  describe('a union (one value or a list, as the list filters take) names what was expected', () => {
    const ALLOWED = '"draft"|"enriching"|"enriched"|"expired"|"tam_only"';
    const oneOrMany = z.strictObject({ filters: z.strictObject({ status: z.union([STATUS, z.array(STATUS).min(1).max(10)]).optional() }) });

    it('lists the allowed values for one bad value', () => {
      expect(issuesOf(oneOrMany, { filters: { status: 'bogus' } })).toEqual([`filters.status: Invalid option: expected one of ${ALLOWED}`]);
      expect(issuesOf(oneOrMany, { filters: { status: 5 } })).toEqual([`filters.status: Invalid option: expected one of ${ALLOWED}`]);
    });

    it('names the bad item of a list, with the allowed values', () => {
      expect(issuesOf(oneOrMany, { filters: { status: ['enriched', 'bogus'] } })).toEqual([
        `filters.status[1]: Invalid option: expected one of ${ALLOWED}`,
      ]);
    });

    it('reports a list that is empty or too long as such', () => {
      expect(issuesOf(oneOrMany, { filters: { status: [] } })).toEqual(['filters.status: Too small: expected array to have >=1 items']);
      expect(issuesOf(oneOrMany, { filters: { status: Array(11).fill('draft') } })).toEqual([
        'filters.status: Too big: expected array to have <=10 items',
      ]);
    });

    it('names every expected type when the value matches no member at all', () => {
      const numberOrText = z.strictObject({ x: z.union([z.number(), z.string()]) });
      expect(issuesOf(numberOrText, { x: true })).toEqual(['x: Invalid input: expected number or string']);
    });
  });
});

describe('nestFormFields', () => {
  it('keeps flat fields as they are', () => {
    expect(nestFormFields({ name: 'Q4', limit: '10' })).toEqual({ name: 'Q4', limit: '10' });
  });

  it('nests bracketed keys such as filters[status]', () => {
    expect(nestFormFields({ 'filters[status]': 'draft', 'filters[createdVia]': 'api', limit: '10' })).toEqual({
      filters: { status: 'draft', createdVia: 'api' },
      limit: '10',
    });
  });

  it('nests several levels deep', () => {
    expect(nestFormFields({ 'a[b][c]': '1', 'a[b][d]': '2', 'a[e]': '3' })).toEqual({ a: { b: { c: '1', d: '2' }, e: '3' } });
  });

  it('keeps a repeated key (already an array) in arrival order under its nested path', () => {
    expect(nestFormFields({ 'filters[status]': ['draft', 'enriched', 'expired'] })).toEqual({
      filters: { status: ['draft', 'enriched', 'expired'] },
    });
  });

  it('treats ids[] as ids and merges both spellings in arrival order', () => {
    expect(nestFormFields({ 'ids[]': ['a', 'b'] })).toEqual({ ids: ['a', 'b'] });
    expect(nestFormFields({ 'ids[]': ['a', 'b'], ids: 'c' })).toEqual({ ids: ['a', 'b', 'c'] });
    expect(nestFormFields({ ids: 'a', 'ids[]': ['b', 'c'] })).toEqual({ ids: ['a', 'b', 'c'] });
  });

  it('leaves keys that are not bracket paths untouched', () => {
    expect(nestFormFields({ 'a]': '1', '[b]': '2', 'c[d': '3' })).toEqual({ 'a]': '1', '[b]': '2', 'c[d': '3' });
  });

  it('does not mutate its input', () => {
    const input = { 'filters[status]': ['draft'] };
    nestFormFields(input);
    expect(input).toEqual({ 'filters[status]': ['draft'] });
  });

  it.each([
    ['__proto__', '__proto__'],
    ['__proto__[polluted]', '__proto__[polluted]'],
    ['filters[__proto__][polluted]', 'filters[__proto__][polluted]'],
    ['constructor[prototype][polluted]', 'constructor[prototype][polluted]'],
    ['constructor', 'constructor'],
    ['a[prototype]', 'a[prototype]'],
  ])('rejects the prototype key %s without polluting Object.prototype', (key, named) => {
    expect(thrownIssues(() => nestFormFields(fields([[key, 'yes']])))).toEqual([`${named}: forbidden property name`]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects a key used first as a value and then as an object', () => {
    expect(
      thrownIssues(() =>
        nestFormFields(
          fields([
            ['filters', 'x'],
            ['filters[status]', 'draft'],
          ]),
        ),
      ),
    ).toEqual(['filters.status: conflicting form fields']);
  });

  it('rejects a key used first as an object and then as a value (the same conflict, other order)', () => {
    // form.ts documents: "@throws InvalidRequestError for ... a key used both as a value and as an object".
    expect(
      thrownIssues(() =>
        nestFormFields(
          fields([
            ['filters[status]', 'draft'],
            ['filters', 'x'],
          ]),
        ),
      ),
    ).toEqual([expect.stringMatching(/^filters(\.status)?: conflicting form fields$/)]);
  });

  it('rejects a key used as an array of values and as an object', () => {
    expect(
      thrownIssues(() =>
        nestFormFields(
          fields([
            ['ids', ['a', 'b']],
            ['ids[x]', 'c'],
          ]),
        ),
      ),
    ).toEqual(['ids.x: conflicting form fields']);
  });

  it('does not confuse field names with Object.prototype members', () => {
    const nested = nestFormFields({ valueOf: '1', toString: 'x' });
    expect(Object.keys(nested).sort()).toEqual(['toString', 'valueOf']);
    expect(nested.valueOf).toBe('1');
    expect(nested.toString).toBe('x');
  });
});

describe('multipartToFields', () => {
  const part = (content: string, filename?: string, mimetype = 'text/plain') => ({
    ...(filename === undefined ? {} : { filename }),
    mimetype,
    content: Buffer.from(content),
  });

  it('turns parts without a file name into text and parts with one into uploaded files', () => {
    const result = multipartToFields({ name: part('Q4 launch'), accountIdsFile: part('acc_1\nacc_2\n', 'ids.csv', 'text/csv') });
    expect(result.name).toBe('Q4 launch');
    expect(result.accountIdsFile).toEqual({
      kind: 'file',
      filename: 'ids.csv',
      mimetype: 'text/csv',
      content: Buffer.from('acc_1\nacc_2\n'),
    });
    expect(isUploadedFile(result.accountIdsFile)).toBe(true);
    expect(isUploadedFile(result.name)).toBe(false);
    expect(isUploadedFile({ kind: 'file', filename: 'x', mimetype: 'text/plain', content: 'not a buffer' })).toBe(false);
  });

  it('decodes text parts as UTF-8', () => {
    expect(multipartToFields({ name: part('Café – Ümlaut 🚀') }).name).toBe('Café – Ümlaut 🚀');
  });

  it('restores arrival order of repeated parts (the parser lists the newest first)', () => {
    expect(multipartToFields({ accountIds: [part('c'), part('b'), part('a')] })).toEqual({ accountIds: ['a', 'b', 'c'] });
  });

  it('does not reorder the parser’s array in place', () => {
    const parts = [part('b'), part('a')];
    multipartToFields({ ids: parts });
    expect(parts.map((p) => p.content.toString())).toEqual(['b', 'a']);
  });

  it('with the real multipart parser configured as the pipeline does, yields the fields in arrival order', async () => {
    const form = new FormData();
    form.append('name', 'Q4');
    form.append('accountIds', 'acc_1');
    form.append('accountIds', 'acc_2');
    form.append('accountIds', 'acc_3');
    form.append('filters[status]', 'draft');
    form.append('filters[status]', 'enriched');
    form.append('accountIdsFile', new Blob(['account_id\nacc_9\n'], { type: 'text/csv' }), 'ids.csv');
    const request = new Request('http://localhost/', { method: 'POST', body: form });
    const event = {
      headers: { 'content-type': request.headers.get('content-type')! },
      body: Buffer.from(await request.arrayBuffer()).toString('base64'),
      isBase64Encoded: true,
    };
    const parser = httpMultipartBodyParser({ disableContentTypeError: true, busboy: { isPartAFile: () => true } });
    await parser.before!({ event, context: {}, response: undefined, error: undefined, internal: {} } as never);

    const nested = nestFormFields(multipartToFields(event.body as never));
    expect(nested).toEqual({
      name: 'Q4',
      accountIds: ['acc_1', 'acc_2', 'acc_3'],
      filters: { status: ['draft', 'enriched'] },
      accountIdsFile: { kind: 'file', filename: 'ids.csv', mimetype: 'text/csv', content: Buffer.from('account_id\nacc_9\n') },
    });
  });
});

describe('formSchemaOf', () => {
  const listLike = z.strictObject({
    limit: z.int().min(1).max(100).optional(),
    hasEmail: z.boolean().optional(),
    excludeEnrichedWithinDays: z.int().min(0).max(3650).nullable().optional(),
    accountIds: z.array(z.string().min(1)).optional(),
    filters: z
      .strictObject({
        status: z.union([STATUS, z.array(STATUS)]).optional(),
      })
      .optional(),
    cursor: z.string().optional(),
  });
  const form = formSchemaOf(listLike);

  it('coerces numeric text where the JSON schema expects a number', () => {
    expect(form.parse({ limit: '10' })).toEqual({ limit: 10 });
    expect(form.parse({ limit: '007' })).toEqual({ limit: 7 });
    expect(form.parse({ excludeEnrichedWithinDays: '0' })).toEqual({ excludeEnrichedWithinDays: 0 });
  });

  it('reads exactly the text the OpenAPI document allows (issue #34): no surrounding space, no fraction for an integer', () => {
    for (const text of [' 100 ', ' 3', '3 ', '1.0', '+3', '1e2', '0x10'])
      expect(issuesOf(form, { limit: text }), JSON.stringify(text)).toEqual([expect.stringMatching(/^limit: /)]);
  });

  it('keeps the JSON schema strict: text is not a number there', () => {
    expect(issuesOf(listLike, { limit: '10' })).toEqual([expect.stringMatching(/^limit: /)]);
  });

  it('still rejects text that is not a number, an empty value and out-of-range numbers', () => {
    expect(issuesOf(form, { limit: 'ten' })).toEqual([expect.stringMatching(/^limit: /)]);
    expect(issuesOf(form, { limit: '' })).toEqual([expect.stringMatching(/^limit: /)]);
    expect(issuesOf(form, { limit: '   ' })).toEqual([expect.stringMatching(/^limit: /)]);
    expect(issuesOf(form, { limit: '1.5' })).toEqual([expect.stringMatching(/^limit: /)]);
    expect(issuesOf(form, { limit: '101' })).toEqual([expect.stringMatching(/^limit: .*100/)]);
    expect(issuesOf(form, { limit: '0' })).toEqual([expect.stringMatching(/^limit: /)]);
    expect(issuesOf(form, { limit: 'Infinity' })).toEqual([expect.stringMatching(/^limit: /)]);
  });

  it('coerces "true" and "false" where the JSON schema expects a boolean, and nothing else', () => {
    expect(form.parse({ hasEmail: 'true' })).toEqual({ hasEmail: true });
    expect(form.parse({ hasEmail: 'false' })).toEqual({ hasEmail: false });
    expect(issuesOf(form, { hasEmail: 'yes' })).toEqual([expect.stringMatching(/^hasEmail: /)]);
    expect(issuesOf(form, { hasEmail: '' })).toEqual([expect.stringMatching(/^hasEmail: /)]);
  });

  it('names the two texts a form boolean takes: hasEmail=1 answers "expected true or false"', () => {
    expect(issuesOf(form, { hasEmail: '1' })).toEqual(['hasEmail: Invalid input: expected true or false, received "1"']);
    expect(issuesOf(form, { hasEmail: ['true', 'false'] })).toEqual([
      'hasEmail: Invalid input: expected true or false, received several values',
    ]);
  });

  it('turns an empty value (or "null") of a nullable field into null', () => {
    expect(form.parse({ excludeEnrichedWithinDays: '' })).toEqual({ excludeEnrichedWithinDays: null });
    expect(form.parse({ excludeEnrichedWithinDays: 'null' })).toEqual({ excludeEnrichedWithinDays: null });
    expect(form.parse({ excludeEnrichedWithinDays: '30' })).toEqual({ excludeEnrichedWithinDays: 30 });
    expect(issuesOf(form, { excludeEnrichedWithinDays: '-1' })).toEqual([expect.stringMatching(/^excludeEnrichedWithinDays: /)]);
  });

  it('leaves an omitted optional field absent', () => {
    expect(form.parse({})).toEqual({});
    expect(Object.keys(form.parse({}) as object)).toEqual([]);
  });

  it('wraps a single value of an array field in an array, keeps arrays as they are', () => {
    expect(form.parse({ accountIds: 'acc_1' })).toEqual({ accountIds: ['acc_1'] });
    expect(form.parse({ accountIds: ['acc_1', 'acc_2'] })).toEqual({ accountIds: ['acc_1', 'acc_2'] });
    expect(issuesOf(form, { accountIds: ['acc_1', ''] })).toEqual([expect.stringMatching(/^accountIds\[1\]: /)]);
  });

  it('recurses into nested objects and unions (filters[status] one or several)', () => {
    expect(form.parse({ filters: { status: 'draft' } })).toEqual({ filters: { status: 'draft' } });
    expect(form.parse({ filters: { status: ['draft', 'enriched'] } })).toEqual({ filters: { status: ['draft', 'enriched'] } });
    expect(issuesOf(form, { filters: { status: 'nope' } })).toEqual([expect.stringMatching(/^filters\.status: /)]);
  });

  it('still rejects unknown keys, at the top and nested, one line each', () => {
    expect(issuesOf(form, { foo: '1', limit: '5' })).toEqual(['foo: unknown property']);
    expect(issuesOf(form, { filters: { createdVia: 'api', x: '1' } })).toEqual([
      'filters.createdVia: unknown property',
      'filters.x: unknown property',
    ]);
  });

  it('passes strings through unchanged (no trimming or coercion of text fields)', () => {
    expect(form.parse({ cursor: ' 10 ' })).toEqual({ cursor: ' 10 ' });
  });

  it('coerces a field that has a default (list limit defaults to 25, docs/pagination.md)', () => {
    const withDefault = formSchemaOf(z.strictObject({ limit: z.int().min(1).max(100).default(25) }));
    expect(withDefault.parse({})).toEqual({ limit: 25 });
    expect(withDefault.parse({ limit: '10' })).toEqual({ limit: 10 });
  });

  it('coerces each element of an array of numbers', () => {
    const numbers = formSchemaOf(z.strictObject({ caps: z.array(z.int().min(0)) }));
    expect(numbers.parse({ caps: ['1', '2'] })).toEqual({ caps: [1, 2] });
    expect(numbers.parse({ caps: '3' })).toEqual({ caps: [3] });
  });

  it('keeps the refinements of an object schema (e.g. update: at least one field)', () => {
    const update = z
      .strictObject({ name: z.string().optional(), excludeEnrichedWithinDays: z.int().nullable().optional() })
      .refine((body) => body.name !== undefined || body.excludeEnrichedWithinDays !== undefined, {
        error: 'give name or excludeEnrichedWithinDays',
      });
    expect(issuesOf(update, {})).toEqual(['body: give name or excludeEnrichedWithinDays']);
    expect(issuesOf(formSchemaOf(update), {})).toEqual(['body: give name or excludeEnrichedWithinDays']);
    expect(formSchemaOf(update).parse({ excludeEnrichedWithinDays: '' })).toEqual({ excludeEnrichedWithinDays: null });
  });
});

describe('error family', () => {
  const cases: [string, ApiError, ErrorCode, Record<string, unknown>][] = [
    [
      'InvalidRequestError',
      new InvalidRequestError('The request body is invalid.', ['limit: too big']),
      'invalid_request',
      { code: 'invalid_request', message: 'The request body is invalid.', details: { issues: ['limit: too big'] } },
    ],
    [
      'InvalidApiKeyError',
      new InvalidApiKeyError(),
      'invalid_api_key',
      {
        code: 'invalid_api_key',
        message:
          'The API key is not recognized: send a key issued to your organization, whole (cek_ and 40 more characters), as "Authorization: Bearer <API key>".',
      },
    ],
    [
      'RevokedApiKeyError',
      new RevokedApiKeyError(),
      'revoked_api_key',
      { code: 'revoked_api_key', message: 'The API key has been revoked.' },
    ],
    [
      'InsufficientCreditsError',
      new InsufficientCreditsError({ available: 40, required: 100 }),
      'insufficient_credits',
      {
        code: 'insufficient_credits',
        message: 'This launch needs 100 credits; 40 are available.',
        details: { available: 40, required: 100, shortfall: 60 },
      },
    ],
    [
      'NotFoundError',
      new NotFoundError('campaign', 'camp_7Hq2kXv9LmN3pR5sT8wYz'),
      'not_found',
      {
        code: 'not_found',
        message: 'No campaign with id "camp_7Hq2kXv9LmN3pR5sT8wYz".',
        details: { resource: 'campaign', id: 'camp_7Hq2kXv9LmN3pR5sT8wYz' },
      },
    ],
    [
      'CampaignNotEnrichableError',
      new CampaignNotEnrichableError('tam_only'),
      'campaign_not_enrichable',
      { code: 'campaign_not_enrichable', message: 'A campaign in status "tam_only" cannot be enriched.', details: { status: 'tam_only' } },
    ],
    [
      'CampaignNotCancelableError',
      new CampaignNotCancelableError('draft'),
      'campaign_not_cancelable',
      {
        code: 'campaign_not_cancelable',
        message: 'A campaign in status "draft" cannot be canceled: only an enriching campaign can be canceled.',
        details: { status: 'draft' },
      },
    ],
    [
      'CampaignNotEditableError',
      new CampaignNotEditableError('enriched'),
      'campaign_not_editable',
      { code: 'campaign_not_editable', message: 'A campaign in status "enriched" cannot be updated.', details: { status: 'enriched' } },
    ],
    [
      'EnrichmentPendingError',
      new EnrichmentPendingError(),
      'enrichment_pending',
      { code: 'enrichment_pending', message: 'Another enrich call for this campaign is evaluating its launch; retry shortly.' },
    ],
    [
      'NoEligibleAccountsError',
      new NoEligibleAccountsError(12),
      'no_eligible_accounts',
      { code: 'no_eligible_accounts', message: 'No account of this campaign is eligible for enrichment.', details: { requested: 12 } },
    ],
    [
      'ConcurrencyLimitExceededError',
      new ConcurrencyLimitExceededError({ limit: 5000, inFlight: 4900, requested: 200 }),
      'concurrency_limit_exceeded',
      {
        code: 'concurrency_limit_exceeded',
        message: "This launch would enrich 200 accounts; 4900 of the organization's 5000 are already enriching.",
        details: { limit: 5000, inFlight: 4900, requested: 200 },
      },
    ],
    [
      'ResultsNotReadyError',
      new ResultsNotReadyError(),
      'results_not_ready',
      { code: 'results_not_ready', message: 'The campaign has no results yet; poll get until its status is "enriched".' },
    ],
    [
      'ResultsExpiredError',
      new ResultsExpiredError(),
      'results_expired',
      { code: 'results_expired', message: 'The result access period of this campaign has ended.' },
    ],
    [
      'IdempotencyKeyReusedError',
      new IdempotencyKeyReusedError(),
      'idempotency_key_reused',
      {
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was already used with a different request; use a new key for a new request.',
      },
    ],
    [
      'IdempotencyKeyInUseError',
      new IdempotencyKeyInUseError(),
      'idempotency_key_in_use',
      { code: 'idempotency_key_in_use', message: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
    ],
    [
      'MethodNotAllowedError',
      new MethodNotAllowedError('GET', '/v1/org/describe'),
      'method_not_allowed',
      { code: 'method_not_allowed', message: 'GET is not allowed on /v1/org/describe; use POST.', details: { allow: ['POST'] } },
    ],
    [
      'WebhookEndpointLimitReachedError',
      new WebhookEndpointLimitReachedError(10),
      'webhook_endpoint_limit_reached',
      {
        code: 'webhook_endpoint_limit_reached',
        message: 'An organization can have at most 10 webhook endpoints; delete one first.',
        details: { limit: 10 },
      },
    ],
    [
      'WebhookEndpointDisabledError',
      new WebhookEndpointDisabledError('whe_4fJ8kQ2mN7pR9sT3vW5xY'),
      'webhook_endpoint_disabled',
      {
        code: 'webhook_endpoint_disabled',
        message:
          'Webhook endpoint "whe_4fJ8kQ2mN7pR9sT3vW5xY" is disabled (it answered 410 Gone); create a new endpoint to receive events again.',
        details: { id: 'whe_4fJ8kQ2mN7pR9sT3vW5xY' },
      },
    ],
    [
      'RateLimitedError',
      new RateLimitedError({ policy: 'requests', limit: 200, windowSeconds: 10, retryAfterSeconds: 4 }),
      'rate_limited',
      {
        code: 'rate_limited',
        message: 'The organization has used its 200 requests per 10 s; retry in 4 s.',
        details: { policy: 'requests', limit: 200, windowSeconds: 10, retryAfterSeconds: 4 },
      },
    ],
    [
      'SpendLimitExceededError',
      new SpendLimitExceededError({ limit: 50_000, spent: 49_900, required: 262 }),
      'spend_limit_exceeded',
      {
        code: 'spend_limit_exceeded',
        message: 'This launch needs 262 credits; 49900 of the monthly spend limit of 50000 are spent this month.',
        details: { limit: 50_000, spent: 49_900, required: 262 },
      },
    ],
    [
      'KeySpendLimitExceededError',
      new KeySpendLimitExceededError({ limit: 10_000, required: 262, spent: 9_900, period: 'month' }),
      'key_spend_limit_exceeded',
      {
        code: 'key_spend_limit_exceeded',
        message: "This launch needs 262 credits; 9900 of this API key's monthly limit of 10000 are spent this month.",
        details: { limit: 10_000, required: 262, spent: 9_900, period: 'month' },
      },
    ],
    [
      'KeySpendLimitExceededError',
      new KeySpendLimitExceededError({ limit: 200, required: 262, spent: null, period: 'launch' }),
      'key_spend_limit_exceeded',
      {
        code: 'key_spend_limit_exceeded',
        message: 'This launch needs 262 credits; this API key may charge at most 200 per launch.',
        details: { limit: 200, required: 262, spent: null, period: 'launch' },
      },
    ],
    [
      'SuppressionLockedError',
      new SuppressionLockedError('sup_5kP9qR2sT7vW3xY8zA4bC'),
      'suppression_locked',
      {
        code: 'suppression_locked',
        message: 'Suppression "sup_5kP9qR2sT7vW3xY8zA4bC" was made by an erasure and cannot be deleted: the person stays suppressed.',
        details: { id: 'sup_5kP9qR2sT7vW3xY8zA4bC' },
      },
    ],
    [
      'ExpiredApiKeyError',
      new ExpiredApiKeyError(),
      'expired_api_key',
      {
        code: 'expired_api_key',
        message: 'The API key has expired: use a current key (an organization key with keys:manage can create or rotate one).',
      },
    ],
    [
      'InsufficientScopeError',
      new InsufficientScopeError('campaigns:launch'),
      'insufficient_scope',
      {
        code: 'insufficient_scope',
        message: 'This API key lacks the scope campaigns:launch: use a key that holds it (keys/create grants scopes).',
        details: { required: 'campaigns:launch' },
      },
    ],
    ['InternalError', new InternalError(), 'internal_error', { code: 'internal_error', message: 'Internal error.' }],
  ];

  it('has a class for every code of ERROR_STATUS', () => {
    expect([...new Set(cases.map(([, , code]) => code))].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  it('maps every code to the status of the spec and docs/campaigns.md, docs/errors.md, docs/webhooks.md', () => {
    expect(ERROR_STATUS).toEqual({
      invalid_request: 400,
      invalid_api_key: 401,
      revoked_api_key: 401,
      insufficient_credits: 402,
      not_found: 404,
      method_not_allowed: 405,
      campaign_not_enrichable: 409,
      campaign_not_editable: 409,
      campaign_not_cancelable: 409,
      enrichment_pending: 409,
      results_not_ready: 409,
      idempotency_key_in_use: 409,
      results_expired: 410,
      no_eligible_accounts: 422,
      idempotency_key_reused: 422,
      concurrency_limit_exceeded: 429,
      webhook_endpoint_limit_reached: 409,
      webhook_endpoint_disabled: 409,
      rate_limited: 429,
      spend_limit_exceeded: 402,
      key_spend_limit_exceeded: 402,
      suppression_locked: 409,
      insufficient_scope: 403,
      expired_api_key: 401,
      internal_error: 500,
    });
  });

  it.each(cases)('%s: toJSON is exactly the envelope error, statusCode matches ERROR_STATUS', (className, error, code, json) => {
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(className);
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe(ERROR_STATUS[code]);
    expect(error.toJSON()).toStrictEqual(json);
    // JSON.stringify uses toJSON: no stack, no name, nothing else leaks.
    expect(JSON.parse(JSON.stringify(error))).toStrictEqual(json);
  });

  it('carries its response headers outside the body: Retry-After (whole seconds, at least 1) and Allow (docs/errors.md)', () => {
    expect(new EnrichmentPendingError(42.2).headers).toEqual({ 'retry-after': '43' });
    expect(new EnrichmentPendingError(0.01).headers).toEqual({ 'retry-after': '1' });
    expect(new EnrichmentPendingError(-5).headers).toEqual({ 'retry-after': '1' });
    expect(new EnrichmentPendingError().headers).toEqual({ 'retry-after': '1' });
    expect(new IdempotencyKeyInUseError().headers).toEqual({ 'retry-after': '1' });
    expect(new MethodNotAllowedError('PUT', '/v1/campaigns/get').headers).toEqual({ allow: 'POST' });
    expect(new NotFoundError('campaign', 'x').headers).toEqual({});
    expect(retryAfterHeader(Number.NaN)).toBe(1);
    expect(JSON.stringify(new EnrichmentPendingError(10))).not.toContain('retry-after');
  });

  it('omits details when an invalid_request has no issues', () => {
    expect(new InvalidRequestError('The JSON body could not be parsed.').toJSON()).toStrictEqual({
      code: 'invalid_request',
      message: 'The JSON body could not be parsed.',
    });
    expect(new InvalidRequestError('The JSON body could not be parsed.', []).toJSON()).toStrictEqual({
      code: 'invalid_request',
      message: 'The JSON body could not be parsed.',
    });
  });

  it('keeps a reason given to the 409 errors as the message, with the status still in details', () => {
    expect(new CampaignNotEnrichableError('draft', 'Only API-created campaigns can be enriched.').toJSON()).toStrictEqual({
      code: 'campaign_not_enrichable',
      message: 'Only API-created campaigns can be enriched.',
      details: { status: 'draft' },
    });
  });

  it.each([
    [40, 100, 60],
    [0, 1, 1],
    [99, 100, 1],
    [100, 100, 0],
    [150, 100, 0],
    [0, 0, 0],
    [Number.MAX_SAFE_INTEGER, 1, 0],
  ])('InsufficientCreditsError: available %i, required %i → shortfall %i (never negative)', (available, required, shortfall) => {
    expect(new InsufficientCreditsError({ available, required }).details).toStrictEqual({ available, required, shortfall });
  });
});

describe('identifiers and API keys (docs/authentication.md)', () => {
  const escaped = `[${ID_ALPHABET}]`;

  it('uses the 58-character alphabet of the spec, without 0, O, I and l', () => {
    expect(ID_ALPHABET).toBe('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz');
    expect(new Set(ID_ALPHABET).size).toBe(58);
    for (const excluded of ['0', 'O', 'I', 'l']) expect(ID_ALPHABET).not.toContain(excluded);
  });

  it.each([
    ['campaign', newCampaignId, 'camp_', 21, CAMPAIGN_ID_PATTERN],
    ['organization', newOrganizationId, 'org_', 21, ORGANIZATION_ID_PATTERN],
    ['API key', newApiKey, 'cek_', 40, API_KEY_PATTERN],
  ] as const)('generates %s IDs of the prefix and length of the convention, all distinct', (_label, generate, prefix, length, pattern) => {
    const ids = Array.from({ length: 2000 }, generate);
    const shape = new RegExp(`^${prefix}${escaped}{${length}}$`);
    for (const id of ids) {
      expect(id).toMatch(shape);
      expect(id).toMatch(pattern);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Drawn from the whole alphabet, not a subset of it.
    const used = new Set(ids.flatMap((id) => [...id.slice(prefix.length)]));
    expect(used.size).toBe(58);
  });

  it('generates attempt IDs of att_ and 21 base58 characters', () => {
    expect(newAttemptId()).toMatch(new RegExp(`^att_${escaped}{21}$`));
  });

  it('patterns refuse the wrong prefix, length or alphabet', () => {
    const body21 = 'A'.repeat(21);
    const body40 = 'A'.repeat(40);
    expect(CAMPAIGN_ID_PATTERN.test(`camp_${body21}`)).toBe(true);
    for (const bad of [
      `camp_${body21}A`,
      `camp_${body21.slice(1)}`,
      `camp_0${body21.slice(1)}`,
      `CAMP_${body21}`,
      `org_${body21}`,
      ` camp_${body21}`,
      `camp_${body21}\n`,
    ]) {
      expect(CAMPAIGN_ID_PATTERN.test(bad)).toBe(false);
    }
    expect(ORGANIZATION_ID_PATTERN.test(`org_${body21}`)).toBe(true);
    expect(ORGANIZATION_ID_PATTERN.test(`org_${'l'.repeat(21)}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`cek_${body40}`)).toBe(true);
    for (const bad of [`cek_${body40}A`, `cek_${body40.slice(1)}`, `cek_${'I'.repeat(40)}`, `sk_${body40}`, `cek_${body40.slice(1)}-`]) {
      expect(API_KEY_PATTERN.test(bad)).toBe(false);
    }
  });

  it('hashes API keys with SHA-256, lowercase hex', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = newApiKey();
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
    expect(hashApiKey(key)).toBe(hash);
    expect(hashApiKey(newApiKey())).not.toBe(hash);
    expect(hash).not.toContain(key.slice(4));
  });
});
