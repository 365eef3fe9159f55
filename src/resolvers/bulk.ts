import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Contact } from '../generated/sqlite/client.ts';
import { getContactGroup } from './contact-groups.ts';
import { parseVariables } from './contacts.ts';
import type { RequestContext } from './context.ts';
import { deliverNow, NOT_ON_NETWORK_REASON, requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { phoneOfJid } from './jids.ts';
import { refundQuota, takeQuota } from './quota.ts';
import type { CampaignProgress } from '../runtime/ports/events.ts';
import { campaignTopic } from './topics.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { admit } from './idempotency.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { isRateAnswer } from './pacing.ts';
import type { OutboxEvent } from '../runtime/ports/webhooks.ts';

export const bulkSchema = z.object({
  message: z.string().min(1, 'cannot be empty').max(65_536),
  delayMs: z.number().int().min(0).max(60_000).default(0),
  /** beyond the spec: an id chosen by the caller, to follow the send on the campaignProgress subscription */
  progressId: z.uuid().optional(),
});

export interface BulkResult {
  ok: true;
  total: number;
  sent: number;
  failed: number;
  errors: Array<{ jid: string; reason: string }>;
  /**
   * Beyond the spec, only when some are: the messages that wait in the session's queue because the
   * network answered rate-overlimit (to their send's device look-up, or to the recipient check, which
   * queues every message but the blocked contacts'); each is PENDING and goes at `sendAt`, after the
   * session's pause. They count in `total`, neither in `sent` nor in `failed`.
   */
  queued?: Array<{ jid: string; messageId: string; sendAt: string }>;
}

/** `{key}` becomes its value; unknown keys stay as written. A Map, so `{constructor}` finds nothing. */
export const fillPlaceholders = (template: string, values: ReadonlyMap<string, string>): string =>
  template.replace(/\{([^{}]+)\}/g, (whole, key: string) => values.get(key) ?? whole);

/**
 * {name} (or the number), {phone}, and {<key>} from the contact's variables, whose keys may hold spaces,
 * accents or punctuation; a variable the contact has none of stays as written. {phone} is the number
 * only: a contact known by LID alone (a hidden number) gets an empty {phone}, never the LID's digits,
 * which are not a number anyone can call.
 */
export const personaliseFor = (template: string, contact: Pick<Contact, 'jid' | 'name' | 'phone' | 'variables'>): string => {
  const phone = contact.phone || phoneOfJid(contact.jid);
  return fillPlaceholders(
    template,
    new Map([...Object.entries(parseVariables(contact.variables)), ['name', contact.name || phone], ['phone', phone]]),
  );
};

const sendToContacts = async (ctx: RequestContext, sessionId: string, contacts: Contact[], input: unknown): Promise<BulkResult> => {
  const { message, delayMs, progressId } = parseInput(bulkSchema, input);
  const session = await ownSession(ctx, sessionId);
  const link = requireLink(ctx, session);
  const result: BulkResult = { ok: true, total: contacts.length, sent: 0, failed: 0, errors: [] };
  const fail = (jid: string, reason: string) => {
    result.failed += 1;
    result.errors.push({ jid, reason });
  };
  const topic = progressId ? campaignTopic(ctx.caller.accountId, progressId) : null;
  /** The progress so far, with the contact at hand counted as `moved` when given. */
  const progressWith = (moved?: 'sent' | 'failed'): CampaignProgress => {
    const sent = result.sent + (moved === 'sent' ? 1 : 0);
    const failed = result.failed + (moved === 'failed' ? 1 : 0);
    return { campaignId: progressId ?? '', total: result.total, sent, failed, remaining: result.total - sent - failed };
  };
  const progressEvent = (progress: CampaignProgress): OutboxEvent => ({
    accountId: ctx.caller.accountId,
    sessionId,
    type: 'campaign.progress',
    data: { ...progress, sessionId },
  });
  type OutcomeEvents = (status: 'SENT' | 'FAILED') => OutboxEvent[];
  /**
   * One contact's turn, one at a time per progress id (two requests may share one). Its campaign.progress
   * event is written in the transaction of the record change it counts (the SENT mark or the FAILED
   * update). A turn that changes no record (blocked, not on the network, no link) writes its event on its
   * own, after the SENT marks still being written behind, so the events keep their order.
   */
  const turn = async (work: (outcomeEvents?: OutcomeEvents) => Promise<void>): Promise<void> => {
    if (!topic) {
      await work();
      return;
    }
    await oneAtATime(topic, async () => {
      let written = false;
      await work((status) => {
        written = true;
        return [progressEvent(progressWith(status === 'SENT' ? 'sent' : 'failed'))];
      });
      if (!written) {
        await ctx.outgoing.settled();
        await ctx.webhooks.emit(progressEvent(progressWith()));
      }
    });
    ctx.events.publish('campaign', topic, progressWith());
  };

  const unblocked = contacts.filter((c) => !c.isBlocked);
  let onNetwork: Set<string>;
  /** the check was answered rate-overlimit: the session paused, and every message waits in its queue */
  let rateAnswered = false;
  try {
    onNetwork = unblocked.length > 0 ? await link.onNetwork(unblocked.map((c) => c.jid)) : new Set();
  } catch (err) {
    if (!ctx.pacer.enabled || !isRateAnswer(err)) {
      throw new DomainError(
        'NETWORK_ERROR',
        `Could not check the recipients on the network: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    // Each send checks its recipient again when it goes (after the pause): one not on the network then fails.
    rateAnswered = true;
    onNetwork = new Set(unblocked.map((c) => c.jid));
  }
  // Only what will be sent counts: blocked contacts and numbers not on the network take no quota.
  const sendable = unblocked.filter((c) => onNetwork.has(c.jid)).length;
  const startedAt = ctx.now();
  await takeQuota(ctx, sendable);
  let unused = sendable;
  try {
    let first = true;
    for (const contact of contacts) {
      await turn(async (outcomeEvents) => {
        if (contact.isBlocked) fail(contact.jid, 'blocked');
        else if (!onNetwork.has(contact.jid)) fail(contact.jid, NOT_ON_NETWORK_REASON);
        else {
          if (!first && delayMs > 0 && !rateAnswered) await sleep(delayMs);
          first = false;
          const text = personaliseFor(message, contact);
          try {
            // From here the unit is deliverNow's: it gives it back if the message does not leave.
            unused -= 1;
            const row = await deliverNow(
              ctx,
              session,
              { to: contact.jid, content: { kind: 'text', text }, summary: text, kind: 'text' },
              { quotaTakenAt: startedAt, outcomeEvents, waitForSlot: !rateAnswered },
            );
            // The send's own check can disagree with the look-up above (a number that left in between).
            if (row.status === 'FAILED') fail(contact.jid, row.error ?? NOT_ON_NETWORK_REASON);
            else if (row.status === 'PENDING') {
              result.queued ??= [];
              result.queued.push({ jid: contact.jid, messageId: row.id, sendAt: (row.sendAt ?? ctx.now()).toISOString() });
            } else result.sent += 1;
          } catch (err) {
            if (!(err instanceof DomainError) || err.code === 'INTERNAL') throw err;
            fail(contact.jid, 'send_failed');
          }
        }
      });
    }
  } finally {
    await refundQuota(ctx, unused, startedAt);
  }
  return result;
};

const recipientsOrder = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

export const bulkToContactGroup = async (ctx: RequestContext, sessionId: string, groupId: string, input: unknown): Promise<BulkResult> => {
  parseInput(bulkSchema, input);
  await admit(ctx);
  await ownSession(ctx, sessionId);
  const group = await getContactGroup(ctx, groupId);
  const contacts = await ctx.db.contact.findMany({
    where: { accountId: ctx.caller.accountId, memberships: { some: { groupId: group.id } } },
    orderBy: recipientsOrder,
  });
  return sendToContacts(ctx, sessionId, contacts, input);
};

export const bulkToTag = async (ctx: RequestContext, sessionId: string, tag: string, input: unknown): Promise<BulkResult> => {
  parseInput(bulkSchema, input);
  await admit(ctx);
  await ownSession(ctx, sessionId);
  const contacts = await ctx.db.contact.findMany({
    where: { accountId: ctx.caller.accountId, tagRows: { some: { accountId: ctx.caller.accountId, tag } } },
    orderBy: recipientsOrder,
  });
  return sendToContacts(ctx, sessionId, contacts, input);
};
