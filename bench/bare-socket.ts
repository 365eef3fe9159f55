// Baileys on its own, the benchmark's reference: a bare socket with its keys in memory, on its own
// thread as the service's links run on theirs, so neither shares a thread with the sandbox (which
// stands in for WhatsApp's servers) and this thread's Baileys (whose key store turns on async hooks)
// does not tax the service's main thread. It links through the QR flow (the main thread's sandbox
// phone scans), sends on request, and reports the moment (process.hrtime) of each incoming
// message's `messages.upsert`.
import makeWASocket from 'baileys';
import type { WASocket } from 'baileys';
import { pino } from 'pino';
import { parentPort, workerData } from 'node:worker_threads';
import { socketOptionsFor } from '../src/runtime/network/baileys-target.ts';
import type { SandboxAddress } from '../src/runtime/network/baileys-target.ts';
import { memoryAuth } from '../test/sandbox/helpers.ts';

export type BareRequest = { kind: 'send'; to: string; prefix: string; count: number; concurrency: number } | { kind: 'close' };
export type BareReport = { kind: 'qr'; qr: string } | { kind: 'open' } | { kind: 'upsert'; at: bigint } | { kind: 'sent'; failed?: string };

if (!parentPort) throw new Error('bare-socket.ts runs only as a worker thread');
const port = parentPort;
const { sandbox } = workerData as { sandbox: SandboxAddress };
const auth = memoryAuth();
const report = (message: BareReport) => port.postMessage(message);

let closing = false;
const open = (): WASocket => {
  const sock = makeWASocket({ auth: auth.state, logger: pino({ level: 'silent' }), ...socketOptionsFor({ sandbox }) });
  sock.ev.on('connection.update', (update) => {
    if (update.qr) report({ kind: 'qr', qr: update.qr });
    if (update.connection === 'open') report({ kind: 'open' });
    // The 515 restart after pairing (or any drop meanwhile): the same credentials log in on a new socket.
    if (update.connection === 'close' && !closing) current = open();
  });
  sock.ev.on('messages.upsert', ({ type }) => {
    if (type === 'notify') report({ kind: 'upsert', at: process.hrtime.bigint() });
  });
  return sock;
};
let current = open();

/** `count` sends, `concurrency` at a time, as the API's load generator posts them. */
const send = async ({ to, prefix, count, concurrency }: Extract<BareRequest, { kind: 'send' }>) => {
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) await current.sendMessage(`${to}@s.whatsapp.net`, { text: `${prefix}${next++}` });
      }),
    );
    report({ kind: 'sent' });
  } catch (err) {
    report({ kind: 'sent', failed: err instanceof Error ? err.message : String(err) });
  }
};

port.on('message', async (request: BareRequest) => {
  if (request.kind === 'send') await send(request);
  else {
    closing = true;
    await current.end(undefined);
    port.close();
  }
});
