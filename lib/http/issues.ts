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

/** One line per issue, e.g. `limit: Too big: expected number to be <=100`, `foo: unknown property`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown property`);
    }
    return [`${formatPath(issue.path) || 'body'}: ${issue.message}`];
  });
}
