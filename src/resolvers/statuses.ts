import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Session } from '../generated/sqlite/client.ts';
import type { NetworkLink, StatusContent } from '../runtime/ports/network.ts';
import type { Deps, RequestContext } from './context.ts';
import { registerRecurring } from './recurring.ts';
import { movedAway, requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { jidSchema } from './jids.ts';
import { bySetting, mediaUrlSchema } from './media-urls.ts';
import { durationMsSchema, MAX_HORIZON_MS } from './messages.ts';
import { refundQuota, takeQuota } from './quota.ts';
import { ownSession } from './sessions.ts';
import { announceResumed, slotFor, waitForSlot } from './pacing.ts';
import { parseInput } from './validate.ts';
import { admit, earlierAttempt, recordIdFor } from './idempotency.ts';

export const STATUS_TARGET = 'status@broadcast';

/** The kinds of status post (StatusType in GraphQL). */
export const statusTypeSchema = z.enum(['text', 'image', 'video', 'audio']);

const payloadSchema = (allowPrivate: boolean) =>
  z
    .object({
      type: statusTypeSchema,
      text: z.string().min(1).max(700).optional(),
      url: mediaUrlSchema(allowPrivate).optional(),
      caption: z.string().max(1024).optional(),
      backgroundColor: z
        .string()
        .regex(/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, 'must be a hex colour like #1a2b3c')
        .optional(),
      statusJidList: z.array(jidSchema).max(5000).optional(),
      audience: z.literal('all_contacts', { message: 'must be "all_contacts"' }).optional(),
    })
    .superRefine((v, ctx) => {
      if (v.type === 'text' && v.text === undefined)
        ctx.addIssue({ code: 'custom', path: ['text'], message: 'is required for a text status' });
      if (v.type !== 'text' && v.url === undefined)
        ctx.addIssue({ code: 'custom', path: ['url'], message: `is required for a ${v.type} status` });
      if (!v.statusJidList?.length && !v.audience) {
        ctx.addIssue({ code: 'custom', path: ['statusJidList'], message: 'give statusJidList, or audience "all_contacts"' });
      }
    });

export const statusPayloadSchema = bySetting(payloadSchema);

export type StatusPayload = z.output<ReturnType<typeof payloadSchema>>;

export interface StatusAnswer {
  ok: true;
  accepted: true;
  validation: 'payload_validated';
  deliveryState: 'accepted_by_whatsapp_web';
  type: StatusPayload['type'];
  target: typeof STATUS_TARGET;
  recipientsCount: number;
  statusJidList: string[];
  messageId: string;
}

/** The listed JIDs plus, with all_contacts, every address-book contact that is on the network. */
const recipientsOf = async (deps: Pick<Deps, 'db'>, accountId: string, link: NetworkLink, payload: StatusPayload): Promise<string[]> => {
  const listed = payload.statusJidList ?? [];
  if (payload.audience !== 'all_contacts') return [...new Set(listed)];
  const contacts = await deps.db.contact.findMany({
    where: { accountId, isBlocked: false, jid: { endsWith: '@s.whatsapp.net' } },
    select: { jid: true },
  });
  const onNetwork = contacts.length > 0 ? await link.onNetwork(contacts.map((c) => c.jid)) : new Set<string>();
  return [...new Set([...listed, ...contacts.map((c) => c.jid).filter((jid) => onNetwork.has(jid))])];
};

const contentOf = async (ctx: Pick<Deps, 'fetchMedia'>, payload: StatusPayload): Promise<StatusContent> => {
  if (payload.type === 'text') return { kind: 'text', text: payload.text ?? '', backgroundColor: payload.backgroundColor };
  const media = await ctx.fetchMedia(payload.url ?? '', 'url');
  return { kind: 'media', mediaType: payload.type, data: media.data, mimetype: media.mimetype, caption: payload.caption };
};

const summaryOf = (payload: StatusPayload): string =>
  payload.type === 'text' ? (payload.text ?? '') : payload.caption || `[${payload.type} status]`;

/** Publishes now and records it; the record is what `messageId` names. */
export const publishStatus = async (ctx: RequestContext, session: Session, payload: StatusPayload): Promise<StatusAnswer> => {
  const link = requireLink(ctx, session);
  // As for a message (deliverNow): a node that lost the session's lease publishes nothing for it.
  if (!(await ctx.sessions.stillOwns(session.id))) throw movedAway();
  const recipients = await recipientsOf(ctx, ctx.caller.accountId, link, payload);
  if (recipients.length === 0) {
    throw new DomainError('VALIDATION_FAILED', 'The status has no recipients', {
      details: [{ path: 'audience', message: 'no address-book contact of this account is on WhatsApp' }],
    });
  }
  const answer = (messageId: string): StatusAnswer => ({
    ok: true,
    accepted: true,
    validation: 'payload_validated',
    deliveryState: 'accepted_by_whatsapp_web',
    type: payload.type,
    target: STATUS_TARGET,
    recipientsCount: recipients.length,
    statusJidList: recipients,
    messageId,
  });
  const id = recordIdFor(ctx);
  const earlier = await earlierAttempt(ctx, id);
  if (earlier) return answer(earlier.id);
  const content = await contentOf(ctx, payload);
  const startedAt = ctx.now();
  await takeQuota(ctx, 1);
  // The network id is chosen before the record is written, so a resend after a crash shows once.
  const waMessageId = link.newMessageId();
  const record = await ctx.db.outgoingMessage.create({
    data: {
      id,
      accountId: ctx.caller.accountId,
      sessionId: session.id,
      toNumber: STATUS_TARGET,
      content: summaryOf(payload),
      kind: 'status',
      payload: JSON.stringify(payload),
      status: 'PENDING',
      waMessageId,
    },
  });
  // A status waits for its slot here, as its answer says whether the network accepted it.
  const slot = await slotFor(ctx, session.id, STATUS_TARGET, 0, record.id);
  if (slot) await waitForSlot(ctx, slot, () => slotFor(ctx, session.id, STATUS_TARGET, 0, record.id));
  if (ctx.pacer.take(session.id, record.id, ctx.now().getTime())) void announceResumed(ctx, session.id);
  const sending = performance.now();
  try {
    const sent = await (ctx.sessions.link(session.id) ?? link).sendStatus(content, recipients, { messageId: waMessageId });
    ctx.metrics.sendSeconds.observe({ kind: 'status' }, (performance.now() - sending) / 1000);
    ctx.metrics.sends.inc({ kind: 'status', outcome: 'sent' });
    await ctx.db.outgoingMessage.update({
      where: { id: record.id },
      data: { status: 'SENT', sentAt: ctx.now(), waMessageId: sent.waMessageId, remoteJid: STATUS_TARGET },
    });
  } catch (err) {
    ctx.metrics.sends.inc({ kind: 'status', outcome: 'failed' });
    const reason = err instanceof Error ? err.message : String(err);
    await ctx.db.outgoingMessage.update({ where: { id: record.id }, data: { status: 'FAILED', error: reason, waMessageId: null } });
    await refundQuota(ctx, 1, startedAt);
    throw new DomainError('NETWORK_ERROR', `The network refused the status: ${reason}`);
  }
  return answer(record.id);
};

export const sendStatus = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<StatusAnswer> => {
  const payload = parseInput(statusPayloadSchema(ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  return publishStatus(ctx, session, payload);
};

export const scheduleSchema = bySetting((allowPrivate) =>
  z.object({
    payload: statusPayloadSchema(allowPrivate),
    delayMs: durationMsSchema({ max: MAX_HORIZON_MS, required: 'is required (ms before publication)' }),
  }),
);

/** Persisted like a scheduled message: it survives restarts and counts against the quota now. */
export const scheduleStatus = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; scheduledInMs: number }> => {
  const { payload, delayMs } = parseInput(scheduleSchema(ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  const id = recordIdFor(ctx);
  if (await earlierAttempt(ctx, id)) return { ok: true, scheduledInMs: delayMs };
  await takeQuota(ctx, 1);
  const sendAt = new Date(ctx.now().getTime() + delayMs);
  const jobId = randomUUID();
  const record = await ctx.db.outgoingMessage.create({
    data: {
      id,
      accountId: ctx.caller.accountId,
      sessionId,
      toNumber: STATUS_TARGET,
      content: summaryOf(payload),
      kind: 'status',
      payload: JSON.stringify(payload),
      status: 'PENDING',
      waMessageId: link.newMessageId(),
      sendAt,
      jobId,
    },
  });
  await ctx.jobs.scheduleMessage(jobId, record.id, sendAt);
  return { ok: true, scheduledInMs: delayMs };
};

export const recurringSchema = (minMs: number, allowPrivate: boolean) =>
  z.object({
    payload: statusPayloadSchema(allowPrivate),
    everyMs: durationMsSchema({ min: minMs, max: MAX_HORIZON_MS, required: 'is required (interval in ms)' }),
  });

export const startRecurringStatus = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const { payload, everyMs } = parseInput(recurringSchema(ctx.settings.RECURRING_MIN_MS, ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  return registerRecurring(ctx, sessionId, everyMs, { kind: 'status', status: payload, to: STATUS_TARGET, text: summaryOf(payload) });
};

/** Sends a scheduled or interrupted status record in place (its quota was taken when it was accepted). */
export const sendScheduledStatus = async (deps: Deps, link: NetworkLink, accountId: string, payload: StatusPayload, messageId?: string) => {
  const recipients = await recipientsOf(deps, accountId, link, payload);
  if (recipients.length === 0) throw new Error('the status had no recipients when it was due');
  return link.sendStatus(await contentOf(deps, payload), recipients, { messageId });
};
