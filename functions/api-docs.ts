/** Lambda of `GET /openapi.json`, `GET /asyncapi.json`, `GET /docs` (README.md; issue #34) and the discovery documents (docs/agents.md). */
import {
  createDocsHandler,
  buildAsyncApiDocument,
  buildOpenApiDocument,
  buildApiCatalog,
  buildLlmsTxt,
  buildServerCard,
  buildMcpTools,
  API_CATALOG_PATH,
  LLMS_TXT_PATH,
  SERVER_CARD_PATH,
  setting,
  resultsStreamUrlSetting,
} from '../lib/root';
import { API_ROUTES, MCP_ROUTES } from '../infra/routes';

const tools = () => buildMcpTools(MCP_ROUTES.map((route) => route.operation)).map((binding) => binding.tool);

export const handler = createDocsHandler({
  document: (serverUrl) =>
    buildOpenApiDocument(
      API_ROUTES.map((route) => route.operation),
      serverUrl,
      setting(resultsStreamUrlSetting) ?? serverUrl,
    ),
  asyncapi: buildAsyncApiDocument,
  more: (serverUrl) => ({
    [API_CATALOG_PATH]: {
      contentType: 'application/linkset+json; charset=utf-8',
      body: () => JSON.stringify(buildApiCatalog(serverUrl), null, 2),
    },
    [LLMS_TXT_PATH]: { contentType: 'text/plain; charset=utf-8', body: () => buildLlmsTxt(serverUrl, tools()) },
    [SERVER_CARD_PATH]: {
      contentType: 'application/json; charset=utf-8',
      body: () => JSON.stringify(buildServerCard(serverUrl, tools()), null, 2),
    },
  }),
});
