import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { PollVote } from '../generated/sqlite/client.ts';
import type { PollVoteEvent } from '../runtime/ports/events.ts';
import type { IncomingItem, ReceivedMessage } from '../runtime/ports/incoming.ts';
import type { PollContent, ReplyContext } from '../runtime/ports/network.ts';
import type { Deps, RequestContext } from './context.ts';
import { deliverNow } from './delivery.ts';
import { DomainError, notFound } from './errors.ts';
import { admit } from './idempotency.ts';
import { replyContext, replyFields } from './message-actions.ts';
import { checkRecipient, recipientShape, withJid } from './messages.ts';
import type { SendAnswer } from './messages.ts';
import { ownSessionId } from './sessions.ts';
import { parseInput } from './validate.ts';
import { writeWithEvents } from './webhooks.ts';

/** WhatsApp's own bounds: a poll offers 2 to 12 options. */
export const POLL_MIN_OPTIONS = 2;
export const POLL_MAX_OPTIONS = 12;

export const pollSchema = z
  .object({
    ...recipientShape,
    name: z.string().trim().min(1, 'cannot be empty').max(255, 'must be at most 255 characters'),
    options: z
      .array(z.string().trim().min(1, 'cannot be empty').max(100, 'must be at most 100 characters'), {
        error: (issue) => (issue.input === undefined ? 'is required (2 to 12 options)' : 'must be an array of strings'),
      })
      .min(POLL_MIN_OPTIONS, `must list at least ${POLL_MIN_OPTIONS} options`)
      .max(POLL_MAX_OPTIONS, `must list at most ${POLL_MAX_OPTIONS} options`),
    selectableCount: z
      .number({ error: 'must be a whole number: 1 for a single choice, 0 for any number of options' })
      .int('must be a whole number: 1 for a single choice, 0 for any number of options')
      .min(0, 'must be 0 (any number of options) or more')
      .default(1),
    // Baileys rc14 drops a poll's mentions, so a poll takes a quote only.
    quotedMessageId: replyFields.quotedMessageId,
  })
  .superRefine((v, ctx) => {
    checkRecipient(v, ctx);
    // Votes name options by the hash of their text, so two options with the same text could not be told apart.
    v.options.forEach((option, i) => {
      const first = v.options.indexOf(option);
      if (first !== i) ctx.addIssue({ code: 'custom', path: ['options', i], message: `repeats options[${first}]; options must differ` });
    });
    if (v.selectableCount > v.options.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['selectableCount'],
        message: `must be at most the number of options (${v.options.length}); 0 allows any number`,
      });
    }
  })
  .transform(withJid);

/** Sends a poll; its secret is drawn here and kept in the record's payload, so votes on it decrypt after a restart too. */
export const sendPoll = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SendAnswer> => {
  const body = parseInput(pollSchema, input);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  const reply = await replyContext(ctx, sessionId, { quotedMessageId: body.quotedMessageId });
  const content: PollContent & ReplyContext = {
    ...reply,
    kind: 'poll',
    name: body.name,
    options: body.options,
    selectableCount: body.selectableCount,
    messageSecret: randomBytes(32).toString('base64'),
  };
  const row = await deliverNow(ctx, session, { to: body.jid, content, summary: body.name, kind: 'poll' });
  return { ok: true, id: row.id };
};

export interface PollOptionTally {
  name: string;
  votes: number;
  /** who chose it, in the order they voted: the phone-number JID when known, else the LID JID */
  voters: string[];
}

export interface PollTally {
  name: string;
  /** 1: a single choice; 0: any number of options; n: up to n */
  selectableCount: number;
  options: PollOptionTally[];
  /** people whose current vote chooses at least one option */
  totalVoters: number;
}

/** The order voters are listed in: who voted first, first. */
export const VOTE_ORDER = [{ votedAt: 'asc' }, { voterKey: 'asc' }] as const;

