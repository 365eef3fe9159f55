import { z } from 'zod';
import { me } from '../resolvers/accounts.ts';
import { accountPacingSchema, getAccountPacing, updateAccountPacing } from '../resolvers/pacing.ts';
import { dateTime } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const pacing = z
  .object({
    ok: z.literal(true),
    settings: z.object({
      sendIntervalMs: z.number().int().nullable().describe('least time between two sends of each session; null = PACING_INTERVAL_MS'),
      sendJitterMs: z.number().int().nullable().describe('random extra wait added to each interval; null = PACING_JITTER_MS'),
      perChatIntervalMs: z.number().int().nullable().describe('least time between two sends to one chat; null = PACING_PER_CHAT_MS'),
      typingMsPerChar: z.number().int().nullable().describe('"typing…" before each text, per character; null = PACING_TYPING_MS_PER_CHAR'),
      warmup: z.boolean().nullable().describe('newly linked numbers warm up (PACING_WARMUP_CAPS); null = on'),
    }),
  })
  .meta({ id: 'AccountPacing' });

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
  route({
    method: 'get',
    path: '/accounts/me/settings',
    summary: "Extension: the account's send pacing defaults for its sessions (a session's own settings come first)",
    tag: 'Accounts',
    response: pacing,
    handler: ({ ctx }) => getAccountPacing(ctx),
  }),
  route({
    method: 'patch',
    path: '/accounts/me/settings',
    summary: "Extension: change the account's send pacing defaults (those given; null puts one back to the process default)",
    tag: 'Accounts',
    body: accountPacingSchema,
    response: pacing,
    handler: ({ ctx, body }) => updateAccountPacing(ctx, body),
  }),
];
