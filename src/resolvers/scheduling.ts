import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { RecurringSpec } from '../runtime/jobs/scheduler.ts';
import type { Deps, RequestContext } from './context.ts';
import { jobContext } from './context.ts';
import { fillPlaceholders } from './bulk.ts';
import { deliverAfter, deliverNow, requireLink } from './delivery.ts';
import { DomainError, notFound } from './errors.ts';
import { jidSchema } from './jids.ts';
import { checkRecipient, durationMsSchema, recipientShape, withJid } from './messages.ts';
import { messageEvent, writeWithEvents } from './webhooks.ts';
import { takeQuota } from './quota.ts';
import { ownSession } from './sessions.ts';
import { publishStoredStatus, sendScheduledStatus } from './statuses.ts';
import type { StatusPayload } from './statuses.ts';
import { parseInput } from './validate.ts';

const text = z.string().min(1, 'cannot be empty').max(65_536);
const MAX_DELAY_MS = 365 * 24 * 3600 * 1000;

const scheduleSchema = z
  .object({
    ...recipientShape,
    message: text,
    sendAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional(),
    delayMs: durationMsSchema({ max: MAX_DELAY_MS }).optional(),
  })
  .superRefine(checkRecipient)
  .transform(withJid);

const campaignSchema = z.object({
  contacts: z
    .array(z.object({ jid: jidSchema, name: z.string().max(200).optional() }))
    .min(1, 'at least one contact is required')
    .max(10_000),
  template: text,
  delayMs: durationMsSchema({ max: 24 * 3600 * 1000 }).default(0),
});

const variationsSchema = z
  .object({
    ...recipientShape,
    variations: z.array(text).min(1, 'at least one variation is required').max(100),
    delayMs: durationMsSchema({ max: 60_000 }).default(0),
  })
  .superRefine(checkRecipient)
  .transform(withJid);

