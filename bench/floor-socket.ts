// One bare Baileys socket in a process of its own, for `npm run bench -- floor`: the same file runs on
// Node.js (through tsx) and on Bun, so the two runtimes are measured on the same code. Keys in memory,
// the project's libsignal fixes and Baileys patch applied, stack settings as on the service's network
// thread. It speaks JSON lines: it prints {qr} and {open}, reads {send, to, prefix, inFlight} and
// prints {sent} (or {failed}) once Baileys has sent them all.
import '../src/runtime/network/libsignal-fix.ts';
import { createInterface } from 'node:readline';
import makeWASocket, { BufferJSON, initAuthCreds } from 'baileys';
import type { AuthenticationState, SignalDataSet, SignalDataTypeMap, WASocket } from 'baileys';
import { pino } from 'pino';

process.setSourceMapsEnabled?.(false);
Error.stackTraceLimit = 3;
const socketUrl = process.env.FLOOR_SOCKET_URL;
if (!socketUrl) throw new Error('floor-socket: FLOOR_SOCKET_URL (the sandbox bartender socket URL) is not set');
// An orderly exit on SIGTERM, so that a --cpu-prof profile (FLOOR_NODE_ARGS) is written.
process.on('SIGTERM', () => process.exit(0));
const say = (message: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(message)}\n`);

const keys = new Map<string, string>();
const state: AuthenticationState = {
  creds: initAuthCreds(),
  keys: {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = keys.get(`${type}:${id}`);
        if (value) out[id] = JSON.parse(value, BufferJSON.reviver) as SignalDataTypeMap[T];
      }
      return out;
    },
    set: async (data: SignalDataSet) => {
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value) keys.set(`${type}:${id}`, JSON.stringify(value, BufferJSON.replacer));
          else keys.delete(`${type}:${id}`);
        }
      }
    },
  },
};

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
