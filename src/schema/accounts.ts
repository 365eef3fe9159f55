import type { AccountView } from '../resolvers/accounts.ts';
import { me } from '../resolvers/accounts.ts';
import { builder } from './builder.ts';

const Account = builder.objectRef<AccountView>('Account').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    apiKey: t.exposeString('apiKey'),
    createdAt: t.exposeString('createdAt'),
  }),
});

builder.queryField('me', (t) => t.field({ type: Account, resolve: (_root, _args, ctx) => me(ctx) }));
