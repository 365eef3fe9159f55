import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { CampaignProgress } from '../runtime/ports/events.ts';
import type { OutgoingMessage } from '../generated/sqlite/client.ts';
import type { Deps, RequestContext } from './context.ts';
import { fillPlaceholders } from './bulk.ts';
import { contentOfRecord, deliverAfter, deliverNow, failureReason, isNotOnNetwork, requireLink, sentMessageOf } from './delivery.ts';
import type { StoredContent, StoredPayload } from './delivery.ts';
import { DomainError, validationFailed } from './errors.ts';
import { jidSchema, phoneOfJid } from './jids.ts';
import { checkRecipient, durationMsSchema, MAX_HORIZON_MS, recipientShape, textDelivery, withJid } from './messages.ts';
import { replyFields } from './message-actions.ts';
import { messageEvent, writeWithEvents } from './webhooks.ts';
import { takeQuota } from './quota.ts';
import { ownSession } from './sessions.ts';
import { publishStatus, sendScheduledStatus } from './statuses.ts';
import type { StatusPayload } from './statuses.ts';
import { parseInput } from './validate.ts';
import { claimOccurrence, registerRecurring } from './recurring.ts';
import { campaignTopic } from './topics.ts';
import { announceSent } from './conversations.ts';
import { admit, earlierAttempt, recordIdFor } from './idempotency.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { announceResumed, inChatOrder, isRateAnswer, QUEUE_ORDER, showTyping, slotFor } from './pacing.ts';

const text = z.string().min(1, 'cannot be empty').max(65_536);

export const scheduleSchema = z
  .object({
    ...recipientShape,
    message: text,
    sendAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional(),
    delayMs: durationMsSchema({ max: MAX_HORIZON_MS }).optional(),
  })
  .superRefine(checkRecipient)
  .transform(withJid);

export const campaignSchema = z.object({
  contacts: z
    .array(z.object({ jid: jidSchema, name: z.string().max(200).optional() }))
    .min(1, 'at least one contact is required')
    .max(10_000),
  template: text,
  delayMs: durationMsSchema({ max: 24 * 3600 * 1000 }).default(0),
});

export const variationsSchema = z
  .object({
    ...recipientShape,
    variations: z.array(text).min(1, 'at least one variation is required').max(100),
    delayMs: durationMsSchema({ max: 60_000 }).default(0),
    ...replyFields,
  })
  .superRefine(checkRecipient)
  .transform(withJid);

export const recurringSchema = (minMs: number) =>
  z
    .object({
      ...recipientShape,
      message: text,
      everyMs: durationMsSchema({ min: minMs, max: MAX_HORIZON_MS, required: 'is required (interval in ms)' }),
    })
    .superRefine(checkRecipient)
    .transform(withJid);

export interface ScheduleAnswer {
  ok: true;
  scheduledInMs: number;
  sendAt: string;
  messageId: string;
  jobId: string;
}

/** A PENDING record with its network id chosen now, then a Bree job at its time. */
export const scheduleMessage = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<ScheduleAnswer> => {
  const body = parseInput(scheduleSchema, input);
  const now = ctx.now();
  const requested = body.sendAt ? new Date(body.sendAt) : new Date(now.getTime() + (body.delayMs ?? 0));
  if (requested.getTime() - now.getTime() > MAX_HORIZON_MS) {
    throw validationFailed([{ path: 'sendAt', message: `must be at most ${MAX_HORIZON_MS} ms (365 days) ahead` }]);
  }
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  const sendAt = requested.getTime() < now.getTime() ? now : requested;
  const id = recordIdFor(ctx);
  const earlier = await earlierAttempt(ctx, id);
  if (earlier?.sendAt) {
    const at = earlier.sendAt;
    return {
      ok: true,
      scheduledInMs: at.getTime() - earlier.createdAt.getTime(),
      sendAt: at.toISOString(),
      messageId: earlier.id,
      jobId: earlier.jobId ?? '',
    };
  }
  await takeQuota(ctx, 1);
  const jobId = randomUUID();
  const record = await ctx.db.outgoingMessage.create({
    data: {
      id,
      createdAt: now,
      accountId: ctx.caller.accountId,
      sessionId,
      toNumber: body.jid,
      content: body.message,
      kind: 'text',
      payload: JSON.stringify({ kind: 'text', text: body.message } satisfies StoredContent),
      status: 'PENDING',
      waMessageId: link.newMessageId(),
      sendAt,
      jobId,
    },
  });
  await ctx.jobs.scheduleMessage(jobId, record.id, sendAt);
  return { ok: true, scheduledInMs: sendAt.getTime() - now.getTime(), sendAt: sendAt.toISOString(), messageId: record.id, jobId };
};

