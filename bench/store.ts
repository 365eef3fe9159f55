import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { proto } from 'baileys';
import type { MessageStore } from '../src/runtime/message-store.ts';
import type { SandboxAddress } from '../src/runtime/network/baileys-target.ts';
import type { ReceivedMessage } from '../src/runtime/ports/incoming.ts';
import { connectToSandbox } from '../src/runtime/sandbox/address.ts';
import { gql, http, startTestApp } from '../test/helpers/app.ts';
import type { DbKind, Json, TestApp } from '../test/helpers/app.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { linkThroughQr, waitUntil } from '../test/helpers/sandbox.ts';
import { startSandboxProcess } from '../test/helpers/sandbox-process.ts';
import { nowUs, profileMarks } from './marks.ts';
import { idleSince, quantile, startLoader } from './messages.ts';

// `npm run bench -- store`: the message store (issue 45, docs/benchmarks.md "The message store") on one
// database, with the sandbox network in a process of its own so that what is measured here is the
// service's (and, on PostgreSQL, its database backends'):
//  1. CPU per message sent and received, the store on (messageStore all) against off (specOnly), rounds
//     alternating in one run;
//  2. chat list and thread pages through HTTP (GraphQL and REST) over 10,000 chats and a chat of 100,000
//     messages, first pages and every page deep by cursor;
//  3. a history sync of 50,000 messages from the phone: time from the QR scan to the last history.synced,
//     resident memory growth;
//  4. bytes stored per message, with the search index.

// A CPU round's texts wait in the incoming buffer until it ends: at most its 1,000 (INCOMING_BUFFER_SIZE).
// 9 pairs of 1,000 each way: with 5 of 200 the rounds' own spread (±25 %) decided the ratio.
const ROUND = Number(process.env.STORE_ROUND ?? 1000);
const PAIRS = Number(process.env.STORE_PAIRS ?? 9);
const SEND_CONCURRENCY = 16;
const PHONE_CONCURRENCY = 8;
const HISTORY_MESSAGES = 50_000;
const HISTORY_CHATS = 500;
/** every this many history messages carries a reaction (the peer's, or the account's own every other time); 0: none */
const HISTORY_REACTION_EVERY = Number(process.env.STORE_HISTORY_REACTIONS ?? 10);
const CHATS = 10_000;
const THREAD = 100_000;
const FIRST_PAGES = 100;
const PAGE = 50;
const WALK = 200;
const GRAPHQL_DEEP_PAGES = 100;
const DAY = 86_400;

// STORE_CPU_PROF=<dir>: run under `node --cpu-prof --cpu-prof-dir=<dir>`; marks.json there holds the
// monotonic windows (µs, the profiles' clock) of the CPU rounds with the store on and off, to slice the
// profiles by them (bench/cpuprofile.py).
const mark = profileMarks(process.env.STORE_CPU_PROF);

const began = performance.now();
/** BENCH_VERBOSE=1: each step on stderr as it ends (a database's run takes minutes). */
const note = (step: string) => {
  if (process.env.BENCH_VERBOSE) console.error(`  [${((performance.now() - began) / 1000).toFixed(0)} s] ${step}`);
};

const WORDS = (
  'the a to and of in is you that it for on are with be this have not at we can but so will your was all ' +
  'meeting tomorrow today tonight morning evening lunch dinner coffee office home train late early soon ' +
  'thanks please sorry okay sure great perfect maybe yes no call later photo invoice order delivery ' +
  'address price ticket flight hotel weekend monday friday birthday party kids school doctor project ' +
  'report deadline review client payment bank transfer package arrived sent received waiting confirm'
).split(' ');

/** A message's text: 3 to 17 words of a small vocabulary (about 60 characters on average), varied by `i`. */
const textOf = (i: number): string => {
  const n = 3 + ((i * 7) % 15);
  const words: string[] = [];
  for (let k = 0; k < n; k++) words.push(WORDS[(i * 31 + k * 17 + ((i >> 3) % 13)) % WORDS.length] ?? 'ok');
  return `${words.join(' ')} ${i}`;
};

/** The message itself as the store keeps it for quoting (what baileys-incoming.ts quotableOf writes for a text). */
const quotableOf = (text: string): string => Buffer.from(proto.Message.encode({ conversation: text }).finish()).toString('base64');

