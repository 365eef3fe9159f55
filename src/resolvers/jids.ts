import { z } from 'zod';

export const USER_DOMAIN = 's.whatsapp.net';
const JID_PATTERN = /^[A-Za-z0-9._:-]+@(s\.whatsapp\.net|g\.us|newsletter|lid|broadcast)$/;
const DIGITS = /^\d{5,20}$/;

export const isJid = (value: string): boolean => JID_PATTERN.test(value);

/** docs/api-reference.md#conventions: digits become a user (or, with isGroup, a group) JID; a full JID passes unchanged. */
export const toJid = (value: string, isGroup = false): string | null => {
  if (DIGITS.test(value)) return `${value}@${isGroup ? 'g.us' : USER_DOMAIN}`;
  return isJid(value) ? value : null;
};

/** The number part of a user JID, without the device suffix; '' for other JIDs. */
export const phoneOfJid = (jid: string): string => {
  const [user, domain] = jid.split('@');
  if (domain !== USER_DOMAIN || !user) return '';
  return user.split(':')[0] ?? '';
};

export const JID_MESSAGE = 'must be a number (digits only, no +) or a full JID';

export const jidSchema = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const jid = toJid(value);
    if (!jid) {
      ctx.addIssue({ code: 'custom', message: JID_MESSAGE });
      return z.NEVER;
    }
    return jid;
  });

export const phoneSchema = z.string().regex(/^\d{5,20}$/, 'must be 5 to 20 digits, without + or spaces');
