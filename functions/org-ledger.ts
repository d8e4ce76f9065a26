/** Lambda of `POST /v1/org/ledger` (decisions §11). */
import { listLedgerOperation } from '../lib/credits/schema';
import { listLedger } from '../lib/credits/use-cases';
import { apiHandler, ledger } from '../lib/root';

export const handler = apiHandler(listLedgerOperation, (input, { organizationId }) => listLedger({ ledger: ledger() }, organizationId, input));