const trimmed = (url: string) => url.replace(/\/+$/, '');

const control = async (controlUrl: string, method: string, path: string, body?: unknown): Promise<Json> => {
  const res = await http(trimmed(controlUrl), method, path, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`sandbox ${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
};

/** Links a new session to the sandbox phone `number` by its QR code, as a user does; `scanned` is told when the phone scans it. */
const link = async (app: TestApp, key: string, controlUrl: string, number: string, scanned?: () => void): Promise<string> => {
  await control(controlUrl, 'POST', '/phones', { number, name: 'Me' });
  const phones = {
    control: {
      scanQr: async (phone: string, qr: string) => {
        scanned?.();
        return control(controlUrl, 'POST', `/phones/${phone}/scan`, { qr });
      },
    },
  };
  return linkThroughQr(app.baseUrl, key, phones, number, 'main', 30_000);
};

/* ------------------------------------------------------------------ bytes per message */

export interface StoreSizes {
  messages: number;
  chats: number;
  /** the Message table with its own indexes (and, on PostgreSQL, its TOAST) */
  messageBytes: number;
  /** the search index: SQLite's FTS5 table and its key table; PostgreSQL's GIN index (inside messageBytes there) */
  searchBytes: number;
  chatBytes: number;
}

/** What the store takes on disk: from dbstat on SQLite, from the relation sizes on PostgreSQL. */
const storeSizes = async (app: TestApp, kind: DbKind): Promise<StoreSizes> => {
  const messages = await app.db.message.count();
  const chats = await app.db.chat.count();
  if (kind === 'sqlite') {
    const rows = await app.db.$queryRawUnsafe<Array<{ tbl: string; bytes: number | bigint }>>(
      'SELECT s.tbl_name AS tbl, SUM(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name',
    );
    const of = (match: (table: string) => boolean) => rows.filter((r) => match(r.tbl)).reduce((n, r) => n + Number(r.bytes), 0);
    return {
      messages,
      chats,
      messageBytes: of((t) => t === 'Message'),
      searchBytes: of((t) => t.startsWith('MessageSearch')),
      chatBytes: of((t) => t === 'Chat'),
    };
  }
  const [row] = await app.db.$queryRawUnsafe<Array<{ message: bigint; search: bigint; chat: bigint }>>(
    `SELECT pg_total_relation_size('"Message"') AS message, pg_relation_size('"Message_search_idx"') AS search, pg_total_relation_size('"Chat"') AS chat`,
  );
  return { messages, chats, messageBytes: Number(row?.message), searchBytes: Number(row?.search), chatBytes: Number(row?.chat) };
};

/** Bytes per stored message: the Message table, its indexes and the search index (inside the table's figure on PostgreSQL). */
const perMessage = (kind: DbKind, s: StoreSizes): number => (s.messageBytes + (kind === 'sqlite' ? s.searchBytes : 0)) / s.messages;

/* ------------------------------------------------------------------ history sync */

export interface HistoryBench {
  seconds: number;
  /** to the first history.synced */
  firstSeconds: number;
  /** of the V8 heap's used bytes */
  heapPeakGrowthMb: number;
  cpuSeconds: number;
  chunks: number;
  stored: number;
  reactions: number;
  rssBaseMb: number;
  rssPeakGrowthMb: number;
  rssEndGrowthMb: number;
  sizes: StoreSizes;
}

const benchHistory = async (kind: DbKind, controlUrl: string, sandbox: SandboxAddress): Promise<HistoryBench> => {
  const receiver = await startReceiver();
  const app = await startTestApp(kind, { HISTORY_SYNC_DAYS: 90, WEBHOOK_ALLOW_PRIVATE: true }, { target: { sandbox } });
  let sampler: NodeJS.Timeout | undefined;
  try {
    const { apiKey: key } = await app.newAccount();
    const hook = await http(app.baseUrl, 'POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['history.synced'] } });
    if (hook.status !== 201) throw new Error(`webhook answered ${hook.status}`);
    receiver.verifyWith(hook.body.secret);
    // 500 people's chats of 100 messages each, a third written on the phone, all within the last 80 days
    // (the phone's recent sync, in chunks of 500 messages, as the sandbox's phones send them by default);
    // every tenth message with a reaction, by default.
    const me = '15571000001';
    const now = Math.floor(Date.now() / 1000);
    const per = HISTORY_MESSAGES / HISTORY_CHATS;
    const chats = Array.from({ length: HISTORY_CHATS }, (_, c) => ({
      with: `1557200${String(c).padStart(4, '0')}`,
      name: `Peer ${c}`,
      messages: Array.from({ length: per }, (_, k) => {
        const i = k * HISTORY_CHATS + c;
        const at = now - 80 * DAY + Math.floor((i * 80 * DAY) / HISTORY_MESSAGES);
        const reacted = HISTORY_REACTION_EVERY > 0 && i % HISTORY_REACTION_EVERY === 0;
        const from = (i / HISTORY_REACTION_EVERY) % 2 === 0 ? `1557200${String(c).padStart(4, '0')}` : 'me';
        return { fromMe: i % 3 === 0, text: textOf(i), at, ...(reacted ? { reactions: [{ from, emoji: '👍', at: at + 60 }] } : {}) };
      }),
    }));
    await control(controlUrl, 'POST', '/phones', { number: me, name: 'Me' });
    await control(controlUrl, 'POST', `/phones/${me}/history`, { chats });

    // Resident memory of this process (the service; the phone and its history are in the sandbox's).
    const base = process.memoryUsage();
    let rssPeak = base.rss;
    let heapPeak = base.heapUsed;
    sampler = setInterval(() => {
      const now = process.memoryUsage();
      rssPeak = Math.max(rssPeak, now.rss);
      heapPeak = Math.max(heapPeak, now.heapUsed);
    }, 20);
    const rssBase = base.rss;
    let scannedAt = 0;
    let cpu = process.cpuUsage();
    const sessionId = await link(app, key, controlUrl, me, () => {
      scannedAt = Date.now();
      cpu = process.cpuUsage();
    });
    const synced = () => receiver.received.filter((r) => r.payload.type === 'history.synced' && r.payload.data.sessionId === sessionId);
    await waitUntil(
      async () => synced(),
      // webhooks may arrive out of order: every chunk's event, the push names' last in the phone's order
      (events) =>
        events.some((e) => e.payload.data.syncType === 'push_name') &&
        events.reduce((n, e) => n + Number(e.payload.data.stored), 0) >= HISTORY_MESSAGES,
      180_000,
    );
    const used = process.cpuUsage(cpu);
    clearInterval(sampler);
    note('history: synced');
    const events = synced();
    const times = events.map((e) => Date.parse(e.payload.timestamp));
    const lastAt = Math.max(...times);
    const firstAt = Math.min(...times);
    const stored = events.reduce((n, e) => n + Number(e.payload.data.stored), 0);
    const rows = await app.db.message.count({ where: { sessionId } });
    if (stored !== HISTORY_MESSAGES || rows !== HISTORY_MESSAGES)
      throw new Error(`history stored ${stored} (events) and ${rows} rows, not ${HISTORY_MESSAGES}`);
    const reactions = await app.db.messageReaction.count({ where: { message: { sessionId } } });
    const reactionsGiven = HISTORY_REACTION_EVERY > 0 ? Math.ceil(HISTORY_MESSAGES / HISTORY_REACTION_EVERY) : 0;
    if (reactions !== reactionsGiven) throw new Error(`history stored ${reactions} reactions, not ${reactionsGiven}`);
    const rssEnd = process.memoryUsage.rss();
    await app.db.$executeRawUnsafe('ANALYZE');
    return {
      seconds: (lastAt - scannedAt) / 1000,
      firstSeconds: (firstAt - scannedAt) / 1000,
      heapPeakGrowthMb: (heapPeak - base.heapUsed) / 2 ** 20,
      cpuSeconds: (used.user + used.system) / 1e6,
      chunks: events.length,
      reactions,
      stored,
      rssBaseMb: rssBase / 2 ** 20,
      rssPeakGrowthMb: (rssPeak - rssBase) / 2 ** 20,
      rssEndGrowthMb: (rssEnd - rssBase) / 2 ** 20,
      sizes: await storeSizes(app, kind),
    };
  } finally {
    clearInterval(sampler);
    await app.close();
    await receiver.close();
  }
};

/* ------------------------------------------------------------------ CPU, store on and off */

/** CPU (ms) each backend of this database has used so far, by pid (PostgreSQL on this machine, from /proc). */
const backendCpu = async (app: TestApp): Promise<Map<number, number>> => {
  const rows = await app.db.$queryRawUnsafe<Array<{ pid: number }>>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const used = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      used.set(Number(pid), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // not on this machine, or gone
    }
  }
  return used;
};

export interface CpuRound {
  store: 'all' | 'specOnly';
  /** ms per message, this process without the load generators' threads, plus the database's backends */
  cpuMs: number;
  /** of which the PostgreSQL backends */
  dbMs: number;
  rate: number;
}

export interface CpuBench {
  on: CpuRound[];
  off: CpuRound[];
  /** the median of each pair's on/off ratio */
  ratio: number;
  stored: number;
}

const benchCpu = async (kind: DbKind, controlUrl: string, sandbox: SandboxAddress): Promise<CpuBench> => {
  const app = await startTestApp(kind, { DAILY_QUOTA: 0 }, { target: { sandbox } });
  let service: Awaited<ReturnType<typeof startLoader>> | undefined;
  let phone: Awaited<ReturnType<typeof startLoader>> | undefined;
  try {
    const { apiKey: key } = await app.newAccount();
    const me = '15573000001';
    const peer = '15573000002';
    await control(controlUrl, 'POST', '/phones', { number: peer, name: 'Peer' });
    const sessionId = await link(app, key, controlUrl, me);
    const sends = await startLoader({ baseUrl: app.baseUrl, key, concurrency: SEND_CONCURRENCY });
    service = sends;
    // The phone's texts go through the sandbox's control API from a thread of their own, as the sends do.
    const texts = await startLoader({ baseUrl: trimmed(controlUrl), key: '', concurrency: PHONE_CONCURRENCY });
    phone = texts;
    let sent = 0;
    const round = async (store: CpuRound['store'], name: string): Promise<CpuRound> => {
      const setting = await http(app.baseUrl, 'PATCH', '/v1/accounts/me/settings', { key, body: { messageStore: store } });
      if (setting.status !== 200) throw new Error(`settings answered ${setting.status}`);
      sent += ROUND;
      const db0 = kind === 'postgres' ? await backendCpu(app) : new Map<number, number>();
      const from = nowUs();
      const cpu = process.cpuUsage();
      const started = performance.now();
      const [sendMs, textMs] = await Promise.all([
        sends.post({ path: `/v1/sessions/${sessionId}/send`, to: peer, prefix: `${name} out `, count: ROUND, expect: 200 }),
        texts.post({ path: `/phones/${peer}/send`, to: me, prefix: `${name} in `, count: ROUND, expect: 200, field: 'text' }),
      ]);
      // Counted until every send is SENT and receipted by the phone, every text from the phone is in
      // the incoming buffer (taken out again here), and this process is idle.
      let received = 0;
      await waitUntil(
        async () => {
          received += app.deps.incoming.read(sessionId, 1000, true).length;
          return app.db.outgoingMessage.count({ where: { sessionId, status: 'SENT', deliveredAt: { not: null } } });
        },
        (done) => done >= sent && received >= ROUND,
        60_000,
      );
      const ended = await idleSince();
      const used = process.cpuUsage(cpu);
      let dbMs = 0;
      if (kind === 'postgres') for (const [pid, ms] of await backendCpu(app)) dbMs += ms - (db0.get(pid) ?? 0);
      const count = 2 * ROUND;
      if (!name.startsWith('warm')) mark(store === 'all' ? 'on' : 'off', from);
      note(`cpu: round ${name} done`);
      return {
        store,
        cpuMs: ((used.user + used.system) / 1000 - sendMs - textMs + dbMs) / count,
        dbMs: dbMs / count,
        rate: count / ((ended - started) / 1000),
      };
    };
    // Warm both (connections, Signal sessions, the JIT), then pairs in alternating order.
    await round('all', 'warm on');
    await round('specOnly', 'warm off');
    const on: CpuRound[] = [];
    const off: CpuRound[] = [];
    for (let i = 0; i < PAIRS; i++) {
      if (i % 2 === 0) {
        on.push(await round('all', `on ${i}`));
        off.push(await round('specOnly', `off ${i}`));
      } else {
        off.push(await round('specOnly', `off ${i}`));
        on.push(await round('all', `on ${i}`));
      }
    }
    const stored = await app.db.message.count({ where: { sessionId } });
    // the warm-up's on round and every on round, both ways; nothing from the off rounds
    if (stored !== (PAIRS + 1) * 2 * ROUND) throw new Error(`the store holds ${stored} messages, not ${(PAIRS + 1) * 2 * ROUND}`);
    return {
      on,
      off,
      ratio: quantile(
        on.map((r, i) => r.cpuMs / (off[i]?.cpuMs ?? NaN)),
        0.5,
      ),
      stored,
    };
  } finally {
    await service?.close();
    await phone?.close();
    await app.close();
  }
};

/* ------------------------------------------------------------------ pages */

export interface Timings {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

const timings = (values: number[]): Timings => ({
  p50: quantile(values, 0.5),
  p99: quantile(values, 0.99),
  max: Math.max(...values),
  count: values.length,
});

export interface PagesBench {
  seedSeconds: number;
  first: Record<'graphqlChats' | 'restChats' | 'graphqlThread' | 'restThread', Timings>;
  deep: Record<'restChats' | 'graphqlChats' | 'restThread' | 'graphqlThread', Timings>;
  sizes: StoreSizes;
}

const CHATS_QUERY = `query($s: ID!, $after: String) { session(id: $s) { chats(first: ${PAGE}, after: $after) {
  totalCount pageInfo { hasNextPage endCursor }
  edges { cursor node { id lid kind name unreadCount lastActivity archived pinned muted
    lastMessage { id waMessageId direction sender text timestamp } } } } } }`;

const THREAD_QUERY = `query($s: ID!, $c: String!, $after: String) { session(id: $s) { chat(id: $c) { messages(first: ${PAGE}, after: $after) {
  pageInfo { hasNextPage endCursor }
  edges { cursor node { id waMessageId direction fromMe sender senderLid kind text timestamp editedText deletedAt
    quotedId quoted { id text } mentions reactions { reactor emoji } receipts { status readAt } media { url mimetype } } } } } } }`;

const benchPages = async (kind: DbKind): Promise<PagesBench> => {
  const app = await startTestApp(kind);
  try {
    const { apiKey: key } = await app.newAccount();
    const created = await http(app.baseUrl, 'POST', '/v1/sessions', { key, body: { name: 'pages' } });
    const sessionId: string = created.body.id;
    const meJid = '15574000000@s.whatsapp.net';
    const thread = '15575000000@s.whatsapp.net';
    const now = Math.floor(Date.now() / 1000);

    // Seeded through the store's own bulk write (storeHistory: rows and chats as every message makes
    // them, 500 per statement): one message in each of 9,999 chats, and a chat of 100,000 messages, both
    // ways, every 20th a reply, spread over 60 days.
    const store = app.deps.received as MessageStore;
    const messageOf = (chatId: string, i: number, at: number): ReceivedMessage => {
      const fromMe = i % 3 === 0;
      const text = textOf(i);
      const id = `SEED${String(i).padStart(12, '0')}`;
      return {
        messageId: id,
        chatId,
        chatLid: null,
        from: fromMe ? meJid : chatId,
        fromLid: null,
        fromMe,
        type: 'text',
        text,
        content: text,
        pushName: fromMe ? 'Me' : `Peer ${chatId.slice(6, 11)}`,
        messageTimestamp: at,
        key: { remoteJid: chatId, id, fromMe },
        quotable: quotableOf(text),
        ...(i % 20 === 19 ? { quotedId: `SEED${String(i - 1).padStart(12, '0')}` } : {}),
      };
    };
    const seedStarted = performance.now();
    const span = 60 * DAY;
    let batch: ReceivedMessage[] = [];
    const flush = async () => {
      await store.storeHistory(sessionId, batch);
      batch = [];
    };
    for (let c = 1; c < CHATS; c++) {
      batch.push(messageOf(`1557600${String(c).padStart(4, '0')}@s.whatsapp.net`, THREAD + c, now - span + Math.floor((c * span) / CHATS)));
      if (batch.length === 5000) await flush();
    }
    for (let i = 0; i < THREAD; i++) {
      batch.push(messageOf(thread, i, now - span + Math.floor((i * span) / THREAD)));
      if (batch.length === 5000) await flush();
    }
    if (batch.length > 0) await flush();
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    note(`pages: seeded in ${seedSeconds.toFixed(0)} s`);
    await app.db.$executeRawUnsafe('ANALYZE');
    const sizes = await storeSizes(app, kind);
    if (sizes.chats !== CHATS || sizes.messages !== THREAD + CHATS - 1)
      throw new Error(`seeded ${sizes.chats} chats, ${sizes.messages} messages`);

    const timed = async <T>(work: () => Promise<T>, into: number[]): Promise<T> => {
      const started = performance.now();
      const result = await work();
      into.push(performance.now() - started);
      return result;
    };
    const rest = async (path: string) => {
      const res = await http(app.baseUrl, 'GET', path, { key });
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`);
      return res.body;
    };
    const graph = async (query: string, variables: Record<string, unknown>) => {
      const res = await gql(app.baseUrl, key, query, variables);
      if (res.status !== 200 || res.errors) throw new Error(`GraphQL answered ${res.status}: ${JSON.stringify(res.errors)}`);
      return res.data;
    };
    const chatsPath = `/v1/sessions/${sessionId}/chats?limit=${PAGE}`;
    const threadPath = `/v1/sessions/${sessionId}/chats/${encodeURIComponent(thread)}/messages?limit=${PAGE}`;
    // Seeding kept the event loop busy past the keep-alive window: warm up before timing.
    for (let i = 0; i < 20; i++) {
      await rest(chatsPath);
      await rest(threadPath);
      await graph(CHATS_QUERY, { s: sessionId });
      await graph(THREAD_QUERY, { s: sessionId, c: thread });
    }

    const first = { graphqlChats: [] as number[], restChats: [] as number[], graphqlThread: [] as number[], restThread: [] as number[] };
    for (let i = 0; i < FIRST_PAGES; i++) {
      const chats = await timed(() => graph(CHATS_QUERY, { s: sessionId }), first.graphqlChats);
      if (chats.session.chats.edges.length !== PAGE || chats.session.chats.totalCount !== CHATS)
        throw new Error('GraphQL chats page is short');
      const listed = await timed(() => rest(chatsPath), first.restChats);
      if (listed.chats.length !== PAGE) throw new Error('REST chats page is short');
      const messages = await timed(() => graph(THREAD_QUERY, { s: sessionId, c: thread }), first.graphqlThread);
      if (messages.session.chat.messages.edges.length !== PAGE) throw new Error('GraphQL thread page is short');
      const page = await timed(() => rest(threadPath), first.restThread);
      if (page.messages.length !== PAGE) throw new Error('REST thread page is short');
    }

    note('pages: first pages timed');
    // Deep: every page of the chat list and of the thread by REST cursors, and as many by GraphQL's.
    const deep = { restChats: [] as number[], graphqlChats: [] as number[], restThread: [] as number[], graphqlThread: [] as number[] };
    let walked = 0;
    for (let cursor: string | null = null; ; ) {
      const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page: Json = await timed(() => rest(`${chatsPath}${suffix}`), deep.restChats);
      walked += page.chats.length;
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    if (walked !== CHATS) throw new Error(`REST chat pages held ${walked} chats`);
    note('pages: REST chat list walked');
    walked = 0;
    for (let after: string | null = null; ; ) {
      const data: Json = await timed(() => graph(CHATS_QUERY, { s: sessionId, after }), deep.graphqlChats);
      walked += data.session.chats.edges.length;
      after = data.session.chats.pageInfo.hasNextPage ? data.session.chats.pageInfo.endCursor : null;
      if (!after) break;
    }
    if (walked !== CHATS) throw new Error(`GraphQL chat pages held ${walked} chats`);
    // The thread is walked to its end in pages of 200 (MAX_LIMIT), and from each of their cursors a page
    // of 50 is timed: 500 pages of 50 spread evenly down to the 100,000th message.
    walked = 0;
    for (let cursor: string | null = null; ; ) {
      const suffix: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const timedPage: Json = await timed(() => rest(`${threadPath}${suffix}`), deep.restThread);
      if (timedPage.messages.length === 0) throw new Error('REST thread page is empty');
      const page: Json = await rest(`${threadPath.replace(`limit=${PAGE}`, `limit=${WALK}`)}${suffix}`);
      walked += page.messages.length;
      cursor = page.nextCursor;
      if (deep.restThread.length % 50 === 0) note(`pages: thread walked to ${walked}, last page ${deep.restThread.at(-1)?.toFixed(0)} ms`);
      if (!cursor) break;
    }
    if (walked !== THREAD) throw new Error(`REST thread pages held ${walked} messages`);
    note('pages: REST thread walked');
    for (let after: string | null = null, n = 0; n < GRAPHQL_DEEP_PAGES; n++) {
      const data: Json = await timed(() => graph(THREAD_QUERY, { s: sessionId, c: thread, after }), deep.graphqlThread);
      after = data.session.chat.messages.pageInfo.endCursor;
    }
    return {
      seedSeconds,
      first: {
        graphqlChats: timings(first.graphqlChats),
        restChats: timings(first.restChats),
        graphqlThread: timings(first.graphqlThread),
        restThread: timings(first.restThread),
      },
      deep: {
        restChats: timings(deep.restChats),
        graphqlChats: timings(deep.graphqlChats),
        restThread: timings(deep.restThread),
        graphqlThread: timings(deep.graphqlThread),
      },
      sizes,
    };
  } finally {
    await app.close();
  }
};

