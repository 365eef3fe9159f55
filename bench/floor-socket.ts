// One bare Baileys socket in a process of its own, for `npm run bench -- floor`: the same file runs on
// Node.js (through tsx) and on Bun, so the two runtimes are measured on the same code. Keys in memory,
// the project's libsignal fixes and Baileys patch applied, stack settings as on the service's network
// thread. It speaks JSON lines: it prints {qr} and {open}, reads {send, to, prefix, inFlight} and
// prints {sent} (or {failed}) once Baileys has sent them all.
import '../src/runtime/network/libsignal-fix.ts';
import { createInterface } from 'node:readline';
import makeWASocket from 'baileys';
import type { WASocket } from 'baileys';
import { pino } from 'pino';
import { memoryAuth } from '../test/sandbox/memory-auth.ts';

process.setSourceMapsEnabled?.(false);
Error.stackTraceLimit = 3;
const socketUrl = process.env.FLOOR_SOCKET_URL;
if (!socketUrl) throw new Error('floor-socket: FLOOR_SOCKET_URL (the sandbox bartender socket URL) is not set');
// An orderly exit on SIGTERM, so that a --cpu-prof profile (FLOOR_NODE_ARGS) is written.
process.on('SIGTERM', () => process.exit(0));
const say = (message: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(message)}\n`);

const auth = memoryAuth();
const state = auth.state;

let current: WASocket;
const open = (): WASocket => {
  const sock = makeWASocket({
    auth: state,
    logger: pino({ level: 'silent' }),
    waWebSocketUrl: socketUrl,
    markOnlineOnConnect: false,
    shouldSyncHistoryMessage: () => false,
    syncFullHistory: false,
  });
  sock.ev.on('creds.update', (update) => Object.assign(state.creds, update));
  sock.ev.on('connection.update', (update) => {
    if (update.qr) say({ qr: update.qr });
    if (update.connection === 'open') say({ open: true });
    // The 515 restart after pairing: the same credentials log in on a new socket.
    if (update.connection === 'close') current = open();
  });
  return sock;
};
current = open();

createInterface({ input: process.stdin }).on('line', async (line) => {
  const { send, to, prefix, inFlight } = JSON.parse(line) as { send: number; to: string; prefix: string; inFlight: number };
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < send) await current.sendMessage(`${to}@s.whatsapp.net`, { text: `${prefix}${next++}` });
      }),
    );
    say({ sent: send });
  } catch (err) {
    say({ failed: err instanceof Error ? err.message : String(err) });
  }
});