/** Stored first, one record per recipient at its own time, so a restart resumes without repeats. */
export const startCampaign = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; count: number; campaignId: string }> => {
  const body = parseInput(campaignSchema, input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  const ids = body.contacts.map(() => recordIdFor(ctx));
  const earlier = await earlierAttempt(ctx, ids[0] ?? '');
  if (earlier?.campaignId) return { ok: true, count: ids.length, campaignId: earlier.campaignId };
  await takeQuota(ctx, body.contacts.length);
  const campaignId = randomUUID();
  const start = ctx.now().getTime();
  // With a delay, only the first message is armed now; each one that leaves arms the next delayMs later
  // (armNextOfCampaign), so no gap is shorter than delayMs however late a send is. The times stored
  // here only order the messages until then.
  const spaced = body.delayMs > 0 && body.contacts.length > 1;
  // {name} falls back to the number; a LID's digits are not a number, so a hidden number stays empty.
  const lids = body.contacts.map((c) => c.jid).filter((jid) => jid.endsWith('@lid'));
  const numberOfLid = new Map(
    (lids.length > 0 ? await ctx.knownPeople(ctx.caller.accountId, lids) : []).flatMap((p) => (p.lid && p.pn ? [[p.lid, p.pn]] : [])),
  );
  const numberOf = (jid: string) => phoneOfJid(numberOfLid.get(jid) ?? jid);
  const rows = body.contacts.map((contact, index) => ({
    id: ids[index] ?? recordIdFor(ctx),
    accountId: ctx.caller.accountId,
    sessionId,
    toNumber: contact.jid,
    content: fillPlaceholders(body.template, new Map([['name', contact.name ?? numberOf(contact.jid)]])),
    kind: 'text',
    status: 'PENDING',
    waMessageId: link.newMessageId(),
    sendAt: new Date(start + index * body.delayMs),
    jobId: randomUUID(),
    campaignId,
  }));
  await ctx.db.outgoingMessage.createMany({
    data: rows.map((r) => ({
      ...r,
      payload: JSON.stringify({ kind: 'text', text: r.content, ...(spaced ? { spacingMs: body.delayMs } : {}) } satisfies StoredPayload),
    })),
  });
  for (const row of spaced ? rows.slice(0, 1) : rows) await ctx.jobs.scheduleMessage(row.jobId, row.id, row.sendAt);
  return { ok: true, count: rows.length, campaignId };
};

export const sendVariation = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; count: number; sent: string[] }> => {
  const { quotedMessageId, mentions, ...body } = parseInput(variationsSchema, input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  const chosen = body.variations[Math.floor(Math.random() * body.variations.length)] ?? body.variations[0] ?? '';
  // The quote is found before the wait: an unknown one is a 404 at once, with nothing sent.
  const delivery = await textDelivery(ctx, sessionId, body.jid, chosen, { quotedMessageId, mentions });
  const wait = async () => {
    if (body.delayMs > 0) await sleep(body.delayMs);
  };
  await deliverAfter(ctx, session, wait, delivery);
  return { ok: true, count: 1, sent: [chosen] };
};

/** The live timer's row is what runs: it ends when it is cancelled or its session is deleted. */
export const startRecurring = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const body = parseInput(recurringSchema(ctx.settings.RECURRING_MIN_MS), input);
  await admit(ctx);
  return registerRecurring(ctx, sessionId, body.everyMs, { to: body.jid, text: body.message });
};

const RECONNECT_GRACE_MS = 120_000;
const RETRY_EVERY_MS = 3_000;

const spacingOf = (row: Pick<OutgoingMessage, 'campaignId' | 'payload'>): number =>
  row.campaignId ? ((JSON.parse(row.payload) as Partial<StoredPayload>).spacingMs ?? 0) : 0;

/** A message of a spaced campaign is done (sent or failed): the next one is due `spacingMs` from now. */
const armNextOfCampaign = async (
  deps: Deps,
  done: Pick<OutgoingMessage, 'id' | 'campaignId'>,
  spacingMs: number,
  at: Date,
): Promise<void> => {
  if (!done.campaignId) return;
  const next = await deps.db.outgoingMessage.findFirst({
    where: { campaignId: done.campaignId, status: 'PENDING', claimedAt: null, id: { not: done.id } },
    orderBy: [{ sendAt: 'asc' }, { id: 'asc' }],
    select: { id: true, jobId: true },
  });
  if (!next) return;
  const sendAt = new Date(at.getTime() + spacingMs);
  await deps.db.outgoingMessage.update({ where: { id: next.id }, data: { sendAt } });
  await deps.jobs.scheduleMessage(next.jobId ?? randomUUID(), next.id, sendAt);
};

