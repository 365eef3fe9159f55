import { isLidUser, isPnUser, jidDecode, jidEncode } from 'baileys';
import type { SignalKeyStore } from 'baileys';

/**
 * What Baileys' LID mapping store knows of a person, read from the stored keys only (`lid-mapping`:
 * `<pnUser>` → LID user, `<lidUser>_reverse` → PN user). Unlike `lidMapping.getLIDForPN`, a miss asks
 * the network nothing, so a received message or a receipt never waits for a round trip.
 */
export interface LidBook {
  pnForLid(lid: string): Promise<string | null>;
  lidForPn(pn: string): Promise<string | null>;
}

const userOf = (jid: string): string => (jid.split('@')[0] ?? '').split(':')[0] ?? '';

export const storedLidBook = (keys: SignalKeyStore): LidBook => {
  const read = async (id: string): Promise<string | null> => {
    const found = (await keys.get('lid-mapping', [id]))[id];
    return typeof found === 'string' && found.length > 0 ? found : null;
  };
  return {
    pnForLid: async (lid) => {
      const pnUser = await read(`${userOf(lid)}_reverse`);
      return pnUser ? jidEncode(pnUser, 's.whatsapp.net') : null;
    },
    lidForPn: async (pn) => {
      const lidUser = await read(userOf(pn));
      return lidUser ? jidEncode(lidUser, 'lid') : null;
    },
  };
};

/** A user JID without its device, hosted forms mapped to their plain ones. */
export const plainUser = (jid: string | null | undefined): string | undefined => {
  if (!jid) return undefined;
  const decoded = jidDecode(jid);
  if (!decoded?.user) return undefined;
  const server = decoded.server === 'hosted' ? 's.whatsapp.net' : decoded.server === 'hosted.lid' ? 'lid' : decoded.server;
  return jidEncode(decoded.user, server);
};

/** One person as the network named them: the phone-number JID and the LID, each when known. */
export interface Person {
  pn?: string;
  lid?: string;
  /** the address as given when it is neither (a group, a broadcast list, a channel) */
  other?: string;
}

/** Sorts an address and its alternate (Baileys' `remoteJidAlt`/`participantAlt`) into a person. */
export const personOf = (jid: string | null | undefined, alt?: string | null): Person => {
  const person: Person = {};
  for (const candidate of [plainUser(jid), plainUser(alt)]) {
    if (!candidate) continue;
    if (isLidUser(candidate)) person.lid ??= candidate;
    else if (isPnUser(candidate)) person.pn ??= candidate;
    else person.other ??= candidate;
  }
  return person;
};

/** Fills in the missing half of a person from the mapping store. */
export const completePerson = async (person: Person, book: LidBook | undefined): Promise<Person> => {
  if (!book) return person;
  if (person.lid && !person.pn) {
    const pn = await book.pnForLid(person.lid);
    if (pn) return { ...person, pn };
  } else if (person.pn && !person.lid) {
    const lid = await book.lidForPn(person.pn);
    if (lid) return { ...person, lid };
  }
  return person;
};

/** The address users see for a person: the phone number when known, else the LID (never shown as a number). */
export const shownAddress = (person: Person): string | undefined => person.pn ?? person.lid ?? person.other;
