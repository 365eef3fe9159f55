import { DEFAULT_CONNECTION_CONFIG } from 'baileys';
import type { AuthenticationCreds, SocketConfig } from 'baileys';

/**
 * Baileys' Signal repository, with each received message decrypted in turn with the link's sends.
 *
 * Baileys rc14 runs each send in one key-store transaction, keyed by the account's own JID: the device
 * lists, any session it sets up from a fetched key bundle and every encryption are held in that
 * transaction's cache and written when the send is done. It decrypts each received message in a
 * transaction of its own, keyed by the sender's JID, so the two run side by side. When a contact's
 * device and this link start a Signal session with each other at the same moment (the first messages
 * between two sessions linked to one phone, or between two sessions that write to each other), the
 * contact's first message (a pkmsg) sets up a session and uses up one of this link's one-time prekeys;
 * the send in progress then writes back the session record it read before, without that session.
 * Every later message of the contact's session needs the prekey again and fails ("Invalid PreKey ID",
 * logged at error level), and is lost. Decrypting inside a transaction with the sends' key makes the
 * two wait for each other, so each reads what the other wrote.
 */
export const signalRepositoryFor =
  (creds: AuthenticationCreds): SocketConfig['makeSignalRepository'] =>
  (auth, logger, pnToLid) => {
    const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(auth, logger, pnToLid);
    const { keys } = auth;
    if (!('transaction' in keys)) return repository;
    return {
      ...repository,
      decryptMessage: (opts) => {
        // Baileys' sends use creds.me.id, read when each starts (it is set once the link is paired).
        const me = creds.me?.id;
        return me ? keys.transaction(() => repository.decryptMessage(opts), me) : repository.decryptMessage(opts);
      },
    };
  };
