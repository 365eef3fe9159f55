// The scale benchmark's floor: N bare Baileys sockets in one process, credentials and keys in memory,
// against the same sandbox process as the service. Driven over IPC by bench/scale.ts, which reads this
// process's CPU and memory from /proc while it links, idles and re-links.
import makeWASocket from 'baileys';
import type { WASocket } from 'baileys';
import { pino } from 'pino';
import { socketOptionsFor } from '../src/runtime/network/baileys-target.ts';
import { connectToSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { memoryAuth } from '../test/sandbox/helpers.ts';

export type FloorRequest = { kind: 'link'; numbers: string[]; parallel: number } | { kind: 'relink'; parallel: number } | { kind: 'stop' };
export type FloorReport = { kind: 'linked'; count: number } | { kind: 'relinked'; count: number };

process.setSourceMapsEnabled(false);
Error.stackTraceLimit = 3;

const controlUrl = process.env.WA_SANDBOX_URL as string;
const sandbox = await connectToSandbox(controlUrl);
const options = socketOptionsFor({ sandbox });
const logger = pino({ level: 'silent' });
const send = (report: FloorReport) => process.send?.(report);

interface Bare {
  number: string;
  auth: ReturnType<typeof memoryAuth>;
  sock?: WASocket;
  /** Bumped when the benchmark closes the socket, so that socket's close does not re-open it. */
  generation: number;
}
const bares: Bare[] = [];

/** Opens a socket and resolves when it is open; re-opens after the pairing's 515 restart, as any app does. */
const open = (bare: Bare, pair: boolean): Promise<void> =>
  new Promise((resolve) => {
    let asked = false;
    const generation = bare.generation;
    const start = () => {
      const sock = makeWASocket({ auth: bare.auth.state, logger, ...options });
      bare.sock = sock;
      sock.ev.on('connection.update', (update) => {
        if (pair && update.qr && !asked) {
          asked = true;
          void sock.requestPairingCode(bare.number).then(async (code) => {
            await fetch(`${controlUrl}/phones/${bare.number}/pairing-code`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ code }),
            });
          });
        }
        if (update.connection === 'open') resolve();
        if (update.connection === 'close' && bare.generation === generation) start();
      });
    };
    start();
  });

const inBatches = async <T>(items: T[], parallel: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
};

const closeAll = () => {
  for (const bare of bares) {
    bare.generation++;
    bare.sock?.end(undefined);
  }
};

process.on('message', async (request: FloorRequest) => {
  if (request.kind === 'link') {
    const fresh = request.numbers.map((number) => ({ number, auth: memoryAuth(), generation: 0 }));
    bares.push(...fresh);
    await inBatches(fresh, request.parallel, (bare) => open(bare, true));
    send({ kind: 'linked', count: fresh.length });
  } else if (request.kind === 'relink') {
    // What a restart does to the sockets, without the process restart: every socket goes, and each
    // comes back from its saved credentials.
    closeAll();
    await inBatches(bares, request.parallel, (bare) => open(bare, false));
    send({ kind: 'relinked', count: bares.length });
  } else {
    closeAll();
    process.exit(0);
  }
});
