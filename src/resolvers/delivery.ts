import { createHash, randomUUID } from 'node:crypto';
import type { OutgoingMessage, Session } from '../generated/sqlite/client.ts';
import type { NetworkLink, NotOnNetworkErrorName, OutgoingContent, SendResult } from '../runtime/ports/network.ts';
import type { OutboxEvent } from '../runtime/ports/webhooks.ts';
import type { Deps, RequestContext } from './context.ts';
import { jobContext } from './context.ts';
import { DomainError } from './errors.ts';
import { earlierAttempt, recordIdFor } from './idempotency.ts';
import {
  announceResumed,
  inChatOrder,
  isRateAnswer,
  pushedBack,
  RESTRICTED_REASON,
  rateAnswered,
  showTyping,
  slotFor,
  waitForSlot,
} from './pacing.ts';
import { refundQuota, takeQuota } from './quota.ts';
import { messageEvent } from './webhooks.ts';

/** What the SENT mark keeps of a sent message so a retry receipt can be answered later (see getMessage in baileys-network). */
export const sentMessageOf = (sent: SendResult): string | null => (sent.message ? Buffer.from(sent.message).toString('base64') : null);

/** A record's reason when the network does not know its recipient: `contact_not_on_<network>`, as bulk sends report it (docs/api-reference.md). */
export const NOT_ON_NETWORK_REASON = 'contact_not_on_whatsapp';

/** The send was refused before leaving because the network does not know the recipient. */
export const isNotOnNetwork = (err: unknown): boolean =>
  err instanceof Error && err.name === ('NotOnNetworkError' satisfies NotOnNetworkErrorName);

/** What a FAILED record says of a send that threw. */
export const failureReason = (err: unknown): string =>
  isNotOnNetwork(err) ? NOT_ON_NETWORK_REASON : err instanceof Error ? err.message : String(err);

export const notConnected = (): DomainError =>
  new DomainError('SESSION_NOT_CONNECTED', 'The session is not connected; connect it (and scan the QR code) first');

/**
 * Several nodes: this node holds the session's link but the database no longer holds its claim (another
 * node took the session). Nothing was written, so the client may send again at once; `Retry-After` says
 * so, as for any request about a session on the move.
 */
export const movedAway = (): DomainError =>
  new DomainError('SESSION_NOT_CONNECTED', 'The session is moving to another node; try again in a moment', { retryAfterSeconds: 1 });

/**
 * The 409 of a session without a live link. One that is linking again by itself (CONNECTING: its link
 * dropped, the service restarted, or this node just took it over) is back within seconds, so the answer
 * carries `Retry-After: 1` as a session on the move does; any other state needs the client to act.
 */
export const unlinked = (ctx: Pick<RequestContext, 'sessions'>, sessionId: string): DomainError =>
  ctx.sessions.view(sessionId)?.status === 'CONNECTING'
    ? new DomainError('SESSION_NOT_CONNECTED', 'The session is connecting; try again in a moment', { retryAfterSeconds: 1 })
    : notConnected();

/** The live link of a connected session, or 409. */
export const requireLink = (ctx: Pick<RequestContext, 'sessions'>, session: Pick<Session, 'id'>): NetworkLink => {
  const link = ctx.sessions.link(session.id);
  if (!link) throw unlinked(ctx, session.id);
  return link;
};

type MediaContent = Extract<OutgoingContent, { kind: 'media' }>;

/**
 * What a record keeps (its `payload`) to send the same message again after a crash: the content exactly
 * as it was handed to the network, with media named by its URL and the SHA-256 of the bytes sent
 * instead of the bytes themselves.
 */
export type StoredContent = Exclude<OutgoingContent, { kind: 'media' }> | (Omit<MediaContent, 'data'> & { url: string; sha256: string });

/** A record's payload: its content, and for a campaign message the gap to keep after the one before. */
export type StoredPayload = StoredContent & { spacingMs?: number };

