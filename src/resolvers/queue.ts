import { z } from 'zod';
import type { OutgoingMessage, Prisma } from '../generated/sqlite/client.ts';
import type { RequestContext } from './context.ts';
import { DomainError, notFound } from './errors.ts';
import type { MessageRecordView } from './messages.ts';
import { messageView } from './messages.ts';
import { CANCELLED_REASON } from './pacing.ts';
import { limitSchema } from './paging.ts';
import { refundQuota } from './quota.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { messageEvent } from './webhooks.ts';

/** A session's send queue: its PENDING records, in the order they go (paced sends and scheduled ones). */
export const queueSchema = z.object({ limit: limitSchema.optional() });

/** The order queued records go in: by their time (paced slot or schedule), then as they were accepted. */
export const QUEUE_ORDER = [
  { sendAt: 'asc' },
  { createdAt: 'asc' },
  { id: 'asc' },
] satisfies Prisma.OutgoingMessageOrderByWithRelationInput[];

export const listQueue = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; count: number; items: MessageRecordView[] }> => {
  const { limit } = parseInput(queueSchema, input);
  await ownSession(ctx, sessionId);
  await ctx.outgoing.settled();
  const where = { sessionId, status: 'PENDING' };
  const [count, rows] = await Promise.all([
    ctx.db.outgoingMessage.count({ where }),
    ctx.db.outgoingMessage.findMany({ where, orderBy: QUEUE_ORDER, take: limit ?? 50 }),
  ]);
  return { ok: true, count, items: rows.map(messageView) };
};

/** A queued message is cancelled: FAILED with CANCELLED_REASON, its quota unit given back; one already leaving is a 409. */
export const cancelQueued = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<OutgoingMessage> => {
  await ownSession(ctx, sessionId);
  await ctx.outgoing.settled();
  const row = await ctx.db.outgoingMessage.findFirst({ where: { id: messageId, sessionId } });
  if (!row) throw notFound('Message');
  const { count } = await ctx.db.outgoingMessage.updateMany({
    where: { id: row.id, status: 'PENDING', claimedAt: null },
    data: { status: 'FAILED', error: CANCELLED_REASON },
  });
  if (count === 0) {
    throw new DomainError(
      'CONFLICT',
      `The message is ${row.status === 'PENDING' ? 'being sent' : row.status} and can no longer be cancelled`,
    );
  }
  const cancelled: OutgoingMessage = { ...row, status: 'FAILED', error: CANCELLED_REASON };
  await ctx.webhooks.emit(messageEvent(cancelled));
  ctx.pacer.release(sessionId, row.id);
  await refundQuota(ctx, 1, row.createdAt);
  return cancelled;
};
