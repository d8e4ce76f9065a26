/** Lambda of `GET /.well-known/jwks.json`: the public keys erasure receipts verify with (docs/privacy.md "Verifying a receipt"). */
import { receiptSigner } from '../lib/root';

export const handler = async () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' },
  body: JSON.stringify(await receiptSigner().publicKeys()),
});
