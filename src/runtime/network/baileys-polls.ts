import { createHash } from 'node:crypto';
import { decryptPollVote, normalizeMessageContent } from 'baileys';
import type { proto, WAMessage } from 'baileys';
import type { Logger } from 'pino';
import type { PollVoteReceived, ReceivedMessage } from '../ports/incoming.ts';
import { plainUser } from './baileys-lids.ts';
import type { OwnAddresses } from './baileys-incoming.ts';

/** A poll as it went out: its options and the secret its votes are encrypted with. */
interface SentPoll {
  options: string[];
  secret: Uint8Array;
}

const sentPollOf = (raw: proto.IMessage | null | undefined): SentPoll | undefined => {
  const message = normalizeMessageContent(raw);
  const creation = message?.pollCreationMessage ?? message?.pollCreationMessageV2 ?? message?.pollCreationMessageV3;
  const secret = message?.messageContextInfo?.messageSecret;
  if (!creation || !secret?.length) return undefined;
  return { options: (creation.options ?? []).map((o) => o.optionName ?? ''), secret };
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * A vote on one of this link's polls, decrypted with the poll's secret (rc14 keeps its own decryption
 * commented out, so it is done here with its decryptPollVote). The key is derived from the JIDs of the
 * poll's creator and of the voter, and WhatsApp has named each by phone number or by LID depending on
 * the chat (Baileys issues 1344, 1678, 2342: in 1:1 chats the creator by LID and the voter by number);
 * every pairing is tried, and GCM's tag tells the right one. Undefined when the poll is not one this
 * link sent, or no pairing decrypts the vote.
 */
export const pollVoteOf = async (
  msg: WAMessage,
  item: Pick<ReceivedMessage, 'from' | 'fromLid'>,
  own: OwnAddresses,
  sentMessage: (waMessageId: string) => Promise<proto.IMessage | undefined>,
  log: Logger,
): Promise<PollVoteReceived | undefined> => {
  const update = normalizeMessageContent(msg.message)?.pollUpdateMessage;
  const pollWaMessageId = update?.pollCreationMessageKey?.id;
  if (!update?.vote || !pollWaMessageId) return undefined;
  const poll = sentPollOf(await sentMessage(pollWaMessageId));
  if (!poll) return undefined;
  const creators = [plainUser(own.lid), plainUser(own.jid)].filter((j): j is string => Boolean(j));
  const voters = [item.from, item.fromLid].filter((j): j is string => Boolean(j));
  for (const pollCreatorJid of creators) {
    for (const voterJid of voters) {
      let chosen: Uint8Array[];
      try {
        chosen = decryptPollVote(update.vote, {
          pollCreatorJid,
          pollMsgId: pollWaMessageId,
          pollEncKey: poll.secret,
          voterJid,
        }).selectedOptions;
      } catch {
        continue;
      }
      const hashes = new Set(chosen.map((h) => Buffer.from(h).toString('hex')));
      return {
        pollWaMessageId,
        selectedOptions: poll.options.filter((name) => hashes.has(sha256(name))),
        votedAt: Number(update.senderTimestampMs ?? 0) || Number(msg.messageTimestamp ?? 0) * 1000,
      };
    }
  }
  log.warn({ pollWaMessageId, voter: item.from }, 'a poll vote could not be decrypted with any pairing of addresses');
  return undefined;
};
