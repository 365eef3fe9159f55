import { createHash, randomBytes } from 'node:crypto';
import { aesEncryptGCM, hmacSign, normalizeMessageContent, proto } from 'baileys';

/** A poll as a phone shows it: the question, its options in order, and how many may be chosen (0: any number). */
export interface PollView {
  name: string;
  options: string[];
  selectableCount: number;
}

/** The poll a message carries (any of WhatsApp's three creation messages), with the secret its votes are encrypted with. */
export const pollOf = (message: proto.IMessage): (PollView & { secret?: Uint8Array }) | undefined => {
  const m = normalizeMessageContent(message) ?? message;
  const creation = m.pollCreationMessage ?? m.pollCreationMessageV2 ?? m.pollCreationMessageV3;
  if (!creation) return undefined;
  const secret = m.messageContextInfo?.messageSecret;
  return {
    name: creation.name ?? '',
    options: (creation.options ?? []).map((o) => o.optionName ?? ''),
    selectableCount: creation.selectableOptionsCount ?? 0,
    ...(secret?.length ? { secret } : {}),
  };
};

/**
 * A vote as WhatsApp encrypts it, the inverse of rc14's decryptPollVote: the chosen options' SHA-256,
 * in a PollVoteMessage sealed with AES-256-GCM under HMAC-SHA256(sign, HMAC-SHA256(secret, 32 zero
 * bytes)), where sign = poll id, creator JID, voter JID, "Poll Vote", 0x01; the additional data is
 * "<poll id>\0<voter JID>"; the 16-byte tag follows the ciphertext.
 */
export const encryptPollVote = (
  options: string[],
  context: { pollMsgId: string; pollCreatorJid: string; voterJid: string; secret: Uint8Array },
): proto.Message.IPollEncValue => {
  const vote = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.map((o) => createHash('sha256').update(o).digest()),
  }).finish();
  const sign = Buffer.concat([
    Buffer.from(context.pollMsgId),
    Buffer.from(context.pollCreatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    new Uint8Array([1]),
  ]);
  const key = hmacSign(sign, hmacSign(context.secret, new Uint8Array(32)));
  const encIv = randomBytes(12);
  const encPayload = aesEncryptGCM(vote, key, encIv, Buffer.from(`${context.pollMsgId}\u0000${context.voterJid}`));
  return { encPayload, encIv };
};