/* ------------------------------------------------------------------ the whole */

export interface StoreBench {
  kind: DbKind;
  minutes: number;
  /** the 1-minute load average at the start and the end (the machine is shared) */
  load: [number, number];
  history: HistoryBench;
  cpu: CpuBench;
  pages: PagesBench;
}

// STORE_BENCH=history,cpu,pages: only those parts (all by default).
const PARTS = (process.env.STORE_BENCH ?? 'history,cpu,pages').split(',');

export const benchStore = async (
  kind: DbKind,
): Promise<Partial<StoreBench> & { kind: DbKind; minutes: number; load: [number, number] }> => {
  const started = performance.now();
  const loadBefore = loadavg()[0] ?? NaN;
  const sandboxProcess = await startSandboxProcess();
  try {
    const sandbox = await connectToSandbox(sandboxProcess.controlUrl);
    const history = PARTS.includes('history') ? await benchHistory(kind, sandboxProcess.controlUrl, sandbox) : undefined;
    if (history) printHistory(kind, history);
    const cpu = PARTS.includes('cpu') ? await benchCpu(kind, sandboxProcess.controlUrl, sandbox) : undefined;
    if (cpu) printCpu(kind, cpu);
    const pages = PARTS.includes('pages') ? await benchPages(kind) : undefined;
    if (pages) printPages(kind, pages);
    return { kind, minutes: (performance.now() - started) / 60_000, load: [loadBefore, loadavg()[0] ?? NaN], history, cpu, pages };
  } finally {
    await sandboxProcess.stop();
  }
};

