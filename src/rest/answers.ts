import { z } from 'zod';
import { ERROR_CODES } from '../resolvers/errors.ts';

/**
 * Answer schemas more than one domain's routes use. Each domain's own answers sit beside its routes.
 * Nullable fields are always present (null), as the views build them.
 */

export const errorAnswer = z
  .object({
    ok: z.literal(false),
    error: z.object({
      // The one list of codes (src/resolvers/errors.ts), so the document cannot miss one.
      code: z.enum([...ERROR_CODES] as [string, ...string[]]),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

export const dateTime = z.iso.datetime({ offset: true });

export const sent = z
  .object({
    ok: z.literal(true),
    id: z.string().describe('the outgoing record'),
    status: z.literal('PENDING').optional().describe('extension: present when the send pacer queued the message; it goes at sendAt'),
    sendAt: dateTime.optional().describe('extension: when a queued message goes (its pacer slot)'),
  })
  .meta({ id: 'SendAnswer' });

export const ok = z.object({ ok: z.literal(true) }).loose();

/** Answers the spec does not show in full: an object, documented in prose. */
export const object = (description: string) => z.object({}).loose().describe(description);
