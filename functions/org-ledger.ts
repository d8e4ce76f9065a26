/** Lambda of `POST /v1/org/ledger` (docs/launch.md#the-credit-ledger). */
import { listLedgerOperation } from '../lib/credits/schema';
import { apiHandler, ledgerPager, listLedger } from '../lib/root';

export const handler = apiHandler(listLedgerOperation, (input, { organizationId }) =>
  listLedger({ ledger: ledgerPager() }, organizationId, input),
);