const recurringSchema = (minMs: number) =>
  z
    .object({
      ...recipientShape,
      message: text,
      everyMs: durationMsSchema({ min: minMs, max: MAX_DELAY_MS, required: 'is required (interval in ms)' }),
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
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  const now = ctx.now();
  const requested = body.sendAt ? new Date(body.sendAt) : new Date(now.getTime() + (body.delayMs ?? 0));
  const sendAt = requested.getTime() < now.getTime() ? now : requested;
  await takeQuota(ctx, 1);
  const jobId = randomUUID();
  const record = await ctx.db.outgoingMessage.create({
    data: {
      accountId: ctx.caller.accountId,
      sessionId,
      toNumber: body.jid,
      content: body.message,
      kind: 'text',
      payload: JSON.stringify({ text: body.message }),
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
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  await takeQuota(ctx, body.contacts.length);
  const campaignId = randomUUID();
  const start = ctx.now().getTime();
  const rows = body.contacts.map((contact, index) => ({
    id: randomUUID(),
    accountId: ctx.caller.accountId,
    sessionId,
    toNumber: contact.jid,
    content: fillPlaceholders(body.template, new Map([['name', contact.name ?? contact.jid.split('@')[0] ?? '']])),
    kind: 'text',
    status: 'PENDING',
    waMessageId: link.newMessageId(),
    sendAt: new Date(start + index * body.delayMs),
    jobId: randomUUID(),
    campaignId,
  }));
  await ctx.db.outgoingMessage.createMany({ data: rows.map((r) => ({ ...r, payload: JSON.stringify({ text: r.content }) })) });
  for (const row of rows) await ctx.jobs.scheduleMessage(row.jobId, row.id, row.sendAt);
  return { ok: true, count: rows.length, campaignId };
};

export const sendVariation = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; count: number; sent: string[] }> => {
  const body = parseInput(variationsSchema, input);
  const session = await ownSession(ctx, sessionId);
  const chosen = body.variations[Math.floor(Math.random() * body.variations.length)] ?? body.variations[0] ?? '';
  const wait = async () => {
    if (body.delayMs > 0) await sleep(body.delayMs);
  };
  await deliverAfter(ctx, session, wait, { to: body.jid, content: { kind: 'text', text: chosen }, summary: chosen, kind: 'text', payload: { text: chosen } });
  return { ok: true, count: 1, sent: [chosen] };
};

export interface RecurringView {
  timerId: string;
  sessionId: string;
  to: string;
  message: string;
  everyMs: number;
  createdAt: string;
}

const recurringView = (spec: RecurringSpec): RecurringView => ({
  timerId: spec.timerId,
  sessionId: spec.sessionId,
  to: String(spec.payload.to),
  message: String(spec.payload.text),
  everyMs: spec.everyMs,
  createdAt: spec.createdAt.toISOString(),
});

/** Held in memory only, as the spec says: it ends with the process. */
export const startRecurring = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const body = parseInput(recurringSchema(ctx.settings.RECURRING_MIN_MS), input);
  return registerRecurring(ctx, sessionId, body.everyMs, { to: body.jid, text: body.message });
};

/** Shared by recurring messages and statuses: a connected session, then an in-memory Bree timer. */
export const registerRecurring = async (
  ctx: RequestContext,
  sessionId: string,
  everyMs: number,
  payload: Record<string, unknown>,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const session = await ownSession(ctx, sessionId);
  requireLink(ctx, session);
  const timerId = randomUUID();
  await ctx.jobs.addRecurring({ timerId, accountId: ctx.caller.accountId, sessionId, everyMs, payload, createdAt: ctx.now() });
  return { ok: true, recurringEveryMs: everyMs, timerId };
};

export const listRecurring = async (ctx: RequestContext, sessionId: string): Promise<{ count: number; items: RecurringView[] }> => {
  await ownSession(ctx, sessionId);
  const items = ctx.jobs.listRecurring(sessionId).map(recurringView);
  return { count: items.length, items };
};

export const cancelRecurring = async (ctx: RequestContext, sessionId: string, timerId: string): Promise<{ ok: true }> => {
  await ownSession(ctx, sessionId);
  const spec = ctx.jobs.recurringSpec(timerId);
  if (!spec || spec.sessionId !== sessionId) throw notFound('Recurring message');
  await ctx.jobs.cancelRecurring(timerId);
  return { ok: true };
};

const RECONNECT_GRACE_MS = 120_000;
const RETRY_EVERY_MS = 3_000;

/**
 * A due scheduled record: claimed atomically, then sent with the network id chosen when it was stored,
 * so a resend after a crash shows once on the phone. Returns a retry time while the session re-links.
 */
export const runDueMessage = async (deps: Deps, messageId: string): Promise<Date | null> => {
  const claimed = await deps.db.outgoingMessage.updateMany({
    where: { id: messageId, status: 'PENDING', claimedAt: null },
    data: { claimedAt: deps.now() },
  });
  if (claimed.count === 0) return null;
  const row = await deps.db.outgoingMessage.findUnique({ where: { id: messageId }, include: { session: true } });
  if (!row) return null;
  const link = deps.sessions.link(row.sessionId);
  const finish = async (data: { status: string; error?: string; sentAt?: Date; remoteJid?: string; waMessageId?: string }) => {
    await writeWithEvents(deps, deps.db.outgoingMessage.update({ where: { id: row.id }, data }), [messageEvent({ ...row, ...data })]);
    if (row.campaignId) {
      const progress = await campaignProgress(deps, row.campaignId);
      deps.events.publish('campaign', row.campaignId, progress);
      await deps.webhooks.emit({ accountId: row.accountId, sessionId: row.sessionId, type: 'campaign.progress', data: { ...progress, sessionId: row.sessionId } });
    }
  };
  if (!link) {
    const dueAt = (row.sendAt ?? row.createdAt).getTime();
    if (row.session.autoConnect && deps.now().getTime() - dueAt < RECONNECT_GRACE_MS) {
      await deps.db.outgoingMessage.update({ where: { id: row.id }, data: { claimedAt: null } });
      return new Date(deps.now().getTime() + RETRY_EVERY_MS);
    }
    await finish({ status: 'FAILED', error: 'The session was not connected when the message was due' });
    return null;
  }
  try {
    const sent =
      row.kind === 'status'
        ? await sendScheduledStatus(deps, link, row.accountId, JSON.parse(row.payload) as StatusPayload)
        : await link.send(row.toNumber, { kind: 'text', text: (JSON.parse(row.payload) as { text?: string }).text ?? row.content }, {
            messageId: row.waMessageId ?? undefined,
          });
    await finish({ status: 'SENT', sentAt: deps.now(), remoteJid: sent.remoteJid, waMessageId: sent.waMessageId });
  } catch (err) {
    deps.logger.warn({ err, messageId }, 'scheduled send failed');
    await finish({ status: 'FAILED', error: err instanceof Error ? err.message : String(err) });
  }
  return null;
};

/** One occurrence of a recurring message: counted against the quota each time. */
export const runRecurring = async (deps: Deps, spec: RecurringSpec): Promise<void> => {
  const ctx = jobContext(deps, spec.accountId);
  const session = await deps.db.session.findUnique({ where: { id: spec.sessionId } });
  if (!session) {
    await deps.jobs.cancelRecurring(spec.timerId);
    return;
  }
  const to = String(spec.payload.to);
  const messageText = String(spec.payload.text);
  try {
    if (spec.payload.kind === 'status') {
      await publishStoredStatus(deps, spec.accountId, session, spec.payload.status as StatusPayload);
      return;
    }
    await deliverNow(ctx, session, { to, content: { kind: 'text', text: messageText }, summary: messageText, kind: 'text', payload: { text: messageText } });
  } catch (err) {
    if (err instanceof DomainError) deps.logger.warn({ timerId: spec.timerId, code: err.code }, `recurring message not sent: ${err.message}`);
    else throw err;
  }
};

export interface CampaignProgress {
  campaignId: string;
  total: number;
  sent: number;
  failed: number;
  remaining: number;
}

export const campaignProgress = async (deps: Pick<Deps, 'db' | 'outgoing'>, campaignId: string): Promise<CampaignProgress> => {
  await deps.outgoing.settled();
  const groups = await deps.db.outgoingMessage.groupBy({ by: ['status'], where: { campaignId }, _count: { _all: true } });
  const of = (status: string) => groups.find((g) => g.status === status)?._count._all ?? 0;
  const sent = of('SENT');
  const failed = of('FAILED');
  const remaining = of('PENDING');
  return { campaignId, total: sent + failed + remaining, sent, failed, remaining };
};

/** At start: unconfirmed claims were interrupted by a stop; every PENDING record gets its job again. */
export const resumeScheduled = async (deps: Deps): Promise<number> => {
  await deps.db.outgoingMessage.updateMany({ where: { status: 'PENDING', claimedAt: { not: null } }, data: { claimedAt: null } });
  const pending = await deps.db.outgoingMessage.findMany({
    where: { status: 'PENDING' },
    select: { id: true, jobId: true, sendAt: true, createdAt: true },
    orderBy: { sendAt: 'asc' },
  });
  for (const row of pending) await deps.jobs.scheduleMessage(row.jobId ?? randomUUID(), row.id, row.sendAt ?? row.createdAt);
  return pending.length;
};
