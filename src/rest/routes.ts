import { accountsRoutes } from './accounts.ts';
import { bulkRoutes } from './bulk.ts';
import { channelsRoutes } from './channels.ts';
import { chatsRoutes } from './chats.ts';
import { contactGroupsRoutes } from './contact-groups.ts';
import { contactsRoutes } from './contacts.ts';
import { groupsRoutes } from './groups.ts';
import { messagesRoutes, sendRoutes } from './messages.ts';
import { pollsRoutes } from './polls.ts';
import { pacingRoutes } from './pacing.ts';
import type { Route } from './route.ts';
import { schedulingRoutes } from './scheduling.ts';
import { sessionsRoutes } from './sessions.ts';
import { statusesRoutes } from './statuses.ts';
import { webhooksRoutes } from './webhooks.ts';

/**
 * Every /v1 route, in the order Express tries them: the first whose path matches answers, so a
 * literal segment (`/sessions/api/send`, `/contacts/groups`, `messages/recurring`) comes before the
 * `:param` that would swallow it. Each group becomes a router of its own (OPTIONS answers with the
 * methods of the first group that has the path). The OpenAPI document is built from the same list.
 */
export const routeGroups: readonly (readonly Route[])[] = [
  sendRoutes,
  accountsRoutes,
  contactGroupsRoutes,
  contactsRoutes,
  schedulingRoutes,
  bulkRoutes,
  groupsRoutes,
  statusesRoutes,
  channelsRoutes,
  chatsRoutes,
  pacingRoutes,
  pollsRoutes,
  messagesRoutes,
  sessionsRoutes,
  webhooksRoutes,
];
