/**
 * The ledger operation (docs/launch.md#the-credit-ledger `POST /v1/org/ledger`).
 */
import { setting, cursorSecretSetting } from '../config';
import { decodeCursor, encodeCursor } from '../http/cursor';
import type { LedgerEntry } from './ledger';
import type { LedgerStore } from './store';
import { DEFAULT_LEDGER_PAGE_SIZE, type ListLedgerInput } from './schema';
import type { LedgerPage } from './docs';

/** The entry as the API shows it: without the organization, which the key implies, nor the key that caused it (stored for usage and audit only). */
const toApiEntry = ({ organizationId: _organizationId, keyId: _keyId, ...entry }: LedgerEntry): LedgerPage['entries'][number] => entry;

/**
 * One page of the organization's ledger, newest first; a page costs one
 * Query of `limit + 1` index items, whatever the ledger's size.
 * @throws InvalidRequestError for a cursor that was altered, belongs to another organization, or comes with other filters or limit.
 */
export async function listLedger(
  deps: { ledger: Pick<LedgerStore, 'page'> },
  organizationId: string,
  input: ListLedgerInput,
): Promise<LedgerPage> {
  const limit = input.limit ?? DEFAULT_LEDGER_PAGE_SIZE;
  const campaignId = input.filters?.campaignId;
  const kind = input.filters?.kind;
  const binding = { o: organizationId, f: JSON.stringify(['ledger', campaignId ?? null, kind ?? null]), l: limit };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, setting(cursorSecretSetting), binding);
  const page = await deps.ledger.page({
    organizationId,
    limit,
    ...(campaignId ? { campaignId } : {}),
    ...(kind ? { kind } : {}),
    ...(after === undefined ? {} : { after }),
  });
  return {
    entries: page.entries.map(toApiEntry),
    nextCursor: page.hasMore && page.last ? encodeCursor({ ...binding, a: page.last }, setting(cursorSecretSetting)) : null,
  };
}
