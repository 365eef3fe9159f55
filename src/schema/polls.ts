import type { PollVoteEvent } from '../runtime/ports/events.ts';
import type { PollOptionTally, PollTally } from '../resolvers/polls.ts';
import { sendPoll, tallyOf, VOTE_ORDER } from '../resolvers/polls.ts';
import { ownSession } from '../resolvers/sessions.ts';
import { builder, once, withoutNulls } from './builder.ts';
import { SendResultRef } from './messages.ts';

const PollOption = builder.objectRef<PollOptionTally>('PollOption').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    votes: t.exposeInt('votes'),
    voters: t.exposeStringList('voters', {
      description: 'who chose it, first voter first: the phone-number JID when known, else the LID JID',
    }),
  }),
});

const PollTallyRef = builder.objectRef<PollTally>('PollTally').implement({
  description: "A sent poll's current tally: each voter's latest vote.",
  fields: (t) => ({
    name: t.exposeString('name'),
    selectableCount: t.exposeInt('selectableCount', { description: '1: a single choice; 0: any number of options; n: up to n' }),
    options: t.field({ type: [PollOption], resolve: (p) => p.options }),
    totalVoters: t.exposeInt('totalVoters', { description: 'people whose current vote chooses at least one option' }),
  }),
});

const PollVoteRef = builder.objectRef<PollVoteEvent>('PollVote').implement({
  description: "A vote on one of the session's polls, decrypted (the poll.vote webhook).",
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    messageId: t.exposeID('messageId', { description: 'our record of the poll' }),
    pollWaMessageId: t.exposeString('pollWaMessageId'),
    waMessageId: t.exposeString('waMessageId', { description: 'the network id of the vote itself' }),
    chatId: t.exposeString('chatId', { description: 'the chat the poll is in: the person, or the group' }),
    voter: t.exposeString('voter', { description: 'the phone-number JID when known, else the LID JID' }),
    voterLid: t.exposeString('voterLid', { nullable: true }),
    selectedOptions: t.exposeStringList('selectedOptions', { description: 'the options chosen now; [] when the vote was withdrawn' }),
    at: t.field({ type: 'DateTime', description: 'when the voter cast it', resolve: (v) => new Date(v.at) }),
    receivedAt: t.field({ type: 'DateTime', resolve: (v) => new Date(v.receivedAt) }),
  }),
});

const PollInput = builder.inputType('PollInput', {
  fields: (t) => ({
    to: t.string({ required: true }),
    isGroup: t.boolean(),
    name: t.string({ required: true }),
    options: t.stringList({ required: true, description: '2 to 12 different options' }),
    selectableCount: t.int({ description: '1 (the default): a single choice; 0: any number of options; n: up to n' }),
    quotedMessageId: t.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
  }),
});

builder.prismaObjectFields('OutgoingMessage', (t) => ({
  poll: t.field({
    type: PollTallyRef,
    nullable: true,
    description: "a poll's current tally; null for other messages",
    select: { kind: true, payload: true, pollVotes: { orderBy: [...VOTE_ORDER], select: { voter: true, options: true } } },
    resolve: (row) => (row.kind === 'poll' ? tallyOf(row.payload, row.pollVotes) : null),
  }),
}));

builder.mutationField('sendPoll', (t) =>
  t.field({
    type: SendResultRef,
    description: "Send a poll; votes come decrypted as pollVotes events (the poll.vote webhook) and in the message's poll tally.",
    args: { idempotencyKey: t.arg.string(), sessionId: t.arg.id({ required: true }), input: t.arg({ type: PollInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendPoll(ctx, String(args.sessionId), withoutNulls(args.input))),
  }),
);

builder.subscriptionField('pollVotes', (t) =>
  t.field({
    type: PollVoteRef,
    description: "Each vote on the session's polls, decrypted, as it arrives.",
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('pollVotes', String(args.sessionId));
    },
    resolve: (vote) => vote,
  }),
);
