/** Lambda of the HTTP API's `$default` route: 404 `not_found` / 405 `method_not_allowed` in the envelope (docs/errors.md). */
import { createCatchAllHandler } from '../lib/root';
import { API_ROUTES } from '../infra/routes';

export const handler = createCatchAllHandler(API_ROUTES.map((route) => route.operation.path));
