import { z } from 'zod';
import { getPollTally, pollSchema, sendPoll } from '../resolvers/polls.ts';
import { sent } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Messages';
const S = '/sessions/:sessionId';

const pollTally = z
  .object({
    name: z.string(),
    selectableCount: z.number().int().describe('1: a single choice; 0: any number of options; n: up to n'),
    options: z.array(
      z.object({
        name: z.string(),
        votes: z.number().int(),
        voters: z.array(z.string()).describe('who chose it, first voter first: the phone-number JID when known, else the LID JID'),
      }),
    ),
    totalVoters: z.number().int().describe('people whose current vote chooses at least one option'),
  })
  .meta({ id: 'PollTally' });

export const pollsRoutes: Route[] = [
  route({
    method: 'post',
    path: `${S}/messages/poll`,
    summary:
      'Extension: send a poll (2 to 12 different options; selectableCount 1 for a single choice, the default, 0 for any number); votes come decrypted as poll.vote events and in its tally',
    tag,
    body: pollSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendPoll(ctx, params.sessionId, body),
  }),
  route({
    method: 'get',
    path: `${S}/messages/:messageId/poll`,
    summary: "Extension: a sent poll's current tally, each voter's latest vote (409 CONFLICT for a message that is not a poll)",
    tag,
    response: z.object({ ok: z.literal(true), poll: pollTally }),
    handler: ({ ctx, params }) => getPollTally(ctx, params.sessionId, params.messageId),
  }),
];
