import { bulkSchema, bulkToContactGroup, bulkToTag } from '../resolvers/bulk.ts';
import { object } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Bulk';
const outcome = object(
  '`{ok, total, sent, failed, errors}`; beyond the spec, `queued: [{jid, messageId, sendAt}]` when the network refused some for the rate (back in the queue)',
);

export const bulkRoutes: Route[] = [
  route({
    method: 'post',
    path: '/sessions/:sessionId/bulk/contact-group/:groupId',
    summary: 'Send to every contact of a contact group',
    tag,
    body: bulkSchema,
    response: outcome,
    idempotent: true,
    handler: ({ ctx, params, body }) => bulkToContactGroup(ctx, params.sessionId, params.groupId, body),
  }),
  route({
    method: 'post',
    path: '/sessions/:sessionId/bulk/tag/:tag',
    summary: 'Send to every contact with a tag',
    tag,
    body: bulkSchema,
    response: outcome,
    idempotent: true,
    handler: ({ ctx, params, body }) => bulkToTag(ctx, params.sessionId, params.tag, body),
  }),
];
