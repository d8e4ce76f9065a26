/** Lambda of `POST /v1/events/list` (docs/events.md). */
import { listEventsOperation } from '../lib/webhooks/schema';
import { apiHandler, listEvents, organizations, webhooks } from '../lib/root';

export const handler = apiHandler(listEventsOperation, (input, { organizationId }) =>
  listEvents({ webhooks: webhooks(), organizations: organizations() }, organizationId, input),
);
