/** Lambda of `POST /v1/events/list` (docs/events.md). */
import { listEventsOperation } from '../lib/webhooks/schema';
import { apiHandler, listEvents, organizationCredits, eventFeed } from '../lib/root';

export const handler = apiHandler(listEventsOperation, (input, { organizationId }) =>
  listEvents({ webhooks: eventFeed(), organizations: organizationCredits() }, organizationId, input),
);
