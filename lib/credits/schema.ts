/**
 * Schemas of the ledger operation (docs/launch.md#the-credit-ledger `POST /v1/org/ledger`); the
 * response shape and the docs are in ./docs.ts.
 */
import * as z from 'zod/mini';
import { campaignId, listFilters, listRequest, treeShakable } from '../schemas';
import { defineOperation } from '../http/operation';
import { LEDGER_KINDS } from './ledger';

/** Largest ledger page. */
export const MAX_LEDGER_PAGE_SIZE = 1_000;
/** Ledger page size when `limit` is omitted. */
export const DEFAULT_LEDGER_PAGE_SIZE = 100;

/** A ledger entry's kind (docs/launch.md#the-credit-ledger): a filter of the request, a field of the entry. */
export const LedgerKindSchema = /* @__PURE__ */ treeShakable(() =>
  z.enum(LEDGER_KINDS).check(
    z.meta({
      id: 'LedgerKind',
      description: 'What moved the balance: `charge` (launch), `refund` (of an attempt), `adjustment` (grant or operator).',
    }),
  ),
);

/** `POST /v1/org/ledger` body (docs/launch.md#the-credit-ledger). */
export const ListLedgerRequest = /* @__PURE__ */ treeShakable(() =>
  listRequest(
    { filters: listFilters({ campaignId: z.optional(campaignId()), kind: z.optional(LedgerKindSchema) }) },
    { max: MAX_LEDGER_PAGE_SIZE, default: DEFAULT_LEDGER_PAGE_SIZE },
  ),
);

/** Validated ledger request. */
export type ListLedgerInput = z.output<typeof ListLedgerRequest>;

export const listLedgerOperation = /* @__PURE__ */ defineOperation({
  operationId: 'listLedger',
  scope: 'ledger:read',
  path: '/v1/org/ledger',
  request: ListLedgerRequest,
});