/** Another node's claim holds the record (it lost the session and has not let go yet): try again shortly. */
const claimedElsewhere = async (deps: Deps, messageId: string): Promise<boolean> =>
  (await deps.db.outgoingMessage.count({ where: { id: messageId, status: 'PENDING', claimedAt: { not: null } } })) > 0;

/**
 * A due record: claimed atomically, then sent exactly as it was accepted (its payload) with the network
 * id chosen when it was stored, so a resend after a crash shows once on the phone. A timer that fires
 * before the record's time is answered with that time, to be armed again, and nothing is sent. Returns
 * a retry time while the session re-links, too.
 */
export const runDueMessage = async (deps: Deps, messageId: string): Promise<Date | null> => {
  if (deps.ownership.clustered) {
    // Several nodes: a job left armed on a node that lost the session (woken after a pause, or having
    // handed it over) ends here, before it claims the record, which would hold the owner's own job back,
    // or arms itself again beside the owner's. The owner armed every record when it took the session.
    const record = await deps.db.outgoingMessage.findUnique({ where: { id: messageId }, select: { sessionId: true } });
    if (!record || !deps.ownership.owns(record.sessionId)) return null;
  }
  const now = deps.now();
  const claimed = await deps.db.outgoingMessage.updateMany({
    where: { id: messageId, status: 'PENDING', claimedAt: null, OR: [{ sendAt: null }, { sendAt: { lte: now } }] },
    data: { claimedAt: now },
  });
  if (claimed.count === 0) {
    if (deps.ownership.clustered && (await claimedElsewhere(deps, messageId))) return new Date(now.getTime() + RETRY_EVERY_MS);
    const early = await deps.db.outgoingMessage.findFirst({
      where: { id: messageId, status: 'PENDING', claimedAt: null, sendAt: { gt: now } },
      select: { sendAt: true },
    });
    if (early?.sendAt) deps.logger.warn({ messageId, sendAt: early.sendAt }, 'a job fired before its message was due; armed again');
    return early?.sendAt ?? null;
  }
  const row = await deps.db.outgoingMessage.findUnique({ where: { id: messageId }, include: { session: true } });
  if (!row) return null;
  // Several nodes: only the session's owner sends, and only while the database holds its claim (fencing);
  // the owner armed its own job when it took the session.
  if (!(await deps.sessions.stillOwns(row.sessionId))) {
    await deps.db.outgoingMessage.updateMany({ where: { id: row.id, status: 'PENDING', claimedAt: now }, data: { claimedAt: null } });
    return null;
  }
  const link = deps.sessions.link(row.sessionId);
  const finish = async (data: {
    status: string;
    error?: string;
    sentAt?: Date;
    remoteJid?: string;
    toLid?: string | null;
    waMessageId?: string;
    sentMessage?: string | null;
    sendAt?: Date;
  }) => {
    const update = deps.db.outgoingMessage.update({ where: { id: row.id }, data });
    const event = messageEvent({ ...row, ...data });
    const { campaignId } = row;
    let progress: CampaignProgress | null = null;
    try {
      if (!campaignId) await writeWithEvents(deps, update, [event]);
      else {
        // Counted before the change with this claimed record moved, so the campaign.progress event goes in
        // the change's own transaction; one campaign's results are counted one at a time (its messages all
        // belong to one session, whose link lives in this process).
        await oneAtATime(campaignTopic(row.accountId, campaignId), async () => {
          const before = await campaignProgress(deps, campaignId);
          const moved = data.status === 'SENT' ? 'sent' : 'failed';
          const counted = { ...before, [moved]: before[moved] + 1, remaining: Math.max(0, before.remaining - 1) };
          progress = counted;
          const sessionId = row.sessionId;
          await writeWithEvents(deps, update, [
            event,
            { accountId: row.accountId, sessionId, type: 'campaign.progress', data: { ...counted, sessionId } },
          ]);
        });
      }
    } finally {
      // Released once the outcome is written: released before, a send to the chat asking for its slot in
      // between found the record PENDING and due, took it for one whose job had not asked yet and queued it
      // ahead of the chat, where nothing took it; the chat's later queued messages waited for it until the
      // reservation went stale or the session moved (the cluster soak, issue 46: three messages 81 s late).
      deps.pacer.release(row.sessionId, row.id);
    }
    if (data.status === 'SENT') {
      await deps.outgoing.storeSent([row.id]);
      if (data.waMessageId) announceSent(deps, [{ sessionId: row.sessionId, chatId: row.toNumber, waMessageId: data.waMessageId }]);
    }
    const spacingMs = spacingOf(row);
    if (spacingMs > 0) await armNextOfCampaign(deps, row, spacingMs, data.sentAt ?? deps.now());
    if (row.campaignId && progress) deps.events.publish('campaign', campaignTopic(row.accountId, row.campaignId), progress);
  };
  /**
   * Several nodes: before writing FAILED, whether the session moved on while the message was due (this
   * node paused or cut off mid-send). The new owner arms every PENDING record of the session when it
   * takes it and sends this one under the same network id, so a FAILED written here could overwrite its
   * SENT; the record is left to it, as a send checks its claim right before it leaves.
   */
  const movedOn = async (): Promise<boolean> => {
    if (await deps.sessions.stillOwns(row.sessionId)) return false;
    deps.pacer.release(row.sessionId, row.id);
    deps.logger.info(
      { messageId, sessionId: row.sessionId },
      'scheduled message: the session moved to another node; its new owner sends it',
    );
    return true;
  };
  if (!link) {
    // Counted from the start too: a message left over from before a stop waits for its session to re-link.
    const dueAt = Math.max((row.sendAt ?? row.createdAt).getTime(), deps.jobs.startedAt);
    if (row.session.autoConnect && deps.now().getTime() - dueAt < RECONNECT_GRACE_MS) {
      await deps.db.outgoingMessage.update({ where: { id: row.id }, data: { claimedAt: null } });
      return new Date(deps.now().getTime() + RETRY_EVERY_MS);
    }
    if (await movedOn()) return null;
    deps.metrics.sends.inc({ kind: row.kind, outcome: 'not_connected' });
    await finish({ status: 'FAILED', error: 'The session was not connected when the message was due' });
    return null;
  }
  const chars = row.kind === 'status' ? 0 : row.content.length;
  const slot = await slotFor(deps, row.sessionId, row.toNumber, chars, row.id);
  if (slot && slot.at > deps.now().getTime()) {
    // Not its turn yet (the session's pace, a pause, the warm-up's cap): it waits, its time shown in the queue.
    const sendAt = new Date(slot.at);
    await deps.db.outgoingMessage.update({ where: { id: row.id }, data: { claimedAt: null, sendAt } });
    return sendAt;
  }
  if (deps.pacer.take(row.sessionId, row.id, deps.now().getTime())) void announceResumed(deps, row.sessionId);
  if (slot && slot.typingMs > 0) await showTyping(deps, link, row.toNumber, slot.typingMs);
  const sending = performance.now();
  try {
    const networkId = row.waMessageId ?? undefined;
    const sent =
      row.kind === 'status'
        ? await sendScheduledStatus(deps, link, row.accountId, JSON.parse(row.payload) as StatusPayload, networkId)
        : await inChatOrder(deps, row.sessionId, row.toNumber, async () =>
            link.send(row.toNumber, await contentOfRecord(deps, row), { messageId: networkId }),
          );
    deps.metrics.sendSeconds.observe({ kind: row.kind }, (performance.now() - sending) / 1000);
    deps.metrics.sends.inc({ kind: row.kind, outcome: 'sent' });
    await finish({
      status: 'SENT',
      // the slot it went in: a job that fired after its planned slot may have found it moved later
      // (the interval counts from when the message before it went), and the next slots count from it
      ...(slot && row.sendAt && slot.at !== row.sendAt.getTime() ? { sendAt: new Date(slot.at) } : {}),
      sentAt: deps.now(),
      remoteJid: sent.remoteJid,
      toLid: sent.remoteLid ?? null,
      waMessageId: sent.waMessageId,
      sentMessage: sentMessageOf(sent),
    });
  } catch (err) {
    if (deps.pacer.enabled && isRateAnswer(err)) {
      // The link paused the session as it answered (networkRefused); the record goes back in the queue.
      const again = await slotFor(deps, row.sessionId, row.toNumber, chars, row.id, { refused: true });
      const sendAt = new Date(again?.at ?? deps.now().getTime());
      deps.metrics.sends.inc({ kind: row.kind, outcome: 'rate_answer' });
      await deps.db.outgoingMessage.update({ where: { id: row.id }, data: { claimedAt: null, sendAt } });
      return sendAt;
    }
    if (await movedOn()) return null;
    const notOnNetwork = isNotOnNetwork(err);
    deps.metrics.sends.inc({ kind: row.kind, outcome: notOnNetwork ? 'not_on_network' : 'failed' });
    if (notOnNetwork) deps.logger.info({ messageId, to: row.toNumber }, 'scheduled message: recipient not on the network');
    else deps.logger.warn({ err, messageId }, 'scheduled send failed');
    await finish({ status: 'FAILED', error: failureReason(err) });
  }
  return null;
};

