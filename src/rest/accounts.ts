import { z } from 'zod';
import { me } from '../resolvers/accounts.ts';
import { dateTime } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const account = z.object({ id: z.string(), email: z.string(), apiKey: z.string(), createdAt: dateTime }).meta({ id: 'Account' });

export const accountsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/accounts/me',
    summary: 'The calling account, with the key presented',
    tag: 'Accounts',
    response: account,
    handler: ({ ctx }) => me(ctx),
  }),
];
