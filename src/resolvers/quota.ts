import type { RequestContext } from './context.ts';
import { DomainError } from './errors.ts';

const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

const secondsToNextUtcDay = (now: Date): number => {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
};

type QuotaContext = Pick<RequestContext, 'db' | 'settings' | 'now'> & { caller: { accountId: string } };

/**
 * Counts `count` messages against today's quota, or refuses them all (429) when that would pass it.
 * The increment comes first and is undone on refusal, so two racing requests cannot both slip under.
 */
export const takeQuota = async (ctx: QuotaContext, count: number): Promise<void> => {
  const limit = ctx.settings.DAILY_QUOTA;
  if (limit === 0 || count === 0) return;
  const now = ctx.now();
  const key = { accountId: ctx.caller.accountId, day: utcDay(now) };
  const row = await ctx.db.dailyUsage.upsert({
    where: { accountId_day: key },
    create: { ...key, count },
    update: { count: { increment: count } },
  });
  if (row.count > limit) {
    await ctx.db.dailyUsage.update({ where: { accountId_day: key }, data: { count: { decrement: count } } });
    throw new DomainError('QUOTA_EXCEEDED', `The daily quota of ${limit} messages would be exceeded (${row.count - count} used today)`, {
      retryAfterSeconds: secondsToNextUtcDay(now),
    });
  }
};

/** Gives back what a send that never left took. */
export const refundQuota = async (ctx: QuotaContext, count: number, at: Date): Promise<void> => {
  if (ctx.settings.DAILY_QUOTA === 0 || count === 0) return;
  await ctx.db.dailyUsage.updateMany({
    where: { accountId: ctx.caller.accountId, day: utcDay(at), count: { gte: count } },
    data: { count: { decrement: count } },
  });
};
