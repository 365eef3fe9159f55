import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../ports/db.ts';
import type { EndpointRef, OutboxRows, WebhookHandoff, WebhookOutbox } from '../ports/webhooks.ts';
import { Prisma } from '../../generated/sqlite/client.ts';
import { groupCommit } from '../db/group-commit.ts';
import { rawWrites } from '../db/raw-writes.ts';
import { jsonRows } from '../db/json-rows.ts';
import type { Provider } from '../db/migrate.ts';

// Random bytes drawn 4 KB at a time: one system call for hundreds of ids instead of one each.
let pool = Buffer.alloc(0);
let poolAt = 0;
const randomHex = (bytes: number): string => {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += bytes;
  return pool.toString('hex', poolAt - bytes, poolAt);
};

let lastMs = 0;
let counter = 0;
/**
 * An id sortable by creation within a process: the time, a counter for ids of the same millisecond,
 * then randomness so two nodes never collide. Rows keyed by it are appended at the end of their
 * index instead of being scattered over it (each page a write touches is written again to the WAL).
 */
export const newSortableId = (prefix: string, now: Date): string => {
  const ms = now.getTime();
  if (ms === lastMs) counter += 1;
  else {
    lastMs = ms;
    counter = 0;
  }
  return `${prefix}${ms.toString(36).padStart(9, '0')}${counter.toString(36).padStart(4, '0')}${randomHex(6)}`;
};

/** Standard Webhooks' `msg_` ids. */
export const newEventId = (now: Date): string => newSortableId('msg_', now);

/**
 * The id of an event written once (OutboxEvent.once): the network's time, then a hash of the event's key,
 * in the shape of newEventId's (sortable by time, the same length), so that every node that writes the
 * event names it alike and the second write meets the first's rows.
 */
