/**
 * The error catalogue (docs/errors.md; issue #38): one declaration per code (lib/contract/errors.ts) beside the one
 * status of lib/errors.ts. Each declaration's example is a real answer of its own code, whose `details` its own
 * schema accepts; and the tests' stack answers a code its operation does not list as a 500 naming it
 * (infra/local/server.ts), which the planted answers below prove.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, NotFoundError, SuppressionLockedError, type ErrorCode } from '../../lib/errors';
import { ERRORS, codesByStatus } from '../../lib/contract/errors';
import { documented, listedErrorCodes } from '../../lib/contract/openapi';
import { failure } from '../../lib/http/envelope';
import { API_ROUTES } from '../../infra/routes';
import { undeclaredErrorAnswer } from '../../infra/local/server';

describe('one declaration per error code', () => {
  it('declares every code of ERROR_STATUS once, and no other', () => {
    expect(Object.keys(ERRORS).sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    expect(codesByStatus().map((code) => ERROR_STATUS[code])).toEqual(Object.values(ERROR_STATUS).sort((a, b) => a - b));
  });

  it.each(Object.keys(ERRORS) as ErrorCode[])('%s: its example is an answer of its own code, its details fit its schema', (code) => {
    const { example, details, meaning, when, whatToDo } = ERRORS[code];
    expect({ code: example.code, status: example.statusCode }).toEqual({ code, status: ERROR_STATUS[code] });
    const body = example.toJSON();
    if (!details) expect(body.details).toBeUndefined();
    else if (body.details !== undefined || details.required) expect(details.schema.safeParse(body.details).error?.issues).toBeUndefined();
    for (const text of [meaning, when, whatToDo]) expect(text.trim().length).toBeGreaterThan(0);
  });
});

describe("the tests' stack refuses to answer an undeclared code", () => {
  const declared = new Set(['invalid_request', 'not_found']);
  const answer = (error: { toJSON(): { code: ErrorCode; message: string } }, status: number) => failure(status, error.toJSON());

  it('replaces an error its operation does not list with a 500 naming the operation and the code', () => {
    const replaced = undeclaredErrorAnswer(answer(new SuppressionLockedError('sup_1'), 409), 'getCampaign', declared);
    expect(replaced?.statusCode).toBe(500);
    expect(JSON.parse(replaced!.body as string).error).toEqual({
      code: 'internal_error',
      message: expect.stringContaining('getCampaign answered 409 suppression_locked, which its document does not list'),
    });
  });

  it('lets a listed error, a success and a body without an error through', () => {
    expect(undeclaredErrorAnswer(answer(new NotFoundError('campaign', 'camp_1'), 404), 'getCampaign', declared)).toBeUndefined();
    expect(undeclaredErrorAnswer({ statusCode: 200, body: '{"data":{},"error":null}' }, 'getCampaign', declared)).toBeUndefined();
    expect(undeclaredErrorAnswer({ statusCode: 502, body: 'Bad gateway' }, 'getCampaign', declared)).toBeUndefined();
  });

  it("lists, for every operation, the pipeline's codes and its own", () => {
    for (const { operation } of API_ROUTES) {
      const listed = listedErrorCodes(documented(operation));
      expect(listed, operation.operationId).toEqual(expect.arrayContaining(['invalid_api_key', 'rate_limited', 'internal_error']));
      expect(listed, operation.operationId).toEqual(expect.arrayContaining(documented(operation).errors));
    }
  });
});