/**
 * A recurring timer's job fired: its due occurrence, claimed once across the cluster (claimOccurrence),
 * counted against the quota each time. One that finds the session re-linking after a start or a take-over
 * is tried again shortly, as a scheduled message is; one that finds it disconnected is not sent (a
 * warning); one cut off because this node lost the session is given back for the new owner to send.
 */
export const runRecurring = async (deps: Deps, timerId: string): Promise<void> => {
  const occurrence = await claimOccurrence(deps, timerId);
  if (!occurrence) return;
  const { timer, payload, ctx } = occurrence;
  const session = await deps.db.session.findUnique({ where: { id: timer.sessionId } });
  if (!session) return;
  const to = String(payload.to);
  const messageText = String(payload.text);
  try {
    if (payload.kind === 'status') {
      await publishStatus(ctx, session, payload.status as StatusPayload);
      return;
    }
    await deliverNow(ctx, session, { to, content: { kind: 'text', text: messageText }, summary: messageText, kind: 'text' });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    if (err.code === 'SESSION_NOT_CONNECTED') {
      if (!(await deps.sessions.stillOwns(timer.sessionId))) {
        await occurrence.giveBack();
        return;
      }
      // As for a scheduled message: after a start or a take-over, the occurrence waits for the re-link.
      const dueAt = Math.max(occurrence.at.getTime(), deps.jobs.startedAt);
      if (session.autoConnect && deps.now().getTime() - dueAt < RECONNECT_GRACE_MS) {
        await occurrence.giveBack(new Date(deps.now().getTime() + RETRY_EVERY_MS));
        return;
      }
    }
    deps.logger.warn({ timerId, at: occurrence.at, code: err.code }, `recurring message not sent: ${err.message}`);
  }
};

