import { z } from 'zod';
import type { RequestContext } from './context.ts';
import { deliverNow } from './delivery.ts';
import { DomainError } from './errors.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { admit } from './idempotency.ts';

export const CHANNELS_NOT_LISTED =
  'Listing channels is not supported; send to a channel by its JID (<id>@newsletter) with POST /channels/{channelJid}/send.';

export const sendSchema = z.object({ text: z.string().min(1, 'cannot be empty').max(65_536) });

export const listChannels = async (ctx: RequestContext, sessionId: string): Promise<{ ok: true; channels: never[]; message: string }> => {
  await ownSession(ctx, sessionId);
  return { ok: true, channels: [], message: CHANNELS_NOT_LISTED };
};

export const sendToChannel = async (ctx: RequestContext, sessionId: string, channelJid: string, input: unknown): Promise<{ ok: true }> => {
  const jid = channelJid.trim();
  const { text } = parseInput(sendSchema, input);
  if (!/^[\w.-]+@newsletter$/.test(jid)) {
    throw new DomainError('VALIDATION_FAILED', 'Invalid channel JID', {
      details: [{ path: 'channelJid', message: 'must be a channel JID (<id>@newsletter)' }],
    });
  }
  await admit(ctx);
  const session = await ownSession(ctx, sessionId);
  await deliverNow(ctx, session, { to: jid, content: { kind: 'text', text }, summary: text, kind: 'text' });
  return { ok: true };
};
