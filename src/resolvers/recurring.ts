import { randomUUID } from 'node:crypto';
import type { RequestContext } from './context.ts';
import { requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { ownSession } from './sessions.ts';

/** Shared by recurring messages and statuses: a connected session, then an in-memory Bree timer. */
export const registerRecurring = async (
  ctx: RequestContext,
  sessionId: string,
  everyMs: number,
  payload: Record<string, unknown>,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const session = await ownSession(ctx, sessionId);
  requireLink(ctx, session);
  const cap = ctx.settings.MAX_RECURRING_PER_ACCOUNT;
  if (cap > 0 && ctx.jobs.countRecurring(ctx.caller.accountId) >= cap) {
    throw new DomainError('CONFLICT', `This account already has the most recurring timers allowed (${cap}); cancel one first`);
  }
  const timerId = randomUUID();
  await ctx.jobs.addRecurring({ timerId, accountId: ctx.caller.accountId, sessionId, everyMs, payload, createdAt: ctx.now() });
  return { ok: true, recurringEveryMs: everyMs, timerId };
};