const ms = (t: Timings) => `p50 ${t.p50.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms (max ${t.max.toFixed(1)}, ${t.count} pages)`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

const printSizes = (kind: DbKind, label: string, s: StoreSizes) => {
  const search =
    kind === 'sqlite'
      ? `search index (FTS5 and its key table) ${(s.searchBytes / s.messages).toFixed(0)} B`
      : `of which the GIN search index ${(s.searchBytes / s.messages).toFixed(0)} B`;
  console.log(
    `  bytes per message (${label}: ${s.messages.toLocaleString('en')} messages, ${s.chats.toLocaleString('en')} chats): ${perMessage(kind, s).toFixed(0)} B with the search index; ` +
      `Message table and indexes ${(s.messageBytes / s.messages).toFixed(0)} B, ${search}; chats ${(s.chatBytes / s.chats).toFixed(0)} B per chat ` +
      `(${kb(s.messageBytes)} + ${kind === 'sqlite' ? kb(s.searchBytes) : '0'} + ${kb(s.chatBytes)})`,
  );
};

/** Prints a part's figures as soon as it is measured (a database's run takes minutes). */
export const printStoreBench = (r: Awaited<ReturnType<typeof benchStore>>): void => {
  console.log(
    `store/${r.kind}: done in ${r.minutes.toFixed(1)} min; load average ${r.load[0].toFixed(1)} at the start, ${r.load[1].toFixed(1)} at the end (2 cores, shared)`,
  );
};

