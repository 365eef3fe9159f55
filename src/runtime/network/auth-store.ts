import { BufferJSON, initAuthCreds, proto } from 'baileys';
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap } from 'baileys';
import { Prisma } from '../../generated/sqlite/client.ts';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { groupCommit } from '../db/group-commit.ts';
import type { GroupCommit } from '../db/group-commit.ts';
import type { Fence } from '../ports/cluster.ts';

const CREDS = 'creds';

export interface StoredAuthState {
  state: AuthenticationState;
  saveCreds: () => Promise<void>;
  /** Writes the Signal keys still waiting; called before the link closes and before a reload. */
  flush: () => Promise<void>;
  /**
   * Stops all writing, for a session whose credentials are being deleted: drops the waiting writes,
   * ignores later ones (Baileys may still update keys or credentials while it closes) and resolves once
   * a write already under way has landed, so a delete that follows is the last word.
   */
  drop: () => Promise<void>;
  /** True when credentials were loaded, i.e. the session can log in without a new QR. */
  registered: boolean;
}

/** Several nodes: the claim this store writes under, and what to do once the database refused a write (close the link). */
export interface Fencing {
  fence: Fence;
  onFenced: () => void;
}

const encode = (value: unknown): string => JSON.stringify(value, BufferJSON.replacer);
const decode = (value: string): unknown => JSON.parse(value, BufferJSON.reviver);

/** A session's stored credentials (the encoded row), or null. */
export type CredsReader = (sessionId: string) => Promise<string | null>;

const readCredsRow = async (db: Db, sessionId: string): Promise<string | null> =>
  (await db.sessionAuth.findUnique({ where: { sessionId_type_keyId: { sessionId, type: CREDS, keyId: '' } }, select: { value: true } }))
    ?.value ?? null;

const CREDS_PER_STATEMENT = 500;

/**
 * Reads credentials for many links in one statement: the reads asked for in the same turn of the event
 * loop go together, so a mass re-link at start reads them in a few statements instead of one per link.
 */
export const batchedCredsReader = (db: Db): CredsReader => {
  let waiting = new Map<string, Array<{ resolve: (value: string | null) => void; reject: (err: unknown) => void }>>();
  const run = async () => {
    const batch = waiting;
    waiting = new Map();
    const ids = [...batch.keys()];
    for (let i = 0; i < ids.length; i += CREDS_PER_STATEMENT) {
      const chunk = ids.slice(i, i + CREDS_PER_STATEMENT);
      try {
        const rows = await db.sessionAuth.findMany({
          where: { type: CREDS, keyId: '', sessionId: { in: chunk } },
          select: { sessionId: true, value: true },
        });
        const found = new Map(rows.map((r) => [r.sessionId, r.value]));
        for (const id of chunk) for (const waiter of batch.get(id) ?? []) waiter.resolve(found.get(id) ?? null);
      } catch (err) {
        for (const id of chunk) for (const waiter of batch.get(id) ?? []) waiter.reject(err);
      }
    }
  };
  return (sessionId) =>
    new Promise((resolve, reject) => {
      if (waiting.size === 0) setImmediate(() => void run());
      const list = waiting.get(sessionId) ?? [];
      list.push({ resolve, reject });
      waiting.set(sessionId, list);
    });
};

type KeyValue = SignalDataTypeMap[keyof SignalDataTypeMap];

interface KeyRow {
  type: string;
  keyId: string;
  /** null deletes the key */
  value: KeyValue | null;
}

/** One session's keys on their way to disk; `refused` is set by the write when the session's fence no longer holds. */
interface SessionKeys {
  sessionId: string;
  fence?: Fence;
  rows: KeyRow[];
  refused?: boolean;
}

// Four parameters a row: well inside SQLite's 32,766 and PostgreSQL's 65,535 per statement, also when
// several links store their 812 pre-keys in the same turn.
const KEY_ROWS_PER_STATEMENT = 2_000;

interface FlatRow extends KeyRow {
  sessionId: string;
}

