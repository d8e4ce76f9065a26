/** Lambda of `GET /openapi.json`, `GET /asyncapi.json` and `GET /docs` (README.md; issue #34). */
import { createDocsHandler, buildAsyncApiDocument, buildOpenApiDocument } from '../lib/root';
import { API_ROUTES } from '../infra/routes';

export const handler = createDocsHandler({
  document: (serverUrl) => buildOpenApiDocument(API_ROUTES.map((route) => route.operation), serverUrl),
  asyncapi: buildAsyncApiDocument,
});
