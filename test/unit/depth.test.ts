/**
 * Unit tests of the nesting scan (issue #19: bodies nested deeper than 64
 * levels are refused before any recursive work).
 */
import { describe, expect, it } from 'vitest';
import { formNestingViolation, jsonNestingViolation, MAX_NESTING_DEPTH } from '../../lib/http/depth';

describe('jsonNestingViolation', () => {
  it('accepts exactly the limit and names the top-level member that passes it', () => {
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    expect(jsonNestingViolation(`{"filters":${nested(MAX_NESTING_DEPTH - 1)}}`)).toBeUndefined();
    expect(jsonNestingViolation(`{"a":1,"filters":${nested(MAX_NESTING_DEPTH)}}`)).toBe('filters');
    expect(jsonNestingViolation(nested(MAX_NESTING_DEPTH))).toBeUndefined();
    expect(jsonNestingViolation(nested(MAX_NESTING_DEPTH + 1))).toBe('body');
  });

  it('ignores brackets inside strings, escaped quotes included, and decodes escaped member names', () => {
    expect(jsonNestingViolation(`{"x":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`)).toBeUndefined();
    expect(jsonNestingViolation(`{"fil\\u0074ers":${'{"a":'.repeat(70)}1${'}'.repeat(70)}}`)).toBe('filters');
  });

  it('scans 100,000 levels in one pass without recursion, valid JSON or not', () => {
    expect(jsonNestingViolation(`{"filters":${'['.repeat(100_000)}`)).toBe('filters');
    expect(jsonNestingViolation('{"a":')).toBeUndefined();
  });
});

describe('formNestingViolation', () => {
  it('counts the base name as one level and each bracket segment as another', () => {
    expect(formNestingViolation([`filters${'[a]'.repeat(MAX_NESTING_DEPTH - 1)}`])).toBeUndefined();
    expect(formNestingViolation(['ok', `filters${'[]'.repeat(MAX_NESTING_DEPTH)}`])).toBe('filters');
    expect(formNestingViolation([`${'['.repeat(100)}`])).toBe('body');
  });
});