const chunks = <T>(items: T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/** Upserts what has a value and deletes what was set to null, every session's keys together (no fence: one node). */
const unfencedStatements = (db: Db, rows: FlatRow[]) => {
  const statements = [];
  for (const chunk of chunks(
    rows.filter((e) => e.value !== null),
    KEY_ROWS_PER_STATEMENT,
  )) {
    const values = Prisma.join(chunk.map((e) => Prisma.sql`(${e.sessionId}, ${e.type}, ${e.keyId}, ${encode(e.value)})`));
    statements.push(
      db.$executeRaw`INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value") VALUES ${values}
        ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value"`,
    );
  }
  for (const chunk of chunks(
    rows.filter((e) => e.value === null),
    KEY_ROWS_PER_STATEMENT,
  )) {
    const keys = Prisma.join(chunk.map((e) => Prisma.sql`(${e.sessionId}, ${e.type}, ${e.keyId})`));
    statements.push(db.$executeRaw`DELETE FROM "SessionAuth" WHERE ("sessionId", "type", "keyId") IN (VALUES ${keys})`);
  }
  return statements;
};

/**
 * Several nodes (PostgreSQL): the rows land only for the sessions whose lease still holds this node's
 * epoch, checked in the same statement. The lease rows are share-locked (in one order, as the renewal
 * locks them), so a claim by another node waits for this write to commit, and a write that comes after
 * the claim finds the new epoch: the new owner reads every key the old one wrote, and nothing after.
 * Answers the sessions whose fence held.
 */
const fencedStatement = (db: Db, rows: FlatRow[], fences: Map<string, Fence>) => {
  const fence = Prisma.join(
    [...new Set(rows.map((r) => r.sessionId))].map((id) => {
      const f = fences.get(id) as Fence;
      return Prisma.sql`(${id}::text, ${f.nodeId}::text, ${f.epoch}::int)`;
    }),
  );
  const upserts = rows.filter((e) => e.value !== null);
  const deletes = rows.filter((e) => e.value === null);
  const parts = [
    Prisma.sql`WITH fence AS (SELECT l."sessionId" FROM "SessionLease" l
      JOIN (VALUES ${fence}) AS f(s, n, e) ON l."sessionId" = f.s AND l."nodeId" = f.n AND l.epoch = f.e
      ORDER BY l."sessionId" COLLATE "C" FOR SHARE OF l)`,
  ];
  if (upserts.length > 0) {
    const values = Prisma.join(
      upserts.map((e) => Prisma.sql`(${e.sessionId}::text, ${e.type}::text, ${e.keyId}::text, ${encode(e.value)}::text)`),
    );
    parts.push(Prisma.sql`, upserted AS (INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value")
      SELECT v.s, v.t, v.k, v.v FROM (VALUES ${values}) AS v(s, t, k, v) WHERE v.s IN (SELECT "sessionId" FROM fence)
      ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value")`);
  }
  if (deletes.length > 0) {
    const keys = Prisma.join(deletes.map((e) => Prisma.sql`(${e.sessionId}::text, ${e.type}::text, ${e.keyId}::text)`));
    parts.push(Prisma.sql`, deleted AS (DELETE FROM "SessionAuth" a USING (VALUES ${keys}) AS d(s, t, k)
      WHERE a."sessionId" = d.s AND a."type" = d.t AND a."keyId" = d.k AND d.s IN (SELECT "sessionId" FROM fence))`);
  }
  parts.push(Prisma.sql` SELECT "sessionId" FROM fence`);
  return db.$queryRaw<Array<{ sessionId: string }>>(Prisma.join(parts, ''));
};

/** Writes every session's keys together; marks `refused` the sessions whose fence no longer holds (nothing of theirs is written). */
const writeKeys = async (db: Db, batches: SessionKeys[]): Promise<void> => {
  const flat = (list: SessionKeys[]): FlatRow[] => list.flatMap((b) => b.rows.map((r) => ({ sessionId: b.sessionId, ...r })));
  const statements = unfencedStatements(db, flat(batches.filter((b) => !b.fence)));
  // In the order the lease rows are locked (COLLATE "C"), across the statements of one transaction too.
  const fenced = batches.filter((b) => b.fence).sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  const fences = new Map(fenced.map((b) => [b.sessionId, b.fence as Fence]));
  const fencedChunks = chunks(flat(fenced), KEY_ROWS_PER_STATEMENT);
  const checks = fencedChunks.map((rows) => fencedStatement(db, rows, fences));
  const all = [...checks, ...statements];
  let results: unknown[] = [];
  if (all.length === 1) results = [await all[0]];
  else if (all.length > 1) results = await db.$transaction(all);
  if (fenced.length === 0) return;
  const held = new Set<string>();
  for (const rows of results.slice(0, checks.length) as Array<Array<{ sessionId: string }>>) for (const r of rows) held.add(r.sessionId);
  for (const batch of fenced) if (!held.has(batch.sessionId)) batch.refused = true;
};

/**
 * One group commit of Signal keys per database client: the key writes of every link on the network
 * thread in the same turn go out in one statement. With many sessions each sending in turn, a write per
 * session was a statement per message; a failed group is written again session by session, so one
 * session's failure stays its own.
 */
const keyWriters = new WeakMap<Db, GroupCommit<SessionKeys>>();
const keyWritesFor = (db: Db): GroupCommit<SessionKeys> => {
  let writer = keyWriters.get(db);
  if (!writer) {
    writer = groupCommit<SessionKeys>((batches) => writeKeys(db, batches), { isolateFailures: true });
    keyWriters.set(db, writer);
  }
  return writer;
};

/** Decoded keys kept in memory per session: Signal sessions of recent contacts, sender keys, tokens. */
const CACHED_KEYS = 2_000;

/**
 * Baileys' credentials and Signal keys in our database, one row per key.
 *
 * Key writes are written behind: Baileys holds the socket's send lock until its key commit returns, so
 * a commit that waited for the database would make every send wait for its own statement. Writes wait
 * in memory for the end of the event-loop turn and go out in one statement with every other link's
 * (later values of the same key replace earlier ones); reads see them at once. Baileys commits after the stanza has left, so the
 * ratchet was never on disk before the send; this moves the write by one turn of the loop.
 */
export const loadAuthState = async (
  db: Db,
  sessionId: string,
  logger?: Logger,
  readCreds: CredsReader = (id) => readCredsRow(db, id),
  fencing?: Fencing,
): Promise<StoredAuthState> => {
  const stored = await readCreds(sessionId);
  const creds = stored !== null ? (decode(stored) as AuthenticationCreds) : initAuthCreds();

  // Keys known to be absent. Baileys asks for some (privacy tokens) on every send; every write goes
  // through this store, so a miss stays a miss until `set` writes that key.
  const missing = new Set<string>();
  // Keys read or written lately, decoded; the oldest go first past CACHED_KEYS. Every write goes through
  // this store, so an entry is never stale.
  const cache = new Map<string, KeyValue>();
  const remember = (type: string, key: string, value: KeyValue) => {
    // One-time pre-keys are written by the hundred when a device links (812 of them, two Buffers each:
    // about 400 KB a session) and each is read at most once, when a contact starts a Signal session
    // with it, then deleted: kept in memory they were most of an idle session's heap.
    if (type === 'pre-key') return;
    cache.delete(key);
    cache.set(key, value);
    if (cache.size > CACHED_KEYS) cache.delete(cache.keys().next().value ?? '');
  };
  // Written but not yet on disk: the value, or null for a deletion.
  let waiting = new Map<string, { type: string; keyId: string; value: KeyValue | null }>();
  // The batch on its way to disk: still read from here, as pre-keys are not in the cache.
  let inFlight = new Map<string, { type: string; keyId: string; value: KeyValue | null }>();
  const pending = (key: string) => waiting.get(key) ?? inFlight.get(key);
  let writing: Promise<void> | null = null;
  let scheduled = false;
  let dropped = false;
  // another node holds the session: nothing more is written, and the link is told once
  let fenced = false;
  const refuse = (what: string) => {
    if (fenced) return;
    fenced = true;
    waiting = new Map();
    logger?.warn(
      { sessionId, nodeId: fencing?.fence.nodeId, epoch: fencing?.fence.epoch, what },
      'the database refused a Signal write: another node holds the session now; closing the link',
    );
    fencing?.onFenced();
  };
  // counts set() calls, so a read can tell that keys changed while it ran
  let writes = 0;

  const decodedValue = <T extends keyof SignalDataTypeMap>(type: T, value: unknown): SignalDataTypeMap[T] =>
    (type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value) as SignalDataTypeMap[T];

  const get = async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
    for (let attempt = 1; ; attempt += 1) {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      const wanted: string[] = [];
      for (const id of ids) {
        const key = `${type}\u0000${id}`;
        const held = pending(key);
        const cached = held ? undefined : cache.get(key);
        if (held) {
          if (held.value !== null) out[id] = held.value as SignalDataTypeMap[T];
        } else if (cached !== undefined) out[id] = cached as SignalDataTypeMap[T];
        else if (!missing.has(key)) wanted.push(id);
      }
      if (wanted.length === 0) return out;
      const writesBefore = writes;
      const rows = await db.sessionAuth.findMany({ where: { sessionId, type, keyId: { in: wanted } } });
      // A set() while the read ran may have been written already, making these rows stale: read again.
      if (writes !== writesBefore && attempt < 3) continue;
      const byId = new Map(rows.map((r) => [r.keyId, r.value]));
      for (const id of wanted) {
        const held = pending(`${type}\u0000${id}`);
        const row = byId.get(id);
        if (held) {
          if (held.value !== null) out[id] = held.value as SignalDataTypeMap[T];
        } else if (row !== undefined) {
          const value = decodedValue(type, decode(row));
          remember(type, `${type}\u0000${id}`, value);
          out[id] = value;
        } else if (writes === writesBefore) missing.add(`${type}\u0000${id}`);
      }
      return out;
    }
  };

  const keyWrites = keyWritesFor(db);
  const flushOnce = async () => {
    while (waiting.size > 0 && !dropped && !fenced) {
      const batch = waiting;
      waiting = new Map();
      inFlight = batch;
      try {
        const keys: SessionKeys = { sessionId, rows: [...batch.values()], ...(fencing ? { fence: fencing.fence } : {}) };
        await keyWrites.add(keys);
        inFlight = new Map();
        if (keys.refused) refuse('keys');
      } catch (err) {
        inFlight = new Map();
        // Kept for the next write unless a newer value replaced it meanwhile; flush() at close retries.
        for (const [key, entry] of batch) if (!waiting.has(key)) waiting.set(key, entry);
        logger?.error({ err, sessionId }, 'writing Signal keys failed; will retry');
        return;
      }
    }
  };

  const flush = async (): Promise<void> => {
    await credsWritten.catch(() => undefined);
    while (writing) await writing;
    if (waiting.size === 0) return;
    writing = flushOnce().finally(() => {
      writing = null;
    });
    await writing;
  };

  const set = async (data: SignalDataSet) => {
    if (dropped || fenced) return;
    writes += 1;
    for (const [type, entries] of Object.entries(data)) {
      for (const [keyId, value] of Object.entries(entries ?? {})) {
        const key = `${type}\u0000${keyId}`;
        missing.delete(key);
        waiting.set(key, { type, keyId, value: value ?? null });
        if (value === null || value === undefined) cache.delete(key);
        else remember(type, key, value);
      }
    }
    if (scheduled || waiting.size === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush().catch((err: unknown) => logger?.error({ err, sessionId }, 'writing Signal keys failed'));
    });
  };

  // Credential writes run one after another, and flush() waits for them, so a reload reads the last.
  let credsWritten: Promise<void> = Promise.resolve();
  const writeCreds = async () => {
    if (fenced) return;
    // Raw, so the (large) credentials row is not read back after every write.
    if (!fencing) {
      await db.$executeRaw`INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value") VALUES (${sessionId}, ${CREDS}, '', ${encode(creds)})
        ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value"`;
      return;
    }
    // As the keys (fencedStatement): only while the lease holds this node's epoch, share-locked until the write commits.
    const { nodeId, epoch } = fencing.fence;
    const held = await db.$queryRaw<Array<{ sessionId: string }>>`WITH fence AS (SELECT "sessionId" FROM "SessionLease"
        WHERE "sessionId" = ${sessionId} AND "nodeId" = ${nodeId} AND epoch = ${epoch}::int FOR SHARE),
      written AS (INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value")
        SELECT "sessionId", ${CREDS}::text, '', ${encode(creds)}::text FROM fence
        ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value")
      SELECT "sessionId" FROM fence`;
    if (held.length === 0) refuse('credentials');
  };
  const saveCreds = (): Promise<void> => {
    if (dropped || fenced) return Promise.resolve();
    credsWritten = credsWritten.catch(() => undefined).then(writeCreds);
    return credsWritten;
  };

  const drop = async () => {
    dropped = true;
    waiting = new Map();
    inFlight = new Map();
    cache.clear();
    await credsWritten.catch(() => undefined);
    while (writing) await writing;
  };

  return { state: { creds, keys: { get, set } }, saveCreds, flush, drop, registered: Boolean(stored !== null && creds.me) };
};

export const clearAuthState = async (db: Db, sessionId: string): Promise<void> => {
  await db.sessionAuth.deleteMany({ where: { sessionId } });
};
