import { meRow } from '../resolvers/accounts.ts';
import { builder } from './builder.ts';

builder.prismaObject('Account', {
  // The key's hash never leaves the database; the fields below select what they show.
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    apiKey: t.string({ description: 'The key presented with this request.', resolve: (_row, _args, ctx) => ctx.caller.apiKey }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryField('me', (t) => t.prismaField({ type: 'Account', resolve: (query, _root, _args, ctx) => meRow(ctx, query) }));
