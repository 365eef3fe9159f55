import { accountsRoutes } from './accounts.ts';
import { bulkRoutes } from './bulk.ts';
import { channelsRoutes } from './channels.ts';
import { chatsRoutes } from './chats.ts';
import { contactGroupsRoutes } from './contact-groups.ts';
import { contactsRoutes } from './contacts.ts';
import { conversationsRoutes } from './conversations.ts';
import { groupsRoutes } from './groups.ts';
import { historyRoutes } from './history.ts';
import { messageSearchRoutes } from './message-search.ts';
import { messagesRoutes, sendRoutes } from './messages.ts';
import { pollsRoutes } from './polls.ts';
import { pacingRoutes } from './pacing.ts';
import { retentionRoutes } from './retention.ts';
import type { Route } from './route.ts';
import { schedulingRoutes } from './scheduling.ts';
import { sessionsRoutes } from './sessions.ts';
import { statusesRoutes } from './statuses.ts';
import { sinksRoutes } from './sinks.ts';
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
  conversationsRoutes,
  pacingRoutes,
  pollsRoutes,
  messageSearchRoutes,
  retentionRoutes,
  historyRoutes,
  messagesRoutes,
  sessionsRoutes,
  webhooksRoutes,
  sinksRoutes,
];

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether a request (its method, and its path under /v1) reaches a route that honours Idempotency-Key:
 * a request the service may send again under the same key without doing it twice (the hop to a
 * session's owner that died before answering).
 */
export const honoursIdempotencyKey = ((): ((method: string, path: string) => boolean) => {
  const routes = routeGroups
    .flat()
    .filter((r) => r.idempotent)
    .map((r) => ({
      method: r.method.toUpperCase(),
      path: new RegExp(
        `^${r.path
          .split(/(:[A-Za-z]+)/)
          .map((part) => (part.startsWith(':') ? '[^/]+' : escaped(part)))
          .join('')}/?$`,
      ),
    }));
  return (method, path) => routes.some((r) => r.method === method && r.path.test(path));
})();
