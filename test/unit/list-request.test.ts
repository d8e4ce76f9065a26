/**
 * The shared list-request builder (lib/schemas.ts `listRequest`, `listFilters`;
 * docs/pagination.md): every list operation's body is its own fields, then
 * `cursor` and `limit`, strict; the cursor's description names what a next
 * page must repeat (a cursor is bound to them, lib/http/cursor.ts).
 */
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { campaignId, listFilters, listRequest, MAX_CURSOR_LENGTH } from '../../lib/schemas';

const CAMPAIGN = 'camp_7Hq2kXv9LmN3pR5sT8wYz';
const schema = listRequest(
  { campaignId: campaignId(), filters: listFilters({ kind: z.optional(z.enum(['a', 'b'])) }) },
  { max: 5, default: 2 },
);
/** The description of a field of a request's JSON schema. */
const descriptionOf = (request: z.ZodMiniType, field: string) =>
  (z.toJSONSchema(request, { io: 'input' }) as unknown as { properties: Record<string, { description?: string }> }).properties[field]
    ?.description;
const cursorDescription = (request: z.ZodMiniType) => descriptionOf(request, 'cursor');

describe('listRequest', () => {
  it('takes the fields given, then cursor and limit 1..max', () => {
    expect(schema.safeParse({ campaignId: CAMPAIGN, filters: { kind: 'a' }, cursor: 'x', limit: 5 }).success).toBe(true);
    expect(schema.safeParse({ campaignId: CAMPAIGN }).success).toBe(true);
    for (const limit of [0, 6, 1.5, '2']) expect(schema.safeParse({ campaignId: CAMPAIGN, limit }).success, String(limit)).toBe(false);
    expect(schema.safeParse({ campaignId: CAMPAIGN, cursor: '' }).success).toBe(false);
    expect(schema.safeParse({ campaignId: CAMPAIGN, cursor: 'x'.repeat(MAX_CURSOR_LENGTH + 1) }).success).toBe(false);
  });

  it('is strict, filters included', () => {
    expect(schema.safeParse({ campaignId: CAMPAIGN, page: 2 }).success).toBe(false);
    expect(schema.safeParse({ campaignId: CAMPAIGN, filters: { other: 'a' } }).success).toBe(false);
    expect(schema.safeParse({ campaignId: CAMPAIGN, filters: { kind: 'c' } }).success).toBe(false);
  });

  it("names in the cursor's description every field a next page repeats", () => {
    expect(cursorDescription(schema)).toBe(
      'Opaque `nextCursor` of the previous page, unchanged, with the same campaignId, filters and limit.',
    );
    expect(cursorDescription(listRequest({}, { max: 5, default: 2 }))).toBe(
      'Opaque `nextCursor` of the previous page, unchanged, with the same limit.',
    );
    expect(descriptionOf(schema, 'limit')).toBe('Page size, default 2.');
  });
});
