import type { Db } from '../ports/db.ts';
import type { KnownPerson } from '../ports/network.ts';

const PN_DOMAIN = '@s.whatsapp.net';
const LID_DOMAIN = '@lid';

/** The user part of a JID, without its device. */
const userOf = (jid: string): string => (jid.split('@')[0] ?? '').split(':')[0] ?? '';

/** A stored key's value: Baileys keeps the other half of a pair as a JSON string. */
const storedUser = (value: string): string | null => {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'string' && /^\d+$/.test(parsed) ? parsed : null;
  } catch {
    return null;
  }
};

/**
 * The pairs of these phone-number and LID JIDs that any session of the account holds in its `lid-mapping`
 * keys (`<pnUser>` -> LID user, `<lidUser>_reverse` -> number): one read, whatever the count.
 */
export const knownPeople = async (db: Db, accountId: string, jids: string[]): Promise<KnownPerson[]> => {
  const keyIds = new Map<string, string>();
  for (const jid of jids) {
    const user = userOf(jid);
    if (!/^\d+$/.test(user)) continue;
    if (jid.endsWith(PN_DOMAIN)) keyIds.set(user, jid);
    else if (jid.endsWith(LID_DOMAIN)) keyIds.set(`${user}_reverse`, jid);
  }
  if (keyIds.size === 0) return [];
  const rows = await db.sessionAuth.findMany({
    where: { type: 'lid-mapping', keyId: { in: [...keyIds.keys()] }, session: { accountId } },
    select: { keyId: true, value: true },
  });
  const people = new Map<string, KnownPerson>();
  for (const { keyId, value } of rows) {
    const other = storedUser(value);
    if (!other) continue;
    const person = keyId.endsWith('_reverse')
      ? { pn: `${other}${PN_DOMAIN}`, lid: `${keyId.slice(0, -'_reverse'.length)}${LID_DOMAIN}` }
      : { pn: `${keyId}${PN_DOMAIN}`, lid: `${other}${LID_DOMAIN}` };
    people.set(`${person.pn} ${person.lid}`, person);
  }
  return [...people.values()];
};