/** A poll record's tally from its stored question and its voters' current choices. */
export const tallyOf = (payload: string, votes: Pick<PollVote, 'voter' | 'options'>[]): PollTally => {
  const poll = JSON.parse(payload) as Partial<PollContent>;
  const chosen = votes.map((v) => ({ voter: v.voter, options: new Set(JSON.parse(v.options) as string[]) }));
  const options = (poll.options ?? []).map((name) => {
    const voters = chosen.filter((v) => v.options.has(name)).map((v) => v.voter);
    return { name, votes: voters.length, voters };
  });
  return {
    name: poll.name ?? '',
    selectableCount: poll.selectableCount ?? 1,
    options,
    totalVoters: chosen.filter((v) => v.options.size > 0).length,
  };
};

/** GET a sent poll's current tally: 404 for an unknown message, 409 CONFLICT for one that is not a poll. */
export const getPollTally = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<{ ok: true; poll: PollTally }> => {
  await ownSessionId(ctx, sessionId);
  await ctx.outgoing.settled();
  const row = await ctx.db.outgoingMessage.findFirst({
    where: { id: messageId, sessionId, accountId: ctx.caller.accountId },
    select: { kind: true, payload: true, pollVotes: { orderBy: [...VOTE_ORDER], select: { voter: true, options: true } } },
  });
  if (!row) throw notFound('Message');
  if (row.kind !== 'poll') throw new DomainError('CONFLICT', 'This message is not a poll, so it has no votes');
  return { ok: true, poll: tallyOf(row.payload, row.pollVotes) };
};

/**
 * A decrypted vote on one of this session's polls: the voter's current choice replaces their earlier one
 * (none withdraws it), unless it is older than the one on record (votes can arrive out of order after a
 * reconnect); then the poll.vote event, written with the change, and the pollVotes subscription.
 */
export const announcePollVote = async (
  deps: Pick<Deps, 'db' | 'webhooks' | 'events'>,
  accountId: string | null,
  item: IncomingItem,
  message: Pick<ReceivedMessage, 'pollVote'>,
): Promise<void> => {
  const vote = message.pollVote;
  if (!vote) return;
  const poll = await deps.db.outgoingMessage.findFirst({
    where: { sessionId: item.sessionId, waMessageId: vote.pollWaMessageId, kind: 'poll' },
    select: { id: true },
  });
  if (!poll) return;
  const voterKey = item.fromLid ?? item.from;
  const votedAt = new Date(vote.votedAt || Date.parse(item.receivedAt));
  const earlier = await deps.db.pollVote.findUnique({
    where: { messageId_voterKey: { messageId: poll.id, voterKey } },
    select: { votedAt: true, options: true },
  });
  if (earlier && earlier.votedAt > votedAt) return;
  const options = JSON.stringify(vote.selectedOptions);
  // The same vote on record: written with its event, so delivered again (another node after a planned
  // move, before the first link's receipt) it was announced already.
  if (earlier && earlier.votedAt.getTime() === votedAt.getTime() && earlier.options === options) return;
  const fields = { voter: item.from, voterLid: item.fromLid, options, votedAt };
  const event: PollVoteEvent = {
    sessionId: item.sessionId,
    messageId: poll.id,
    pollWaMessageId: vote.pollWaMessageId,
    waMessageId: item.waMessageId,
    chatId: item.chatId,
    voter: item.from,
    voterLid: item.fromLid,
    selectedOptions: vote.selectedOptions,
    at: votedAt.toISOString(),
    receivedAt: item.receivedAt,
  };
  await writeWithEvents(
    deps,
    deps.db.pollVote.upsert({
      where: { messageId_voterKey: { messageId: poll.id, voterKey } },
      create: { messageId: poll.id, voterKey, ...fields },
      update: fields,
    }),
    accountId ? [{ accountId, sessionId: item.sessionId, type: 'poll.vote', data: event }] : [],
  );
  deps.events.publish('pollVotes', item.sessionId, event);
};