const printCpu = (kind: DbKind, cpu: CpuBench): void => {
  const median = (rounds: CpuRound[], pick: (x: CpuRound) => number) => quantile(rounds.map(pick), 0.5);
  const onMs = median(cpu.on, (x) => x.cpuMs);
  const offMs = median(cpu.off, (x) => x.cpuMs);
  console.log(
    `store/${kind}: CPU per message (${ROUND} sends and ${ROUND} received texts a round, ${PAIRS} pairs alternating): store on ${onMs.toFixed(2)} ms, off (specOnly) ${offMs.toFixed(2)} ms; ` +
      `median ratio of the pairs ${cpu.ratio.toFixed(2)}× (target <= 1.10×)` +
      (kind === 'postgres'
        ? `; of which PostgreSQL's backends ${median(cpu.on, (x) => x.dbMs).toFixed(2)} ms on, ${median(cpu.off, (x) => x.dbMs).toFixed(2)} ms off`
        : ''),
  );
  console.log(
    `  rounds, ms per message: on ${cpu.on.map((x) => x.cpuMs.toFixed(2)).join(' ')}; off ${cpu.off.map((x) => x.cpuMs.toFixed(2)).join(' ')}; ` +
      `msg/s on ${median(cpu.on, (x) => x.rate).toFixed(0)}, off ${median(cpu.off, (x) => x.rate).toFixed(0)}; ${cpu.stored} stored`,
  );
};

