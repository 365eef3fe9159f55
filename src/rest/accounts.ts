import { z } from 'zod';
import { me } from '../resolvers/accounts.ts';
import { accountSettingsSchema, getAccountSettings, MESSAGE_STORE_MODES, updateAccountSettings } from '../resolvers/retention.ts';
import { dateTime } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const accountSettings = z
  .object({
    ok: z.literal(true),
    settings: z.object({
      sendIntervalMs: z.number().int().nullable().describe('least time between two sends of each session; null = PACING_INTERVAL_MS'),
      sendJitterMs: z.number().int().nullable().describe('random extra wait added to each interval; null = PACING_JITTER_MS'),
      perChatIntervalMs: z.number().int().nullable().describe('least time between two sends to one chat; null = PACING_PER_CHAT_MS'),
      typingMsPerChar: z.number().int().nullable().describe('"typing…" before each text, per character; null = PACING_TYPING_MS_PER_CHAR'),
      warmup: z.boolean().nullable().describe('newly linked numbers warm up (PACING_WARMUP_CAPS); null = on'),
      messageRetentionDays: z
        .number()
        .int()
        .nullable()
        .describe(
          "stored messages older than this many days (by the network's time) are deleted, hourly; null = kept until their session is deleted",
        ),
      messageStore: z
        .enum(MESSAGE_STORE_MODES)
        .describe("all: every message sent and received is stored (chats, search); specOnly: none beyond what the spec's routes need"),
    }),
  })
  .meta({ id: 'AccountSettings' });

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
    summary:
      "Extension: the account's settings: send pacing defaults for its sessions (a session's own come first) and the retention of stored messages",
    tag: 'Accounts',
    response: accountSettings,
    handler: ({ ctx }) => getAccountSettings(ctx),
  }),
  route({
    method: 'patch',
    path: '/accounts/me/settings',
    summary: "Extension: change the account's settings (those given; null puts one back to its default)",
    tag: 'Accounts',
    body: accountSettingsSchema,
    response: accountSettings,
    handler: ({ ctx, body }) => updateAccountSettings(ctx, body),
  }),
];
