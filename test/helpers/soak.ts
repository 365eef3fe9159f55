// Two-way traffic on one chat for a bounded time: a linked session (the service, or a bare Baileys
// socket with its keys in memory) sends to a virtual phone while that phone sends back, with long-polls
// and GraphQL queries beside them. Counts, by what the phone decrypted and what the session received,
// how many messages were lost or duplicated each way. Used by `npm run soak` and test/soak.test.ts.
// The sandbox (the server and the phones, which keep every message they decrypt) runs in this process
// or in its own (`sandbox: 'process'`, driven through its control API), so that the memory figures of
// the service are not those of the sandbox as well.
import type { WAMessage } from 'baileys';
import { deviceListCache } from '../../src/runtime/network/baileys-target.ts';
import type { NetworkTarget } from '../../src/runtime/network/baileys-target.ts';
import { connectToSandbox } from '../../src/runtime/sandbox/address.ts';
import type { InboxEntry } from '../../src/runtime/sandbox/directory.ts';
import { sandboxAddress, startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { NetworkStats } from '../../src/runtime/ports/network.ts';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { linkedSocket } from '../sandbox/helpers.ts';
import { processUsage } from './proc.ts';
import type { DbKind } from './app.ts';
import { gql, http } from './app.ts';
import { startTestApp } from './app.ts';
import { collectAllGarbage, startMemoryReclaim } from '../../src/runtime/memory-reclaim.ts';
import { startSandboxProcess } from './sandbox-process.ts';
import { scanQrImage, waitUntil } from './sandbox.ts';

export interface SoakOptions {
  /** `service`: through the API; `bare`: Baileys' own socket, keys in memory, same sandbox */
  mode: 'service' | 'bare';
  db: DbKind;
  durationMs: number;
  /** sends per second from the linked side (the API, or the bare socket) */
  sendRate: number;
  /** messages per second from the phone */
  phoneRate: number;
  /** Baileys' device-list lifetime; short values make the expiry (5 minutes in Baileys) happen within the run */
  deviceListTtlMs: number;
  /** upper bound on the messages of each direction, whatever the duration */
  maxMessages: number;
  /** how long to wait, after the load stops, for the last messages to arrive */
  drainMs: number;
  /** service mode: where the links run (NETWORK_MODE; default process) */
  networkMode?: 'process' | 'thread' | 'inline';
  /** service mode: the sandbox network in this process (default) or in its own, driven through its control API */
  sandbox?: 'inline' | 'process';
  /** service mode: V8_MEMORY_SAVER (default false) */
  memorySaver?: boolean;
  /** how long the linked side idles after the load before the last memory figures */
  settleMs: number;
  log?: (line: string) => void;
}

export interface DirectionCounts {
  sent: number;
  delivered: number;
  lost: number;
  duplicated: number;
}

export interface SoakReport {
  mode: SoakOptions['mode'];
  db: DbKind;
  sandbox: 'inline' | 'process';
  seconds: number;
  /** linked side -> phone: `sent` counts sends answered 200 (or resolved, bare); `failed` those recorded FAILED */
  out: DirectionCounts & { failed: number; failedReasons: string[]; refused: number };
  /** phone -> linked side */
  in: DirectionCounts;
  /** memory before the load, when the load stops, and after a settle period; each after collecting both heaps */
  /**
   * before the load (collected), when it stopped and after the settle period as they stand (what the
   * service gave back by itself), then collected
   */
  memory: { start: MemoryFigures; loadEnd: MemoryFigures; idle: MemoryFigures; settled: MemoryFigures };
  settleSeconds: number;
  /** CPU seconds (user + system) from before the load until it stopped: this process, the network process, the sandbox process */
  cpu: { main: number; network: number; sandbox: number };
}

/** RSS (this process and the network process, summed and each) and, per isolate, V8's heap and what lies outside it (MB). */
export interface MemoryFigures {
  /** the service: this process and its network process */
  rssMb: number;
  /** this process: the service's main thread with the load (and the sandbox, when it runs here) */
  mainRssMb: number;
  /** the network process, when the links run in one */
  networkRssMb?: number;
  /** the sandbox's process, when it runs in one (not the service's) */
  sandboxRssMb?: number;
  main: ThreadFigures;
  /** the network process's or thread's, when the side has one */
  network?: ThreadFigures;
}

export interface ThreadFigures {
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
}

const PHONE_NUMBER = '15550007001';
const PEER_NUMBER = '15550007002';
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Memory, with both heaps (this thread's and the network's) collected first, memory-reducing (V8's pooled
 * pages given back too), or as it stands when `collect` is false.
 */
const measure = async (side: Side, phones: Phones, collect = true): Promise<MemoryFigures> => {
  for (let i = 0; collect && i < 3; i += 1) {
    await side.collectGarbage();
    collectAllGarbage();
    await sleep(200);
  }
  const usage = process.memoryUsage();
  const network = await side.networkStats();
  const networkRss = network?.process ? mb(network.process.rssBytes) : undefined;
  const sandboxRss = phones.pid ? Math.round(processUsage(phones.pid).rssMb * 10) / 10 : undefined;
  return {
    rssMb: Math.round((mb(usage.rss) + (networkRss ?? 0)) * 10) / 10,
    mainRssMb: mb(usage.rss),
    ...(networkRss !== undefined ? { networkRssMb: networkRss } : {}),
    ...(sandboxRss !== undefined ? { sandboxRssMb: sandboxRss } : {}),
    main: {
      heapUsedMb: mb(usage.heapUsed),
      heapTotalMb: mb(usage.heapTotal),
      externalMb: mb(usage.external),
      arrayBuffersMb: mb(usage.arrayBuffers),
    },
    ...(network
      ? {
          network: {
            heapUsedMb: mb(network.heapUsedBytes),
            heapTotalMb: mb(network.heapTotalBytes),
            externalMb: mb(network.externalBytes),
            arrayBuffersMb: mb(network.arrayBuffersBytes),
          },
        }
      : {}),
  };
};

/** The sandbox's phones as the load drives them: in this process, or through the control API of a sandbox process. */
interface Phones {
  /** the sandbox's process, when it has its own */
  pid?: number;
  addPhone: (number: string, name?: string) => Promise<void>;
  scanQr: (number: string, qr: string) => Promise<void>;
  sendText: (from: string, to: string, text: string) => Promise<{ delivered: number }>;
  inbox: (number: string) => Promise<Array<Pick<InboxEntry, 'content' | 'duplicates'>>>;
  close: () => Promise<void>;
}

const inlinePhones = (sandbox: Sandbox): Phones => ({
  addPhone: async (number, name) => {
    sandbox.control.addPhone(number, name);
  },
  scanQr: async (number, qr) => {
    await sandbox.control.scanQr(number, qr);
  },
  sendText: (from, to, text) => sandbox.control.sendText(from, to, text),
  inbox: async (number) => sandbox.control.inbox(number),
  close: () => sandbox.close(),
});

const processPhones = async (): Promise<{ phones: Phones; controlUrl: string }> => {
  const sandbox = await startSandboxProcess();
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(new URL(path, sandbox.controlUrl), {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`sandbox ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    controlUrl: sandbox.controlUrl,
    phones: {
      pid: sandbox.child.pid,
      addPhone: async (number, name) => {
        await call('POST', '/phones', { number, ...(name ? { name } : {}) });
      },
      scanQr: async (number, qr) => {
        await call('POST', `/phones/${number}/scan`, { qr });
      },
      sendText: (from, to, text) => call('POST', `/phones/${from}/send`, { to, text }),
      inbox: (number) => call('GET', `/phones/${number}/inbox`),
      close: () => sandbox.stop(),
    },
  };
};

/** The linked side as the load drives it. */
interface Side {
  send: (text: string) => Promise<{ ok: boolean }>;
  /** texts the linked side has received so far (each arrival once, repeats included) */
  received: string[];
  /** what the load does beside sends and receives (long-polls, queries); resolves when stopped */
  background: (stopped: () => boolean) => Promise<void>;
  /** records of sends that ended FAILED, by text */
  failed: () => Promise<Map<string, string>>;
  collectGarbage: () => Promise<void>;
  /** the network thread's memory, where the side has one */
  networkStats: () => Promise<NetworkStats | undefined>;
  close: () => Promise<void>;
}

const serviceSide = async (options: SoakOptions): Promise<{ side: Side; phones: Phones }> => {
  let phones: Phones;
  let target: NetworkTarget;
  if (options.sandbox === 'process') {
    const started = await processPhones();
    phones = started.phones;
    target = { sandbox: await connectToSandbox(started.controlUrl) };
  } else {
    const sandbox = await startSandbox();
    phones = inlinePhones(sandbox);
    target = { sandbox: sandboxAddress(sandbox) };
  }
  const app = await startTestApp(
    options.db,
    {
      DEVICE_LIST_TTL_MS: options.deviceListTtlMs,
      INCOMING_BUFFER_SIZE: 10_000,
      DAILY_QUOTA: 0,
      ...(options.networkMode ? { NETWORK_MODE: options.networkMode } : {}),
      ...(options.memorySaver ? { V8_MEMORY_SAVER: true } : {}),
    },
    { target, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
  );
  // As main.ts does for the service's main thread (the network worker starts its own).
  const stopReclaim = app.deps.settings.MEMORY_RECLAIM ? startMemoryReclaim({ logger: app.deps.logger }) : undefined;
  const { apiKey: key } = await app.newAccount();
  const { baseUrl } = app;
  // Linked through the QR flow, as a user would.
  await phones.addPhone(PHONE_NUMBER);
  const created = await http(baseUrl, 'POST', '/v1/sessions', { key, body: { name: 'soak' } });
  const sessionId: string = created.body.id;
  await http(baseUrl, 'POST', `/v1/sessions/${sessionId}/connect`, { key });
  const qr = await waitUntil(
    () => http(baseUrl, 'GET', `/v1/sessions/${sessionId}/qrcode`, { key }),
    (r) => r.body.hasQrCode === true,
  );
  await phones.scanQr(PHONE_NUMBER, scanQrImage(qr.body.qrCode));
  await waitUntil(
    () => http(baseUrl, 'GET', `/v1/sessions/${sessionId}/status`, { key }),
    (r) => r.body.status === 'CONNECTED',
  );
  const received: string[] = [];
  return {
    phones,
    side: {
      send: async (text) => {
        try {
          const res = await http(baseUrl, 'POST', `/v1/sessions/${sessionId}/send`, { key, body: { to: PEER_NUMBER, message: text } });
          return { ok: res.status === 200 };
        } catch {
          // no answer (a connection refused or timed out on a starved machine): counted as refused
          return { ok: false };
        }
      },
      received,
      background: async (stopped) => {
        // A request that gets no answer is tried again; what it would have read stays in the buffer.
        const poll = async () => {
          while (!stopped()) {
            const res = await http(baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?waitMs=1000&limit=200`, { key }).catch(() => null);
            if (!res) await sleep(200);
            for (const item of (res?.body?.items ?? []) as Array<{ content: string; fromMe: boolean }>)
              if (!item.fromMe) received.push(item.content);
          }
        };
        const query = async () => {
          while (!stopped()) {
            await gql(baseUrl, key, 'query($id: ID!) { session(id: $id) { id status messages(first: 20) { edges { cursor } } } }', {
              id: sessionId,
            }).catch(() => undefined);
            await sleep(200);
          }
        };
        await Promise.all([poll(), query()]);
        // What arrived after the last poll.
        const rest = await http(baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?limit=200`, { key });
        for (const item of (rest.body?.items ?? []) as Array<{ content: string; fromMe: boolean }>)
          if (!item.fromMe) received.push(item.content);
      },
      failed: async () => {
        const rows = await app.db.outgoingMessage.findMany({
          where: { sessionId, status: 'FAILED' },
          select: { content: true, error: true },
        });
        return new Map(rows.map((r) => [r.content, r.error ?? '']));
      },
      collectGarbage: () => app.deps.sessions.collectGarbage(),
      networkStats: () => app.deps.sessions.networkStats(),
      close: async () => {
        stopReclaim?.();
        await app.close();
        await phones.close();
      },
    },
  };
};

const bareSide = async (options: SoakOptions): Promise<{ side: Side; phones: Phones }> => {
  const sandbox = await startSandbox();
  const { sock } = await linkedSocket(sandbox, PHONE_NUMBER, { userDevicesCache: deviceListCache(options.deviceListTtlMs) });
  const received: string[] = [];
  sock.ev.on('messages.upsert', ({ messages, type }: { messages: WAMessage[]; type: string }) => {
    if (type !== 'notify') return;
    for (const m of messages) {
      const text = m.message?.conversation ?? m.message?.extendedTextMessage?.text;
      if (!m.key.fromMe && text) received.push(text);
    }
  });
  return {
    phones: inlinePhones(sandbox),
    side: {
      send: async (text) => {
        try {
          await sock.sendMessage(`${PEER_NUMBER}@s.whatsapp.net`, { text });
          return { ok: true };
        } catch {
          return { ok: false };
        }
      },
      received,
      background: async (stopped) => {
        while (!stopped()) await sleep(100);
      },
      failed: async () => new Map(),
      collectGarbage: async () => undefined,
      networkStats: async () => undefined,
      close: async () => {
        await sock.end(undefined);
        await sandbox.close();
      },
    },
  };
};

/** CPU seconds so far of this process, of the network process and of the sandbox process (when there are). */
const cpuNow = async (side: Side, phones: Phones): Promise<{ main: number; network: number; networkPid?: number; sandbox: number }> => {
  const { user, system } = process.cpuUsage();
  const pid = (await side.networkStats())?.process?.pid;
  return {
    main: (user + system) / 1e6,
    network: pid ? processUsage(pid).cpu : 0,
    networkPid: pid,
    sandbox: phones.pid ? processUsage(phones.pid).cpu : 0,
  };
};

/** Idle (the link stays up, keep-alives only), then measure as it stands and once collected. */
const settle = async (side: Side, phones: Phones, settleMs: number): Promise<{ idle: MemoryFigures; settled: MemoryFigures }> => {
  await sleep(settleMs);
  const idle = await measure(side, phones, false);
  return { idle, settled: await measure(side, phones) };
};

const formatThread = (name: string, t: ThreadFigures): string =>
  `${name} heap ${t.heapUsedMb}/${t.heapTotalMb} MB, external ${t.externalMb} MB (array buffers ${t.arrayBuffersMb})`;

const formatMemory = (m: MemoryFigures): string =>
  [
    `RSS ${m.rssMb} MB${m.networkRssMb !== undefined ? ` (service ${m.mainRssMb} + network process ${m.networkRssMb})` : ''}` +
      (m.sandboxRssMb !== undefined ? `, sandbox process ${m.sandboxRssMb} MB` : ''),
    formatThread('main', m.main),
    ...(m.network ? [formatThread('network', m.network)] : []),
  ].join('; ');

const change = (from: number, to: number): string => `${to >= from ? '+' : ''}${from ? Math.round(((to - from) / from) * 1000) / 10 : 0}%`;

export const runSoak = async (options: SoakOptions): Promise<SoakReport> => {
  const log = options.log ?? (() => undefined);
  const { side, phones } = options.mode === 'service' ? await serviceSide(options) : await bareSide(options);
  const sandboxMode = phones.pid ? 'process' : 'inline';
  try {
    await phones.addPhone(PEER_NUMBER, 'Soak peer');
    const memoryStart = await measure(side, phones);
    const cpuStart = await cpuNow(side, phones);
    log(`linked (${options.mode}, ${options.db}); ${formatMemory(memoryStart)}; load for ${options.durationMs / 1000} s`);

    const started = Date.now();
    let stopped = false;
    let outCount = 0;
    let inCount = 0;
    let refused = 0;
    const accepted = new Set<string>();
    const phoneSent = new Set<string>();
    const inFlight = new Set<Promise<unknown>>();
    const track = (p: Promise<unknown>) => {
      inFlight.add(p);
      p.finally(() => inFlight.delete(p)).catch(() => undefined);
    };
    const sendOut = () => {
      const text = `soak-out-${outCount++}`;
      track(
        side.send(text).then(({ ok }) => {
          if (ok) accepted.add(text);
          else refused += 1;
        }),
      );
    };
    const sendIn = () => {
      const text = `soak-in-${inCount++}`;
      track(
        phones.sendText(PEER_NUMBER, PHONE_NUMBER, text).then(
          ({ delivered }) => delivered > 0 && phoneSent.add(text),
          () => undefined,
        ),
      );
    };
    const background = side.background(() => stopped);
    let lastReport = started;
    while (Date.now() - started < options.durationMs && (outCount < options.maxMessages || inCount < options.maxMessages)) {
      const elapsed = (Date.now() - started) / 1000;
      while (outCount < Math.min(options.maxMessages, Math.floor(elapsed * options.sendRate))) {
        sendOut();
      }
      while (inCount < Math.min(options.maxMessages, Math.floor(elapsed * options.phoneRate))) {
        sendIn();
      }
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        log(`${Math.round(elapsed)} s: ${outCount} sent, ${inCount} from the phone, RSS ${mb(process.memoryUsage().rss)} MB`);
      }
      await sleep(20);
    }
    // The last tick may fall short of the rate by a message or two: the run sends exactly its share.
    const seconds = options.durationMs / 1000;
    while (outCount < Math.min(options.maxMessages, Math.round(seconds * options.sendRate))) {
      sendOut();
    }
    while (inCount < Math.min(options.maxMessages, Math.round(seconds * options.phoneRate))) {
      sendIn();
    }
    while (inFlight.size > 0) await Promise.race(inFlight);

    const inbox = async () => (await phones.inbox(PEER_NUMBER)).filter((e) => e.content.startsWith('soak-out-'));
    const drainUntil = Date.now() + options.drainMs;
    while (Date.now() < drainUntil) {
      const gotOut = new Set((await inbox()).map((e) => e.content));
      const gotIn = new Set(side.received);
      if ([...accepted].every((t) => gotOut.has(t)) && [...phoneSent].every((t) => gotIn.has(t))) break;
      // Through the control API the whole inbox crosses HTTP: read it less often.
      await sleep(phones.pid ? 1000 : 100);
    }
    stopped = true;
    await background;
    const cpuEnd = await cpuNow(side, phones);
    const memoryLoadEnd = await measure(side, phones, false);
    log(`load stopped; ${formatMemory(memoryLoadEnd)}; idle for ${options.settleMs / 1000} s`);

    const entries = await inbox();
    const delivered = new Set(entries.map((e) => e.content));
    const failedRecords = await side.failed();
    const outLost = [...accepted].filter((t) => !delivered.has(t) && !failedRecords.has(t)).length;
    const received = new Set(side.received);
    const report: SoakReport = {
      mode: options.mode,
      db: options.db,
      sandbox: sandboxMode,
      seconds: Math.round((Date.now() - started) / 1000),
      out: {
        sent: accepted.size,
        delivered: [...accepted].filter((t) => delivered.has(t)).length,
        lost: outLost,
        duplicated: entries.reduce((n, e) => n + e.duplicates, 0),
        failed: failedRecords.size,
        failedReasons: [...new Set(failedRecords.values())].slice(0, 5),
        refused,
      },
      in: {
        sent: phoneSent.size,
        delivered: [...phoneSent].filter((t) => received.has(t)).length,
        lost: [...phoneSent].filter((t) => !received.has(t)).length,
        duplicated: side.received.length - received.size,
      },
      memory: { start: memoryStart, loadEnd: memoryLoadEnd, ...(await settle(side, phones, options.settleMs)) },
      settleSeconds: options.settleMs / 1000,
      cpu: {
        main: Math.round((cpuEnd.main - cpuStart.main) * 10) / 10,
        network: Math.round((cpuEnd.network - (cpuEnd.networkPid === cpuStart.networkPid ? cpuStart.network : 0)) * 10) / 10,
        sandbox: Math.round((cpuEnd.sandbox - cpuStart.sandbox) * 10) / 10,
      },
    };
    return report;
  } finally {
    await side.close();
  }
};

export const formatSoakReport = (r: SoakReport): string =>
  [
    `soak ${r.mode} on ${r.db}, ${r.seconds} s, sandbox ${r.sandbox === 'process' ? 'in its own process' : 'in this process'}`,
    `  out (linked side -> phone): sent ${r.out.sent}, delivered ${r.out.delivered}, lost ${r.out.lost}, duplicated ${r.out.duplicated}, failed ${r.out.failed}${r.out.failedReasons.length ? ` (${r.out.failedReasons.join('; ')})` : ''}, refused ${r.out.refused}`,
    `  in (phone -> linked side):  sent ${r.in.sent}, received ${r.in.delivered}, lost ${r.in.lost}, duplicated ${r.in.duplicated}`,
    `  ${r.mode === 'service' ? 'service' : 'linked side'} RSS (this process${r.memory.start.networkRssMb !== undefined ? ' + network process' : ''}): before the load ${r.memory.start.rssMb} MB (collected), when it stopped ${r.memory.loadEnd.rssMb} MB, after ${r.settleSeconds} s idle ${r.memory.idle.rssMb} MB (${change(r.memory.start.rssMb, r.memory.idle.rssMb)}; as the service left it), collected ${r.memory.settled.rssMb} MB (${change(r.memory.start.rssMb, r.memory.settled.rssMb)})`,
    ...(r.memory.start.sandboxRssMb !== undefined
      ? [
          `  sandbox process RSS (not the service's): ${r.memory.start.sandboxRssMb} MB, ${r.memory.loadEnd.sandboxRssMb} MB, ${r.memory.idle.sandboxRssMb} MB, ${r.memory.settled.sandboxRssMb} MB`,
        ]
      : []),
    `  CPU during the load: ${r.cpu.main} s this process (${r.mode === 'service' ? 'service main thread' : 'bare socket'}, load${r.sandbox === 'inline' ? ', sandbox' : ''})${r.cpu.network ? `, ${r.cpu.network} s network process` : ''}${r.sandbox === 'process' ? `, ${r.cpu.sandbox} s sandbox process` : ''}`,
    `  before:  ${formatMemory(r.memory.start)}`,
    `  stopped: ${formatMemory(r.memory.loadEnd)}`,
    `  idle:    ${formatMemory(r.memory.idle)}`,
    `  settled: ${formatMemory(r.memory.settled)}`,
  ].join('\n');
