import { isLidUser, isPnUser, jidDecode, jidEncode, jidNormalizedUser, USyncQuery, USyncUser } from 'baileys';
import type { WASocket } from 'baileys';
import type { LidBook } from './baileys-lids.ts';
import { NotOnNetworkError } from './not-on-network.ts';

/** How long a user the network said it does not know is believed absent: a number can join at any time. */
export const NOT_ON_NETWORK_TTL_MS = 60_000;

const MAX_PRESENT = 4096;
const MAX_ABSENT = 1024;

/**
 * What one session learnt of which users are on the network, kept across its links. A user found is
 * kept for the session's life (bounded: one forgotten is found again in the LID mapping store, with no
 * round trip); a user not found only for `absentForMs`. Plain insertion-ordered maps, the oldest dropped
 * first: an LRU cache allocates its whole bound up front, for each of possibly thousands of sessions.
 */
export class KnownUsers {
  private readonly present = new Set<string>();
  /** when each absent user is to be asked about again (ms since the epoch) */
  private readonly absent = new Map<string, number>();

  constructor(
    private readonly absentForMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  isPresent(user: string): boolean {
    return this.present.has(user);
  }

  isAbsent(user: string): boolean {
    const until = this.absent.get(user);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.absent.delete(user);
    return false;
  }

  found(user: string): void {
    this.absent.delete(user);
    this.present.delete(user);
    this.present.add(user);
    if (this.present.size > MAX_PRESENT) this.present.delete(this.present.values().next().value ?? user);
  }

  missing(user: string): void {
    this.present.delete(user);
    if (this.absentForMs <= 0) return;
    this.absent.delete(user);
    this.absent.set(user, this.now() + this.absentForMs);
    if (this.absent.size > MAX_ABSENT) this.absent.delete(this.absent.keys().next().value ?? user);
  }
}

/** The user a 1:1 send goes to, by phone number or LID, without device; undefined for anything else. */
export const userOfTarget = (jid: string): string | undefined => {
  const decoded = jidDecode(jid);
  // An explicit device is sent to as given: Baileys looks nothing up for it.
  if (!decoded?.user || decoded.device !== undefined) return undefined;
  if (!isPnUser(jid) && !isLidUser(jid)) return undefined;
  return jidNormalizedUser(jid);
};

export interface Reach {
  /** Resolves when `jid` may be sent to; rejects with NotOnNetworkError when the network has no such user. */
  assertOnNetwork: (jid: string) => Promise<void>;
  /** Which of these user JIDs exist: what is known answers at once, the numbers left in one contact usync. */
  whichExist: (jids: string[]) => Promise<Set<string>>;
  /** Like whichExist for phone-number JIDs, with each one's LID when the mapping store or the usync tells it. */
  lookUp: (pnJids: string[]) => Promise<Map<string, { exists: boolean; lid: string | null }>>;
}

/**
 * Whether the users a link sends to exist. Known when the session saw them before, when the LID mapping
 * store pairs them (only the network tells a pair), or from Baileys' own device look-up: the usync it
 * makes before every 1:1 send, asked here first with the same users and cache, so the send that follows
 * finds the answer in Baileys' device cache and asks nothing more. Baileys itself sends to a user with
 * no devices as if to anyone (to the sender's own devices only), and the network acks it.
 */
export const reachFor = (sock: WASocket, known: KnownUsers, lids: LidBook): Reach => {
  const asking = new Map<string, Promise<boolean>>();

  const me = () => {
    const creds = sock.authState.creds.me;
    const pn = creds?.id ? jidDecode(creds.id)?.user : undefined;
    const lid = creds?.lid ? jidDecode(creds.lid)?.user : undefined;
    return { pn, lid };
  };

  const mapped = async (user: string): Promise<boolean> => Boolean(isLidUser(user) ? await lids.pnForLid(user) : await lids.lidForPn(user));

  /** One device look-up, as relayMessage makes it: the sender's identity beside the recipient. */
  const devicesOf = async (user: string): Promise<boolean> => {
    const own = me();
    const sender = isLidUser(user) && own.lid ? jidEncode(own.lid, 'lid') : own.pn ? jidEncode(own.pn, 's.whatsapp.net') : undefined;
    const wanted = jidDecode(user)?.user;
    const devices = await sock.getUSyncDevices(sender ? [sender, user] : [user], true, false);
    return devices.some((d) => d.user === wanted);
  };

  /** What is known without asking the network; undefined when only the network can tell. */
  const knownAnswer = async (user: string): Promise<boolean | undefined> => {
    if (known.isPresent(user)) return true;
    if (known.isAbsent(user)) return false;
    if (await mapped(user)) {
      known.found(user);
      return true;
    }
    return undefined;
  };

  const exists = async (user: string): Promise<boolean> => {
    const already = await knownAnswer(user);
    if (already !== undefined) return already;
    let answer = asking.get(user);
    if (!answer) {
      answer = devicesOf(user).finally(() => asking.delete(user));
      asking.set(user, answer);
    }
    const found = await answer;
    if (found) known.found(user);
    else known.missing(user);
    return found;
  };

  const isOwn = (user: string): boolean => {
    const own = me();
    const name = jidDecode(user)?.user;
    return name !== undefined && (name === own.pn || name === own.lid);
  };

  const whichExist = async (jids: string[]): Promise<Set<string>> => {
    const present = new Set<string>();
    const askNumbers = new Map<string, string[]>();
    for (const jid of jids) {
      const user = userOfTarget(jid) ?? jidNormalizedUser(jid);
      const already = await knownAnswer(user);
      if (already) present.add(jid);
      else if (already === undefined && isLidUser(user) && (await exists(user))) present.add(jid);
      else if (already === undefined && !isLidUser(user)) askNumbers.set(user, [...(askNumbers.get(user) ?? []), jid]);
    }
    if (askNumbers.size === 0) return present;
    // usync's contact check takes numbers only (a LID above is asked through its devices).
    const answers = (await sock.onWhatsApp(...askNumbers.keys())) ?? [];
    const found = new Set(answers.filter((r) => r.exists).map((r) => jidNormalizedUser(r.jid)));
    for (const [user, asked] of askNumbers) {
      if (found.has(user)) {
        known.found(user);
        for (const jid of asked) present.add(jid);
      } else known.missing(user);
    }
    return present;
  };

  /** The numbers of a contact usync that also asks for LIDs (the network answers a LID for each number it has). */
  const askWithLids = async (users: string[]): Promise<Map<string, string | null>> => {
    const query = new USyncQuery().withContactProtocol().withLIDProtocol();
    for (const user of users) query.withUser(new USyncUser().withPhone(`+${jidDecode(user)?.user ?? ''}`));
    const result = await sock.executeUSyncQuery(query);
    const found = new Map<string, string | null>();
    for (const entry of result?.list ?? []) {
      if (entry.contact !== true) continue;
      const lid = typeof entry.lid === 'string' && entry.lid ? jidNormalizedUser(entry.lid) : null;
      found.set(jidNormalizedUser(entry.id), lid);
    }
    return found;
  };

  const lookUp = async (pnJids: string[]): Promise<Map<string, { exists: boolean; lid: string | null }>> => {
    const answers = new Map<string, { exists: boolean; lid: string | null }>();
    const ask: string[] = [];
    for (const jid of new Set(pnJids.map((j) => jidNormalizedUser(j)))) {
      const already = await knownAnswer(jid);
      const lid = await lids.lidForPn(jid);
      // Present without a stored LID: asked again, since only the network can tell the LID.
      if (already === false || (already === true && lid)) answers.set(jid, { exists: already, lid });
      else ask.push(jid);
    }
    if (ask.length === 0) return answers;
    const found = await askWithLids(ask);
    for (const jid of ask) {
      const lid = found.get(jid);
      if (lid === undefined) known.missing(jid);
      else known.found(jid);
      answers.set(jid, { exists: lid !== undefined, lid: lid ?? null });
    }
    return answers;
  };

  return {
    whichExist,
    lookUp,
    assertOnNetwork: async (jid) => {
      const user = userOfTarget(jid);
      if (!user || isOwn(user)) return;
      if (!(await exists(user))) throw new NotOnNetworkError(`${user} is not on the network`);
    },
  };
};