export const campaignProgress = async (deps: Pick<Deps, 'db' | 'outgoing'>, campaignId: string): Promise<CampaignProgress> => {
  await deps.outgoing.settled();
  const groups = await deps.db.outgoingMessage.groupBy({ by: ['status'], where: { campaignId }, _count: { _all: true } });
  const of = (status: string) => groups.find((g) => g.status === status)?._count._all ?? 0;
  const sent = of('SENT');
  const failed = of('FAILED');
  const remaining = of('PENDING');
  return { campaignId, total: sent + failed + remaining, sent, failed, remaining };
};

/**
 * At start: unconfirmed claims were interrupted by a stop; every PENDING record gets its job again,
 * immediate sends that were in flight included (they have no sendAt and go at once).
 */
export const resumeScheduled = async (deps: Deps, sessionIds?: string[]): Promise<number> => {
  // Several nodes: only the sessions this node has just claimed; their claims were made under an older
  // epoch by a node that lost them (a live owner's claims are left alone).
  const mine = sessionIds ? { sessionId: { in: sessionIds } } : {};
  await deps.db.outgoingMessage.updateMany({ where: { status: 'PENDING', claimedAt: { not: null }, ...mine }, data: { claimedAt: null } });
  const pending = await deps.db.outgoingMessage.findMany({
    where: { status: 'PENDING', ...mine },
    select: {
      id: true,
      jobId: true,
      sendAt: true,
      createdAt: true,
      campaignId: true,
      payload: true,
      sessionId: true,
      toNumber: true,
      content: true,
      kind: true,
    },
    orderBy: QUEUE_ORDER,
  });
  // Of a spaced campaign only the earliest message is armed; it arms the next when it is done.
  const chained = new Set<string>();
  for (const row of pending) {
    if (row.campaignId && spacingOf(row) > 0) {
      if (chained.has(row.campaignId)) continue;
      chained.add(row.campaignId);
    }
    let at = row.sendAt ?? row.createdAt;
    // What fell due while the service was down takes its slot now, in the order the records go, so the
    // jobs firing together cannot overtake one another within a chat.
    if (at.getTime() <= deps.now().getTime()) {
      const slot = await slotFor(deps, row.sessionId, row.toNumber, row.kind === 'status' ? 0 : row.content.length, row.id);
      if (slot) at = new Date(Math.max(slot.at, deps.now().getTime()));
    }
    await deps.jobs.scheduleMessage(row.jobId ?? randomUUID(), row.id, at);
  }
  return pending.length;
};
