import makeWASocket from 'baileys';
import type { AuthenticationState, ConnectionState, UserFacingSocketConfig, WASocket } from 'baileys';
import { pino } from 'pino';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { sandboxSocketOptions } from '../../src/runtime/sandbox/sandbox.ts';

import { memoryAuth } from './memory-auth.ts';

export { memoryAuth };

export interface TestSocket {
  sock: WASocket;
  updates: Array<Partial<ConnectionState>>;
  waitFor: (check: (u: Partial<ConnectionState>) => boolean, ms?: number) => Promise<Partial<ConnectionState>>;
}

export const openSocket = (
  sandbox: Sandbox,
  auth: { state: AuthenticationState },
  extra: Partial<UserFacingSocketConfig> = {},
): TestSocket => {
  const sock = makeWASocket({
    auth: auth.state,
    logger: pino({ level: process.env.BAILEYS_LOG ?? 'silent' }),
    ...sandboxSocketOptions(sandbox),
    ...extra,
  });
  const updates: Array<Partial<ConnectionState>> = [];
  const listeners = new Set<() => void>();
  sock.ev.on('connection.update', (u) => {
    updates.push(u);
    for (const l of listeners) l();
  });
  const waitFor = (check: (u: Partial<ConnectionState>) => boolean, ms = 15_000) =>
    new Promise<Partial<ConnectionState>>((resolve, reject) => {
      const seen = updates.find(check);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`timed out waiting; updates: ${JSON.stringify(updates.map((u) => ({ ...u, qr: u.qr ? '<qr>' : undefined })))}`));
      }, ms);
      const listener = () => {
        const found = updates.find(check);
        if (found) {
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(found);
        }
      };
      listeners.add(listener);
    });
  return { sock, updates, waitFor };
};

/**
 * A Baileys socket linked to a virtual phone through the QR flow, then reconnected after 515; `opened`
 * sees the reconnected socket before it is open (to listen for what the phone sends at the first login).
 */
export const linkedSocket = async (
  sandbox: Sandbox,
  number: string,
  extra: Partial<UserFacingSocketConfig> = {},
  opened?: (socket: TestSocket) => void,
): Promise<TestSocket & { auth: ReturnType<typeof memoryAuth> }> => {
  sandbox.control.addPhone(number, `Owner ${number}`);
  const auth = memoryAuth();
  const first = openSocket(sandbox, auth, extra);
  const { qr } = await first.waitFor((u) => Boolean(u.qr));
  await sandbox.control.scanQr(number, qr ?? '');
  await first.waitFor((u) => u.connection === 'close');
  const socket = openSocket(sandbox, auth, extra);
  opened?.(socket);
  await socket.waitFor((u) => u.connection === 'open');
  return { ...socket, auth };
};

/** Polls until `read` gives a value (not undefined or false), or fails after `ms`. */
export const waitFor = async <T>(read: () => T | undefined | false, ms = 10_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};