export interface Delivery {
  to: string;
  content: OutgoingContent;
  /** the history record's `content`: the text, the caption, or a short description */
  summary: string;
  kind: string;
  /** where a media message's bytes were fetched from, so a resend fetches the same file */
  mediaUrl?: string;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

export const storedContent = (content: OutgoingContent, mediaUrl?: string): StoredContent => {
  if (content.kind !== 'media') return content;
  if (!mediaUrl) throw new Error('a media delivery needs the URL its bytes came from');
  const { data, ...rest } = content;
  return { ...rest, url: mediaUrl, sha256: sha256(data) };
};

const storedKinds = new Set(['text', 'media', 'buttons', 'contact', 'location', 'poll']);

/**
 * The message a record was accepted with, to send it again. Media is fetched again from its URL and
 * must be the same file (same SHA-256), or the resend fails rather than send something else. Records
 * written before payloads held the whole content carry only `{text}` and are sent as that text.
 */
export const contentOfRecord = async (
  deps: Pick<Deps, 'fetchMedia'>,
  record: Pick<OutgoingMessage, 'payload' | 'content'>,
): Promise<OutgoingContent> => {
  const { spacingMs: _spacing, ...stored } = JSON.parse(record.payload) as Partial<StoredPayload> & { text?: string };
  if (!stored.kind || !storedKinds.has(stored.kind)) return { kind: 'text', text: stored.text ?? record.content };
  if (stored.kind !== 'media') return stored as Exclude<StoredContent, { kind: 'media' }>;
  const { url, sha256: expected, ...media } = stored as Extract<StoredContent, { kind: 'media' }>;
  const fetched = await deps.fetchMedia(url, 'url');
  if (sha256(fetched.data) !== expected) {
    throw new Error(`the file at ${url} changed since the message was accepted, so it was not sent again`);
  }
  return { ...media, data: fetched.data };
};

/** A record that waits for its pacer slot: PENDING with the time it goes, sent by its job then. */
const queueRecord = async (ctx: RequestContext, record: OutgoingMessage, at: number): Promise<OutgoingMessage> => {
  const queued: OutgoingMessage = { ...record, sendAt: new Date(at), jobId: randomUUID() };
  await ctx.db.outgoingMessage.create({ data: queued });
  await ctx.jobs.scheduleMessage(queued.jobId ?? '', queued.id, new Date(at));
  ctx.metrics.sends.inc({ kind: record.kind, outcome: 'queued' });
  return queued;
};

/**
 * A message the network answered rate-overlimit goes back in the queue, behind the session's pause (set
 * by then: networkRefused for a refused send, handleSendError for an error ack) and ahead of the later
 * messages of its chat.
 */
const requeueAfterRateAnswer = async (ctx: RequestContext, record: OutgoingMessage): Promise<OutgoingMessage> => {
  const slot = await slotFor(ctx, record.sessionId, record.toNumber, record.content.length, record.id, { refused: true });
  const sendAt = new Date(slot?.at ?? ctx.now().getTime());
  const jobId = randomUUID();
  await ctx.outgoing.settled();
  await ctx.db.outgoingMessage.update({ where: { id: record.id }, data: { sendAt, jobId } });
  await ctx.jobs.scheduleMessage(jobId, record.id, sendAt);
  ctx.metrics.sends.inc({ kind: record.kind, outcome: 'rate_answer' });
  return { ...record, sendAt, jobId };
};

/**
 * Records a send that did not leave as FAILED, unless the session's new owner took the PENDING record
 * first (several nodes: this node lost the session while the message was on its way, and the new owner
 * arms every PENDING record of the session when it claims it). Then that node sends it, and the record as
 * it stands is returned (PENDING, claimed there, or SENT): answering a refusal for a message that reaches
 * the phone would be wrong. Returns null when this node wrote FAILED. A refusal by error ack written
 * first also leaves the record alone, and the refusal stands.
 */
const failUnlessTaken = async (
  ctx: RequestContext,
  record: OutgoingMessage,
  reason: string,
  moreEvents: OutboxEvent[],
): Promise<OutgoingMessage | null> => {
  const failed = await ctx.db.outgoingMessage.updateMany({
    where: { id: record.id, status: 'PENDING', claimedAt: null },
    data: { status: 'FAILED', error: reason, waMessageId: null },
  });
  if (failed.count > 0) {
    // Only the node that wrote FAILED announces it; the write above is the one that decides.
    for (const event of [messageEvent({ ...record, status: 'FAILED', error: reason, waMessageId: null }), ...moreEvents]) {
      await ctx.webhooks.emit(event);
    }
    return null;
  }
  const now = await ctx.db.outgoingMessage.findUnique({ where: { id: record.id } });
  if (!now || now.status === 'FAILED') return null;
  ctx.metrics.sends.inc({ kind: record.kind, outcome: 'handed_over' });
  ctx.logger.info({ sessionId: record.sessionId, messageId: record.id, status: now.status }, "the session's new owner took the message");
  return now;
};

/**
 * The address a record and its webhooks name the recipient by: a send addressed to a LID is recorded
 * under the person's number when the account's sessions know it (the LID goes beside it, `toLid`), so
 * one person's history is one, whichever address the caller used. The message still goes to the LID.
 */
const shownRecipient = async (ctx: RequestContext, to: string): Promise<string> => {
  if (!to.endsWith('@lid')) return to;
  const known = (await ctx.knownPeople(ctx.caller.accountId, [to])).find((p) => p.lid === to);
  return known?.pn ?? to;
};

/**
 * Creates the outgoing record, sends it, and records SENT or FAILED with the reason. With pacing on, a
 * message whose slot is not yet due (or that shows "typing…" first) is stored PENDING with its time and
 * sent by its job instead, and the PENDING record is returned; `waitForSlot` waits for the slot here
 * instead (a bulk send, which reports each outcome in its answer). The record comes
 * first so that a refusal arriving as an error ack, even before the send returns, finds it. A recipient
 * not on the network is an outcome, not an error: the FAILED record is returned (reason
 * NOT_ON_NETWORK_REASON), as a refusal by error ack leaves the request answered; any other failure of
 * the send is a NETWORK_ERROR.
 * `quotaTakenAt`: the caller took this message's quota unit then; either way, a message that does not
 * leave (no link, or the network refused it) gives its unit back to the day it was taken.
 * `outcomeEvents`: more webhook events of the outcome (a bulk send's campaign.progress), asked for when
 * the record becomes SENT or FAILED and written in the same transaction; not asked for when no outcome
 * is written (no link, or a retry answered with the earlier attempt's record).
 */
export const deliverNow = async (
  ctx: RequestContext,
  session: Pick<Session, 'id'>,
  delivery: Delivery,
  options: { quotaTakenAt?: Date; outcomeEvents?: (status: 'SENT' | 'FAILED') => OutboxEvent[]; waitForSlot?: boolean } = {},
): Promise<OutgoingMessage> => {
  const startedAt = ctx.now();
  const takenAt = options.quotaTakenAt ?? startedAt;
  const id = recordIdFor(ctx);
  const earlier = await earlierAttempt(ctx, id);
  if (earlier) {
    // A retry after a stop: the cut-off attempt's record holds this message and its quota unit, and the
    // start sends it again itself.
    if (options.quotaTakenAt) await refundQuota(ctx, 1, takenAt);
    return earlier;
  }
  const link = ctx.sessions.link(session.id);
  // Several nodes: a node whose claim on the session is no longer the database's sends nothing (fencing).
  const fenced = link !== undefined && !(await ctx.sessions.stillOwns(session.id));
  if (!link || fenced) {
    ctx.metrics.sends.inc({ kind: delivery.kind, outcome: 'not_connected' });
    if (options.quotaTakenAt) await refundQuota(ctx, 1, takenAt);
    throw fenced ? movedAway() : unlinked(ctx, session.id);
  }
  if (!options.quotaTakenAt) await takeQuota(ctx, 1);
  const waMessageId = link.newMessageId();
  const record: OutgoingMessage = {
    id,
    accountId: ctx.caller.accountId,
    sessionId: session.id,
    toNumber: await shownRecipient(ctx, delivery.to),
    content: delivery.summary,
    kind: delivery.kind,
    payload: JSON.stringify(storedContent(delivery.content, delivery.mediaUrl)),
    status: 'PENDING',
    error: null,
    waMessageId,
    remoteJid: null,
    toLid: null,
    sendAt: null,
    claimedAt: null,
    jobId: null,
    campaignId: null,
    sentAt: null,
    sentMessage: null,
    deliveredAt: null,
    readAt: null,
    playedAt: null,
    deletedAt: null,
    createdAt: startedAt,
  };
  let sender = link;
  const slot = await slotFor(ctx, session.id, delivery.to, delivery.summary.length, id);
  if (slot && (slot.at > ctx.now().getTime() || slot.typingMs > 0)) {
    if (!options.waitForSlot) return queueRecord(ctx, record, slot.at);
    const due = await waitForSlot(ctx, slot, () => slotFor(ctx, session.id, delivery.to, delivery.summary.length, id));
    if (ctx.pacer.take(session.id, id, ctx.now().getTime())) void announceResumed(ctx, session.id);
    const current = ctx.sessions.link(session.id);
    if (!current) {
      await refundQuota(ctx, 1, takenAt);
      throw unlinked(ctx, session.id);
    }
    sender = current;
    if (due.typingMs > 0) await showTyping(ctx, sender, delivery.to, due.typingMs);
  } else if (slot && ctx.pacer.take(session.id, id, ctx.now().getTime())) void announceResumed(ctx, session.id);
  await ctx.outgoing.pending({ ...record, waMessageId });
  let sent: SendResult;
  const sending = performance.now();
  try {
    // The session was lost meanwhile (this node paused past its lease): the new owner links it now.
    if (ctx.sessions.link(session.id) !== sender) throw new Error('the session moved to another node before the message left');
    sent = await inChatOrder(ctx, session.id, delivery.to, () => sender.send(delivery.to, delivery.content, { messageId: waMessageId }));
  } catch (err) {
    if (ctx.pacer.enabled && isRateAnswer(err)) return requeueAfterRateAnswer(ctx, record);
    const notOnNetwork = isNotOnNetwork(err);
    const reason = failureReason(err);
    // SENT marks are written behind; this session's events are written after theirs, so they keep their order.
    await ctx.outgoing.settled();
    const taken = await failUnlessTaken(ctx, record, reason, options.outcomeEvents?.('FAILED') ?? []);
    if (taken) return taken;
    ctx.metrics.sends.inc({ kind: delivery.kind, outcome: notOnNetwork ? 'not_on_network' : 'failed' });
    if (notOnNetwork) ctx.logger.info({ sessionId: session.id, messageId: record.id, to: delivery.to }, 'recipient not on the network');
    else ctx.logger.warn({ err, sessionId: session.id, messageId: record.id }, 'send failed');
    await refundQuota(ctx, 1, takenAt);
    if (notOnNetwork) return { ...record, status: 'FAILED', error: reason, waMessageId: null };
    throw new DomainError('NETWORK_ERROR', `The network refused the message: ${reason}`);
  }
  ctx.metrics.sendSeconds.observe({ kind: delivery.kind }, (performance.now() - sending) / 1000);
  ctx.metrics.sends.inc({ kind: delivery.kind, outcome: 'sent' });
  const sentAt = ctx.now();
  const done: OutgoingMessage = {
    ...record,
    status: 'SENT',
    sentAt,
    waMessageId: sent.waMessageId,
    remoteJid: sent.remoteJid,
    toLid: sent.remoteLid ?? null,
  };
  ctx.outgoing.sent({
    id: record.id,
    sessionId: record.sessionId,
    chatId: record.toNumber,
    sentAt,
    waMessageId: sent.waMessageId,
    remoteJid: sent.remoteJid,
    toLid: sent.remoteLid ?? null,
    sentMessage: sentMessageOf(sent),
    events: [messageEvent(done), ...(options.outcomeEvents?.('SENT') ?? [])],
  });
  return done;
};

/**
 * For sends that do something visible or slow first (typing, a wait): the quota unit is taken before
 * `first` runs, so a request over the quota is refused whole before anything happens, and it is given
 * back if the message never reaches the network.
 */
export const deliverAfter = async (
  ctx: RequestContext,
  session: Pick<Session, 'id'>,
  first: (link: NetworkLink) => Promise<void>,
  delivery: Delivery,
): Promise<OutgoingMessage> => {
  const link = requireLink(ctx, session);
  const takenAt = ctx.now();
  await takeQuota(ctx, 1);
  try {
    await first(link);
  } catch (err) {
    await refundQuota(ctx, 1, takenAt);
    throw err;
  }
  return deliverNow(ctx, session, delivery, { quotaTakenAt: takenAt });
};

/** The error acks' codes that the pacer acts on (rc14's handleBadAck passes them as messageStubParameters[0]). */
const RATE_ANSWER = '429';
const RESTRICTED = '463';

/**
 * The network refused a message after the send returned (an error ack): the record becomes FAILED with
 * the reason, and loses the sentAt a SENT mark may have written first. A refused button message counts
 * against buttons for that session and goes out again as plain text, so it is never lost; the copy is a
 * record of its own, named in the refused record's error.
 */
export const handleSendError = async (
  deps: Deps,
  sessionId: string,
  waMessageId: string,
  refusal: string,
  code?: string,
): Promise<void> => {
  await deps.outgoing.settled();
  const record = await deps.db.outgoingMessage.findFirst({ where: { sessionId, waMessageId } });
  if (!record) return;
  if (code === RATE_ANSWER && deps.pacer.enabled) {
    // Refused for the rate: it never reached the recipient, so it goes again, same network id, after the pause.
    await rateAnswered(deps, sessionId);
    const back = await deps.db.outgoingMessage.updateMany({
      where: { id: record.id, status: { not: 'FAILED' } },
      data: { status: 'PENDING', sentAt: null, error: null, claimedAt: null },
    });
    if (back.count > 0) await requeueAfterRateAnswer(jobContext(deps, record.accountId), { ...record, status: 'PENDING', sentAt: null });
    return;
  }
  const reason = code === RESTRICTED ? RESTRICTED_REASON : refusal;
  if (code === RESTRICTED) await pushedBack(deps, sessionId, 'restricted', RESTRICTED_REASON);
  // Only the first refusal of a record acts: a repeated error ack must not send the plain copy twice.
  const marked = await deps.db.outgoingMessage.updateMany({
    where: { id: record.id, status: { not: 'FAILED' } },
    data: { status: 'FAILED', sentAt: null, error: record.kind === 'interactive' ? `${reason}; being sent again as plain text` : reason },
  });
  if (marked.count > 0) deps.metrics.sends.inc({ kind: record.kind, outcome: 'refused_after_send' });
  if (marked.count === 0) return;
  if (record.kind !== 'interactive') {
    await deps.webhooks.emit(messageEvent({ ...record, status: 'FAILED', sentAt: null, error: reason }));
    return;
  }
  deps.buttons.failed(sessionId);
  const payload = JSON.parse(record.payload) as { body?: string; header?: string };
  const text = payload.header ? `${payload.header}\n\n${payload.body ?? record.content}` : (payload.body ?? record.content);
  const session = await deps.db.session.findUniqueOrThrow({ where: { id: sessionId } });
  let error: string;
  try {
    // The refused message's quota unit goes to its copy; deliverNow gives it back if the copy cannot leave.
    const fallback = await deliverNow(
      jobContext(deps, record.accountId),
      session,
      { to: record.toNumber, content: { kind: 'text', text }, summary: record.content, kind: 'text' },
      { quotaTakenAt: record.createdAt },
    );
    error =
      fallback.status === 'FAILED'
        ? `${reason}; the plain-text fallback failed too: ${fallback.error ?? 'unknown'}`
        : `${reason}; sent again as plain text (message ${fallback.id})`;
  } catch (err) {
    error = `${reason}; the plain-text fallback failed too: ${err instanceof Error ? err.message : String(err)}`;
  }
  await deps.db.outgoingMessage.update({ where: { id: record.id }, data: { status: 'FAILED', sentAt: null, error } });
  await deps.webhooks.emit(messageEvent({ ...record, status: 'FAILED', sentAt: null, error }));
};
