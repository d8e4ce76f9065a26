/**
 * Turns zod issues into the `details.issues` lines of `invalid_request`:
 * one line per problem, each starting with the field path (docs/errors.md).
 */
import type * as z from 'zod/mini';
import { config } from 'zod/mini';
import { en } from 'zod/locales';

/**
 * Makes zod write its issue messages in English. Classic zod sets this
 * itself; `zod/mini` (the schemas of lib/, issue #18) sets no locale, so call
 * this before parsing input whose issues are shown (the API pipeline, the
 * warehouse import). Idempotent.
 */
export function useEnglishIssueMessages(): void {
  config(en());
}

/** Formats a path such as `['filters', 'status', 0]` as `filters.status[0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Most issue lines returned; the rest are summarized in one final line. */
export const MAX_ISSUE_LINES = 50;

const depth = (issues: readonly z.core.$ZodIssue[]) => Math.max(...issues.map((issue) => issue.path.length));
const wrongTypeOnly = (issues: readonly z.core.$ZodIssue[]) =>
  issues.every((issue) => issue.code === 'invalid_type' && issue.path.length === 0);
/** How far a member got with the value: 0 wrong type, 1 right type but not an allowed value, 2 anything else (a size, a format…). */
const progress = (issues: readonly z.core.$ZodIssue[]) =>
  wrongTypeOnly(issues) ? 0 : issues.every((issue) => issue.code === 'invalid_type' || issue.code === 'invalid_value') ? 1 : 2;

/**
 * The issues of the union member the value came closest to matching, with the
 * union's path in front. A union such as `status | status[]` otherwise reports
 * a bare "Invalid input"; this way `filters.status: Invalid option: expected
 * one of "draft"|"enriching"|…` (or `filters.status[1]: …` for an array) names
 * the allowed values. The closest member is the one whose issues reach
 * deepest into the value; on a tie, the one that got furthest with it (a
 * size limit beats a disallowed value, which beats a wrong type).
 */
function closestUnionMember(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue[] | undefined {
  const members = issue.errors.filter((member) => member.length > 0);
  if (members.length === 0) return undefined;
  const best = [...members].sort((a, b) => depth(b) - depth(a) || progress(b) - progress(a))[0]!;
  if (wrongTypeOnly(best) && members.length > 1) return undefined;
  return best.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
}

/** One issue's lines (a union expands to its closest member's issues). */
function issueLines(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown property`);
  }
  if (issue.code === 'invalid_union') {
    const closest = closestUnionMember(issue);
    if (closest) return closest.flatMap(issueLines);
    const expected = issue.errors.flatMap((member) =>
      member.filter((inner) => inner.code === 'invalid_type').map((inner) => inner.expected),
    );
    if (expected.length > 0) return [`${formatPath(issue.path) || 'body'}: Invalid input: expected ${[...new Set(expected)].join(' or ')}`];
  }
  return [`${formatPath(issue.path) || 'body'}: ${issue.message}`];
}

/**
 * One line per issue, e.g. `limit: Too big: expected number to be <=100`,
 * `foo: unknown property`, `filters.status: Invalid option: expected one of
 * "draft"|"enriching"|…`; at most {@link MAX_ISSUE_LINES} lines plus a count of the rest.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = issues.flatMap(issueLines);
  if (lines.length <= MAX_ISSUE_LINES) return lines;
  return [...lines.slice(0, MAX_ISSUE_LINES), `… and ${lines.length - MAX_ISSUE_LINES} more issues`];
}
