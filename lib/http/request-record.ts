/**
 * What the pipeline knows of an audited request (an operation with `audited: true`,
 * lib/http/operation.ts), and the port through which the audit log keeps it
 * (docs/audit.md). The pipeline fills the record once the key's organization is
 * known; the audit log (lib/audit/, wired by lib/root.ts) owns the entry's item.
 *
 * Two ways an entry is written, never both for one request (the entry's item is
 * derived from the request, and the late write is conditional on its absence):
 * - a change writes it in its own transaction: the use case asks
 *   {@link RequestContext.auditItem} (lib/http/pipeline.ts) for the item and puts it
 *   in the TransactWriteItems that makes the change, so a change is never without
 *   its entry and a failed transaction leaves none;
 * - a success whose change is outside the table (an export's file) is written by
 *   the use case before it answers ({@link RequestContext.writeAuditEntry}): a
 *   failed write fails the request;
 * - every other answer (a refusal, a replayed idempotent answer, a success that
 *   changed nothing, an error after a contributed item) is written by the
 *   pipeline once the answer is decided, before it is sent; refusals at
 *   authentication and by the request rate (401 of a key that belongs to the
 *   organization, 429) go through {@link RequestAudit.writeRefusal}.
 */
import type { TransactItem } from '../db/conditional';

export type { TransactItem };

/** Who did what, when: the facts of an audited request the pipeline knows before the use case runs. */
export interface RequestRecord {
  organizationId: string;
  /** The operation's `operationId` (e.g. `createCampaign`). */
  operation: string;
  /** The acting key's ID (`key_…`); `null` for a key from before key IDs that the key migration has not reached. */
  keyId: string | null;
  /** The request's `X-Request-Id`. */
  requestId: string;
  /** The request's `Idempotency-Key` as parsed (an idempotent operation's only); `null` when none. */
  idempotencyKey: string | null;
  /** The caller's address as API Gateway saw it; `null` when unknown. */
  sourceIp: string | null;
  /** ISO 8601: when the request arrived. */
  at: string;
}

/** How an audited request was answered. */
export interface RequestAnswer {
  /** HTTP status of the answer. */
  status: number;
  /** The error's code; `null` on success. */
  code: string | null;
  /** The campaign the request named or created, if any. */
  campaignId: string | null;
}

/** The audit log as the pipeline sees it (lib/audit/, wired by lib/root.ts). */
export interface RequestAudit {
  /** The entry of a successful change, as a Put for the change's own transaction. */
  changeItem(record: RequestRecord, campaignId: string | null): TransactItem;
  /**
   * Writes the entry of an answer no transaction carried (conditional on the entry's absence,
   * so a change that wrote it already keeps its own).
   * @throws whatever the write throws (the pipeline logs it; the answer stands).
   */
  writeAnswer(record: RequestRecord, answer: RequestAnswer): Promise<void>;
  /**
   * Writes the entry of a refusal at authentication or by the request rate (401 of a key that belongs to the
   * organization, 429), unconditionally (nothing else writes it); the refusals of one moment in one process share
   * one BatchWriteItem (docs/audit.md "Refusals, and the cost of a flood").
   * @throws whatever the write throws (the pipeline logs it; the answer stands).
   */
  writeRefusal(record: RequestRecord, answer: RequestAnswer): Promise<void>;
}