export const onceEventId = (key: string, seconds: number): string =>
  `msg_${Math.max(0, Math.floor(seconds * 1000))
    .toString(36)
    .padStart(9, '0')}${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;

export interface WebhookOutboxOptions {
  db: Db;
  provider: Provider;
  now: () => Date;
  /** how long another node's endpoint change may go unseen here */
  cacheMs: number;
}

export const matches = (endpoint: EndpointRef, type: string, sessionId: string | null): boolean =>
  (endpoint.events.includes('*') || endpoint.events.includes(type)) && (endpoint.sessionId === null || endpoint.sessionId === sessionId);

export const createWebhookOutbox = (options: WebhookOutboxOptions): WebhookOutbox => {
  const { db, now } = options;
  // A cache of the database's endpoint list, never the source of truth: a node that did not make a
  // change sees it once its entry is older than cacheMs.
  const cache = new Map<string, { loadedAt: number; endpoints: Promise<EndpointRef[]> }>();
  const listeners: Array<(unclaimedIds?: string[]) => void> = [];
  const sinkListeners: Array<(sinkIds: string[]) => void> = [];
  let loop: WebhookHandoff | null = null;
  // rows written already claimed by this node's loop, until their transaction committed (or was dropped)
  const taken = new WeakSet<OutboxRows>();

  const endpointsOf = (accountId: string): Promise<EndpointRef[]> => {
    const at = Date.now();
    const hit = cache.get(accountId);
    if (hit && at - hit.loadedAt < options.cacheMs) return hit.endpoints;
    // Paused sinks are matched too: their events wait for them instead of being lost.
    const endpoints = Promise.all([
      db.webhookEndpoint.findMany({ where: { accountId, enabled: true }, select: { id: true, events: true, sessionId: true } }),
      db.eventSink.findMany({ where: { accountId }, select: { id: true, events: true, sessionId: true } }),
    ]).then(([hooks, sinks]) => [
      ...hooks.map((r) => ({ id: r.id, sessionId: r.sessionId, events: JSON.parse(r.events) as string[] })),
      ...sinks.map((r) => ({ id: r.id, sessionId: r.sessionId, events: JSON.parse(r.events) as string[], sink: true })),
    ]);
    endpoints.catch(() => cache.delete(accountId));
    cache.set(accountId, { loadedAt: at, endpoints });
    return endpoints;
  };

  const matching: WebhookOutbox['matching'] = async (accountId, type, sessionId) =>
    (await endpointsOf(accountId)).filter((e) => matches(e, type, sessionId));

  const rowsFor: WebhookOutbox['rowsFor'] = async (event, given) => {
    const endpoints = given ?? (await matching(event.accountId, event.type, event.sessionId));
    if (endpoints.length === 0) return null;
    const createdAt = now();
    const id = event.once ? onceEventId(event.once.key, event.once.at) : newEventId(createdAt);
    return {
      ...(event.once ? { once: true as const } : {}),
      event: {
        id,
        accountId: event.accountId,
        sessionId: event.sessionId,
        type: event.type,
        data: JSON.stringify(event.data ?? {}),
        createdAt,
      },
      deliveries: endpoints
        .filter((e) => !e.sink)
        .map((e) => ({
          id: `${id}_${e.id}`,
          eventId: id,
          endpointId: e.id,
          accountId: event.accountId,
          sessionId: event.sessionId,
          nextAttemptAt: createdAt,
          createdAt,
        })),
      ...(endpoints.some((e) => e.sink)
        ? { sinkDeliveries: endpoints.filter((e) => e.sink).map((e) => ({ id: `${id}_${e.id}`, sinkId: e.id })) }
        : {}),
    };
  };

  // A plain INSERT of one JSON parameter: every event passes here, a createMany is compiled anew for each
  // number of rows, and a VALUES list costs a parameter per cell. Each delivery carries its event's type
  // and data, so an event costs one statement, shared by the events of the same moment.
  const deliveryTable = jsonRows(options.provider, [
    ['id', 'text'],
    ['eventId', 'text'],
    ['type', 'text'],
    ['data', 'text'],
    ['endpointId', 'text'],
    ['accountId', 'text'],
    ['sessionId', 'text'],
    ['nextAttemptAt', 'timestamp'],
    ['claimedUntil', 'timestamp'],
    ['createdAt', 'timestamp'],
  ]);
  const sinkTable = jsonRows(options.provider, [
    ['id', 'text'],
    ['eventId', 'text'],
    ['sinkId', 'text'],
    ['accountId', 'text'],
    ['sessionId', 'text'],
    ['type', 'text'],
    ['data', 'text'],
    ['createdAt', 'timestamp'],
  ]);
  // Rows written once (OutboxRows.once) may meet those of an earlier write: those are left alone.
  const onConflict = (rows: OutboxRows[]): Prisma.Sql =>
    rows.some((r) => r.once) ? Prisma.sql`ON CONFLICT ("id") DO NOTHING` : Prisma.empty;
  const sinkWrites = (rows: OutboxRows[]): Prisma.Sql[] => {
    const cells = rows.flatMap(({ event, sinkDeliveries }) =>
      (sinkDeliveries ?? []).map((d) => [
        d.id,
        event.id,
        d.sinkId,
        event.accountId,
        event.sessionId,
        event.type,
        event.data,
        event.createdAt,
      ]),
    );
    if (cells.length === 0) return [];
    return [
      Prisma.sql`INSERT INTO "SinkDelivery" ("id", "eventId", "sinkId", "accountId", "sessionId", "type", "data", "createdAt")
        SELECT "id", "eventId", "sinkId", "accountId", "sessionId", "type", "data", "createdAt" FROM (${sinkTable(cells)}) AS d WHERE true ${onConflict(rows)}`,
    ];
  };
  const writeSql: WebhookOutbox['writeSql'] = (rows) => {
    if (rows.length === 0) return [];
    if (!rows.some((r) => r.deliveries.length > 0)) return sinkWrites(rows);
    const lease = loop?.accepts(rows.flatMap((r) => r.deliveries)) ?? null;
    if (lease) for (const r of rows) taken.add(r);
    const deliveries = deliveryTable(
      rows.flatMap(({ event, deliveries }) =>
        deliveries.map((d) => [
          d.id,
          event.id,
          event.type,
          event.data,
          d.endpointId,
          d.accountId,
          d.sessionId,
          d.nextAttemptAt,
          lease,
          d.createdAt,
        ]),
      ),
    );
    return [
      Prisma.sql`INSERT INTO "WebhookDelivery" ("id", "eventId", "type", "data", "endpointId", "accountId", "sessionId", "status", "attempts", "nextAttemptAt", "claimedUntil", "createdAt")
        SELECT "id", "eventId", "type", "data", "endpointId", "accountId", "sessionId", 'PENDING', 0, "nextAttemptAt", "claimedUntil", "createdAt" FROM (${deliveries}) AS d WHERE true ${onConflict(rows)}`,
      ...sinkWrites(rows),
    ];
  };
  const writes: WebhookOutbox['writes'] = (rows) => writeSql(rows).map((sql) => db.$executeRaw(sql));

  const written = (rows?: OutboxRows[]) => {
    if (!rows) {
      for (const listener of listeners) listener();
      return;
    }
    const sinkIds = new Set<string>();
    for (const r of rows) for (const d of r.sinkDeliveries ?? []) sinkIds.add(d.sinkId);
    if (sinkIds.size > 0) for (const listener of sinkListeners) listener([...sinkIds]);
    const mine: OutboxRows[] = [];
    const unclaimed: string[] = [];
    for (const r of rows) {
      if (taken.delete(r)) mine.push(r);
      else for (const d of r.deliveries) unclaimed.push(d.id);
    }
    if (mine.length > 0) loop?.take(mine);
    if (unclaimed.length > 0) for (const listener of listeners) listener(unclaimed);
  };

  // Events that are not part of another write are grouped with those raised at the same moment; `emit`
  // resolves once they are on disk.
  const raw = rawWrites(db);
  const standalone = groupCommit<OutboxRows>(async (batch) => {
    if (!batch.some((r) => r.once) || !batch.some((r) => r.deliveries.length > 0)) {
      await raw(writeSql(batch));
      written(batch);
      return;
    }
    // What an earlier write of an event written once put there already is neither queued nor announced
    // here again: only the deliveries this statement added go on.
    const [deliveries, ...sinks] = writeSql(batch) as [Prisma.Sql, ...Prisma.Sql[]];
    const added = await db.$queryRaw<Array<{ id: string }>>`${deliveries} RETURNING "id"`;
    if (sinks.length > 0) await raw(sinks);
    const fresh = new Set(added.map((r) => r.id));
    for (const r of batch) if (r.once) r.deliveries = r.deliveries.filter((d) => fresh.has(d.id));
    written(batch);
  });

  return {
    matching,
    rowsFor,
    writes,
    writeSql,
    emit: async (event) => {
      const rows = await rowsFor(event);
      if (rows) await standalone.add(rows);
    },
    onWritten: (listener) => {
      listeners.push(listener);
    },
    written,
    onSinkRows: (listener) => {
      sinkListeners.push(listener);
    },
    handoff: (given) => {
      loop = given;
    },
    invalidate: (accountId) => {
      cache.delete(accountId);
      loop?.invalidate(accountId);
    },
  };
};
