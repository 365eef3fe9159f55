import { listChannels, sendSchema, sendToChannel } from '../resolvers/channels.ts';
import { object } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Channels';

export const channelsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/sessions/:sessionId/channels',
    summary: 'Channels (listing is not supported: an empty list)',
    tag,
    response: object('`{ok, channels, message}`'),
    handler: ({ ctx, params }) => listChannels(ctx, params.sessionId),
  }),
  route({
    method: 'post',
    path: '/sessions/:sessionId/channels/:channelJid/send',
    summary: 'Post to a channel',
    tag,
    body: sendSchema,
    response: object('`{ok, id}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => sendToChannel(ctx, params.sessionId, params.channelJid, body),
  }),
];
