/**
 * `POST /v1/org/audit` (docs/audit.md): a page of the organization's audit log, newest first.
 */
import { decodeCursor, encodeCursor } from '../http/cursor';
import type { KeyCheck } from '../http/auth';
import type { AuditEntry, AuditStore } from './log';
import { DEFAULT_AUDIT_PAGE_SIZE, type ListAuditInput } from './schema';

/** What listing the log needs. */
export interface AuditDependencies {
  audit: AuditStore;
  /** Secret that signs page cursors (docs/pagination.md). */
  cursorSecret: string;
}

/** A page of the log as `org/audit` answers it. */
export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

/**
 * One page of the organization's audit log, newest first; reads in proportion to the page
 * (docs/audit.md: one Query, plus one BatchGetItem with a key or operation filter).
 * @param keyCheck - the request's API-key check (lib/http/auth.ts), read beside the Query.
 * @throws InvalidRequestError for a cursor that was altered, of another organization, or sent with other filters or limit.
 * @throws InvalidApiKeyError, RevokedApiKeyError from the key check.
 */
export async function listAuditEntries(
  deps: AuditDependencies,
  organizationId: string,
  input: ListAuditInput,
  keyCheck?: KeyCheck,
): Promise<AuditPage> {
  const limit = input.limit ?? DEFAULT_AUDIT_PAGE_SIZE;
  // One spelling of each time, so that bounds compare as the stored `at` does.
  const canonical = (time: string | undefined) => (time === undefined ? undefined : new Date(time).toISOString());
  const filters = {
    keyId: input.filters?.keyId,
    operation: input.filters?.operation,
    from: canonical(input.filters?.from),
    to: canonical(input.filters?.to),
  };
  const binding = { o: organizationId, f: JSON.stringify([filters.keyId, filters.operation, filters.from, filters.to]), l: limit };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, deps.cursorSecret, binding);
  const [page] = await Promise.all([deps.audit.page({ organizationId, ...filters, limit, after }), keyCheck?.ensure()]);
  return {
    entries: page.entries,
    nextCursor: page.next === undefined ? null : encodeCursor({ ...binding, a: page.next }, deps.cursorSecret),
  };
}
