import { listChannels, sendToChannel } from '../resolvers/channels.ts';
import { builder, once } from './builder.ts';

const ChannelList = builder.objectRef<{ ok: boolean; channels: never[]; message: string }>('ChannelList').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    channels: t.stringList({ resolve: (r) => r.channels }),
    message: t.exposeString('message'),
  }),
});

builder.queryField('channels', (t) =>
  t.field({
    type: ChannelList,
    args: { sessionId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => listChannels(ctx, String(args.sessionId)),
  }),
);

builder.mutationField('sendChannelText', (t) =>
  t.boolean({
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      channelJid: t.arg.string({ required: true }),
      text: t.arg.string({ required: true }),
    },
    resolve: async (_root, args, ctx, info) =>
      (await once(ctx, info, args, (ctx, args) => sendToChannel(ctx, String(args.sessionId), args.channelJid, { text: args.text }))).ok,
  }),
);
