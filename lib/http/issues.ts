/**
 * Turns zod issues into the `details.issues` lines of `invalid_request`:
 * one line per problem, each starting with the field path (decisions §2).
 */
import type { z } from 'zod';

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

/**
 * One line per issue, e.g. `limit: Too big: expected number to be <=100`,
 * `foo: unknown property`; at most {@link MAX_ISSUE_LINES} lines plus a count of the rest.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown property`);
    }
    return [`${formatPath(issue.path) || 'body'}: ${issue.message}`];
  });
  if (lines.length <= MAX_ISSUE_LINES) return lines;
  return [...lines.slice(0, MAX_ISSUE_LINES), `… and ${lines.length - MAX_ISSUE_LINES} more issues`];
}
