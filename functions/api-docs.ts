/** Lambda of `GET /openapi.json` and `GET /docs` (decisions §13). */
import { createDocsHandler, buildOpenApiDocument } from '../lib/root';
import { API_ROUTES } from '../infra/routes';

export const handler = createDocsHandler({ document: (serverUrl) => buildOpenApiDocument(API_ROUTES.map((route) => route.operation), serverUrl) });
