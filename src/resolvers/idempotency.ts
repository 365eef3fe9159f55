import type { RequestContext } from './context.ts';
import { DomainError } from './errors.ts';

const IN_PROGRESS = 0;

export interface Replayable<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/**
 * Runs a send once per Idempotency-Key: a retry with the same key gets the first answer and sends nothing.
 * A failed attempt frees the key, so the caller can retry it.
 */
export const once = async <T>(
  ctx: RequestContext,
  key: string | undefined,
  route: string,
  run: () => Promise<{ status: number; body: T }>,
): Promise<Replayable<T>> => {
  if (!key) return { ...(await run()), replayed: false };
  if (key.length > 200) {
    throw new DomainError('VALIDATION_FAILED', 'Idempotency-Key is too long', {
      details: [{ path: 'Idempotency-Key', message: 'must be at most 200 characters' }],
    });
  }
  const id = { accountId: ctx.caller.accountId, key };
  const existing = await ctx.db.idempotentRequest.findUnique({ where: { accountId_key: id } });
  if (existing) {
    if (existing.route !== route) throw new DomainError('CONFLICT', 'This Idempotency-Key was used for another request');
    if (existing.status === IN_PROGRESS) throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is still running');
    return { status: existing.status, body: JSON.parse(existing.body) as T, replayed: true };
  }
  try {
    await ctx.db.idempotentRequest.create({ data: { ...id, route, status: IN_PROGRESS, body: '' } });
  } catch {
    throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is still running');
  }
  try {
    const result = await run();
    await ctx.db.idempotentRequest.update({
      where: { accountId_key: id },
      data: { status: result.status, body: JSON.stringify(result.body) },
    });
    return { ...result, replayed: false };
  } catch (err) {
    await ctx.db.idempotentRequest.delete({ where: { accountId_key: id } }).catch(() => undefined);
    throw err;
  }
};