const printPages = (kind: DbKind, pages: PagesBench): void => {
  console.log(
    `store/${kind}: pages over ${CHATS.toLocaleString('en')} chats and a chat of ${THREAD.toLocaleString('en')} messages (seeded in ${pages.seedSeconds.toFixed(0)} s), ${PAGE} a page, through HTTP (target p99 <= 20 ms):`,
  );
  console.log(
    `  first page of chats: GraphQL Session.chats (with totalCount) ${ms(pages.first.graphqlChats)}; REST ${ms(pages.first.restChats)}`,
  );
  console.log(`  first page of the thread: GraphQL Chat.messages ${ms(pages.first.graphqlThread)}; REST ${ms(pages.first.restThread)}`);
  console.log(`  every page of chats by cursor: REST ${ms(pages.deep.restChats)}; GraphQL ${ms(pages.deep.graphqlChats)}`);
  console.log(
    `  a page from every 200th message of the thread down to its end, by cursor: REST ${ms(pages.deep.restThread)}; GraphQL, its first ${GRAPHQL_DEEP_PAGES} ${ms(pages.deep.graphqlThread)}`,
  );
  printSizes(kind, 'the seeded store', pages.sizes);
};

const printHistory = (kind: DbKind, history: HistoryBench): void => {
  console.log(
    `store/${kind}: history sync of ${history.stored.toLocaleString('en')} messages in ${HISTORY_CHATS} chats with ${history.reactions.toLocaleString('en')} reactions (${history.chunks} chunks): ${history.seconds.toFixed(1)} s from the QR scan to the last history.synced (target <= 60 s; the first ${history.firstSeconds.toFixed(1)} s), ` +
      `${history.cpuSeconds.toFixed(1)} CPU s in the service; resident memory ${history.rssBaseMb.toFixed(0)} MB before, peak growth ${history.rssPeakGrowthMb.toFixed(0)} MB (target <= 100 MB), ${history.rssEndGrowthMb.toFixed(0)} MB at the end; V8 heap used, peak growth ${history.heapPeakGrowthMb.toFixed(0)} MB`,
  );
  printSizes(kind, 'after the history sync', history.sizes);
};
