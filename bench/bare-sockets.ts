// The scale benchmark's floor: N bare Baileys sockets in one process, credentials and keys in memory,
// against the same sandbox process as the service. Driven over IPC by bench/scale.ts, which reads this
// process's CPU and memory from /proc while it links, idles and re-links.
//
// A restart as the service has one: `save` writes every socket's credentials and keys to a file, the
// benchmark kills this process, and a new one started with FLOOR_RESTORE=<file> opens them all again and
// reports `relinked`; its clock starts when that process is spawned, as the service's does.
import { readFileSync, writeFileSync } from 'node:fs';
import makeWASocket, { BufferJSON } from 'baileys';
import type { AuthenticationCreds, WASocket } from 'baileys';
import { pino } from 'pino';
import { socketOptionsFor } from '../src/runtime/network/baileys-target.ts';
import { connectToSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { memoryAuth } from '../test/sandbox/helpers.ts';

export type FloorRequest =
  | { kind: 'link'; numbers: string[]; parallel: number }
  | { kind: 'relink'; parallel: number }
  | { kind: 'save'; file: string }
  | { kind: 'stop' };
export type FloorReport = { kind: 'linked'; count: number } | { kind: 'relinked'; count: number } | { kind: 'saved'; count: number };

process.setSourceMapsEnabled(false);
Error.stackTraceLimit = 3;

const controlUrl = process.env.WA_SANDBOX_URL as string;
const sandbox = await connectToSandbox(controlUrl);
const options = socketOptionsFor({ sandbox });
const logger = pino({ level: 'silent' });
const send = (report: FloorReport) => process.send?.(report);

interface Saved {
  number: string;
  creds: AuthenticationCreds;
  keys: Array<[string, string]>;
}

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

const restore = process.env.FLOOR_RESTORE;
if (restore) {
  const saved = JSON.parse(readFileSync(restore, 'utf8'), BufferJSON.reviver) as Saved[];
  for (const s of saved) bares.push({ number: s.number, auth: memoryAuth(s.creds, new Map(s.keys)), generation: 0 });
  await inBatches(bares, Number(process.env.FLOOR_PARALLEL ?? 10), (bare) => open(bare, false));
  send({ kind: 'relinked', count: bares.length });
}

process.on('message', async (request: FloorRequest) => {
  if (request.kind === 'link') {
    const fresh = request.numbers.map((number) => ({ number, auth: memoryAuth(), generation: 0 }));
    bares.push(...fresh);
    await inBatches(fresh, request.parallel, (bare) => open(bare, true));
    send({ kind: 'linked', count: fresh.length });
  } else if (request.kind === 'relink') {
    // The sockets' part of a restart, without the process's: every socket goes, and each comes back
    // from its saved credentials.
    closeAll();
    await inBatches(bares, request.parallel, (bare) => open(bare, false));
    send({ kind: 'relinked', count: bares.length });
  } else if (request.kind === 'save') {
    const saved: Saved[] = bares.map((b) => ({ number: b.number, creds: b.auth.state.creds, keys: [...b.auth.keys] }));
    writeFileSync(request.file, JSON.stringify(saved, BufferJSON.replacer));
    send({ kind: 'saved', count: saved.length });
  } else {
    closeAll();
    process.exit(0);
  }
});
