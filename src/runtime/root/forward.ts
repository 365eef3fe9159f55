import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Kind, parse } from 'graphql';
import type { ArgumentNode, OperationDefinitionNode, ValueNode } from 'graphql';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { Ownership } from '../ports/cluster.ts';

/** The header a node forwards with; a request carrying the right secret is served where it lands. */
export const CLUSTER_SECRET_HEADER = 'x-cluster-secret';
const FORWARDED_BY = 'x-forwarded-by-node';
const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** How often a forwarding node whose hop failed looks for the session's next owner. */
const RETRY_EVERY_MS = 250;
/** How long a stopping node lets the requests it forwarded finish before it cuts them. */
const CLOSE_GRACE_MS = 1_000;
/** How often a request is sent to a node that did not answer, to see whether it is back. */
const PROBE_EVERY_MS = 2_000;
/** At most this many silent nodes remembered (a node's id is new at each start). */
const SILENT_KEPT = 64;

// Hop-by-hop headers, and those the hop recomputes.
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length', 'te', 'trailer', 'expect']);

/** GraphQL fields whose `id` argument is a session's (all others name it `sessionId`). */
const SESSION_ID_FIELDS = /^(session|connectSession|disconnectSession|deleteSession|renameSession|setSessionStatus|requestPairingCode)$/;

export interface ForwarderOptions {
  ownership: Ownership;
  secret: string | undefined;
  logger: Logger;
  /** how long a request whose owner died before answering waits for the session's next owner */
  patienceMs: number;
  /**
   * What may be sent again to the session's next owner when its owner died before answering: REST
   * routes that honour Idempotency-Key (by method and path under /v1), and GraphQL mutations that do
   * (queries always may). Anything else may have done something that a second run would do again.
   */
  retriable: { rest: (method: string, path: string) => boolean; mutations: ReadonlySet<string> };
  /** counts each request sent to another node, by outcome (forwarded, unavailable) */
  onForward?: (outcome: 'forwarded' | 'unavailable') => void;
}

export interface Forwarder {
  /** For /v1, after the body is parsed: keyed by /sessions/:sessionId in the path, or the shortcuts' sessionId in the body or query. */
  rest: RequestHandler;
  /** For POST /graphql, with the raw body in req.body: keyed by the operation's session arguments. */
  graphql: RequestHandler;
  /** the request was sent on by another node (it carries the cluster secret), which took its rate-limit unit */
  fromNode: (req: Request) => boolean;
  close: () => Promise<void>;
}

/** The owner answered that the session is still moving: the retry of a request whose hop broke waits and tries again. */
class NotYet extends Error {}
/** The owner did not answer a hop a moment ago: the request is not sent to it again. */
class Unreachable extends Error {}

const MOVED = 'The session is moving to another node; try again in a moment';

const cutByStop = (key: string | undefined): string =>
  `This node is stopping, and the request it sent on to the node that links this session was cut off; it may have been carried out, so retry it${key ? ` with the header Idempotency-Key: ${key}` : ''}`;

const digest = (text: string) => createHash('sha256').update(text).digest();

const argumentValue = (node: ValueNode, variables: Record<string, unknown>): unknown => {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.STRING) return node.value;
  if (node.kind === Kind.OBJECT) return Object.fromEntries(node.fields.map((f) => [f.name.value, argumentValue(f.value, variables)]));
  return undefined;
};

/** What the forwarder reads of a GraphQL request: the operation's kind, its top-level fields, and the sessions they are about. */
export interface GraphqlOperation {
  kind: 'query' | 'mutation';
  fields: string[];
  sessions: Set<string>;
}

/** The session ids the operation's top-level fields are about; undefined when it cannot be read here. */
export const graphqlSessions = (body: unknown): Set<string> | undefined => graphqlOperation(body)?.sessions;

/** The operation a GraphQL body runs (undefined when it cannot be read here, or for a subscription). */
export const graphqlOperation = (body: unknown): GraphqlOperation | undefined => {
  if (!body || typeof body !== 'object') return undefined;
  const { query, variables, operationName } = body as { query?: unknown; variables?: unknown; operationName?: unknown };
  if (typeof query !== 'string') return undefined;
  let operation: OperationDefinitionNode | undefined;
  try {
    const operations = parse(query).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    operation = typeof operationName === 'string' ? operations.find((o) => o.name?.value === operationName) : operations[0];
  } catch {
    return undefined;
  }
  if (!operation || operation.operation === 'subscription') return undefined;
  const given = variables && typeof variables === 'object' ? (variables as Record<string, unknown>) : {};
  const found = new Set<string>();
  const fields: string[] = [];
  const take = (value: unknown) => {
    const id = sessionIdOf(value);
    if (id) found.add(id);
  };
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    fields.push(selection.name.value);
    const byId = SESSION_ID_FIELDS.test(selection.name.value);
    for (const arg of selection.arguments ?? ([] as ArgumentNode[])) {
      const value = argumentValue(arg.value, given);
      if (arg.name.value === 'sessionId' || (byId && arg.name.value === 'id')) take(value);
      else if (value && typeof value === 'object') take((value as Record<string, unknown>).sessionId);
    }
  }
  return { kind: operation.operation, fields, sessions: found };
};

/**
 * Sessions are made with Prisma's uuid(), so only a UUID can name one: anything else (a malformed escape,
 * a NUL) is left to the route, which answers it 400 or 404 as on a single node, instead of reaching the
 * lease table or throwing here.
 */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const sessionIdOf = (value: unknown): string | undefined => (typeof value === 'string' && SESSION_ID.test(value) ? value : undefined);

const restSession = (req: Request): string | undefined => {
  // A UUID has nothing to unescape, so the raw segment is compared as it came.
  const inPath = /^\/sessions\/([^/]+)/.exec(req.path)?.[1];
  if (inPath && inPath !== 'api') return sessionIdOf(inPath);
  const body = req.body as { sessionId?: unknown } | undefined;
  if (body && typeof body === 'object' && typeof body.sessionId === 'string') return sessionIdOf(body.sessionId);
  return sessionIdOf(req.query.sessionId);
};

/**
 * Any node answers any request (issue 34): a request about a session another node owns is sent on to
 * that node's registered address with the cluster secret, and its answer streamed back as it comes
 * (a long-poll included). Requests about no session, or about sessions of several nodes, run here.
 */
export const createForwarder = (options: ForwarderOptions): Forwarder => {
  const { ownership, secret, logger, patienceMs, retriable } = options;
  const expected = secret ? digest(secret) : undefined;
  const agent = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 });
  /** close() was called: hops it cuts are answered at once, not retried on a next owner (none comes: the owner lives) */
  let stopping = false;
  /** the requests on their way to another node, which close() cuts after its grace */
  const inFlight = new Set<AbortController>();

  /**
   * Nodes that did not answer a hop, until one answers again: one warning per node, not one per request,
   * and while it stays silent its sessions' requests are answered at once (one is let through every
   * PROBE_EVERY_MS to see whether it is back) until its registration lapses and another node takes them.
   */
  const silent = new Map<string, { since: number; probeAt: number; failures: number }>();
  const mayTry = (nodeId: string): boolean => {
    const known = silent.get(nodeId);
    if (!known || performance.now() >= known.probeAt) return true;
    known.failures += 1;
    return false;
  };
  const failed = (nodeId: string, err: unknown) => {
    const now = performance.now();
    const known = silent.get(nodeId);
    if (known) {
      known.failures += 1;
      known.probeAt = now + PROBE_EVERY_MS;
      return;
    }
    if (silent.size >= SILENT_KEPT) silent.delete(silent.keys().next().value ?? nodeId);
    silent.set(nodeId, { since: now, probeAt: now + PROBE_EVERY_MS, failures: 1 });
    logger.warn(
      { err, owner: nodeId },
      'the owner of a session did not answer a forwarded request; its sessions are not forwarded to until it answers again or they move',
    );
  };
  const answered = (nodeId: string) => {
    const known = silent.get(nodeId);
    if (!known) return;
    silent.delete(nodeId);
    logger.info(
      { owner: nodeId, silentMs: Math.round(performance.now() - known.since), requests: known.failures },
      'the owner of a session answers forwarded requests again',
    );
  };

  const servedHere = (req: Request): boolean => {
    const given = req.header(CLUSTER_SECRET_HEADER);
    return !ownership.clustered || (expected !== undefined && given !== undefined && timingSafeEqual(digest(given), expected));
  };

  const unavailable = (res: Response, graphql: boolean, message: string) => {
    options.onForward?.('unavailable');
    res.setHeader('Retry-After', '1');
    if (graphql) res.status(200).json({ data: null, errors: [{ message, extensions: { code: 'SESSION_NOT_CONNECTED' } }] });
    else res.status(409).json({ ok: false, error: { code: 'SESSION_NOT_CONNECTED', message } });
  };

  /**
   * Sends the request to the owner and streams its answer back; throws when the hop fails before an
   * answer began, or (`waitOn409`) when the owner answers that the session is still moving.
   */
  const hop = async (
    req: Request,
    res: Response,
    owner: { address: string; nodeId: string },
    hopOptions: { headers: IncomingHttpHeaders; body: Buffer | undefined; signal: AbortSignal; waitOn409: boolean },
  ) => {
    const answer = await request(new URL(req.originalUrl, owner.address), {
      method: req.method as Dispatcher.HttpMethod,
      headers: hopOptions.headers,
      body: hopOptions.body,
      dispatcher: agent,
      signal: hopOptions.signal,
    });
    answered(owner.nodeId);
    options.onForward?.('forwarded');
    // "Still moving" is a 409 on REST and an error in a 200 on GraphQL, each with Retry-After (`unavailable`).
    if (hopOptions.waitOn409 && (answer.statusCode === 409 || answer.statusCode === 200) && answer.headers['retry-after'] !== undefined) {
      await answer.body.dump();
      throw new NotYet();
    }
    res.status(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !DROPPED.has(name)) res.setHeader(name, value);
    await pipeline(answer.body, res);
  };

  const forward = async (
    req: Request,
    res: Response,
    next: NextFunction,
    sessionIds: Set<string>,
    body: Buffer | undefined,
    graphql: boolean,
    retried: boolean,
  ) => {
    const routeOf = async () => {
      const routes = await Promise.all([...sessionIds].map((id) => ownership.route(id)));
      const owners = new Set(routes.map((r) => (r.at === 'owner' ? r.address : r.at)));
      return owners.size === 1 ? routes[0] : undefined;
    };
    const first = await routeOf();
    if (!first || first.at === 'here') return next();
    if (first.at === 'unknown') return unavailable(res, graphql, MOVED);
    let only: { address: string; nodeId: string } = first;
    if (!secret)
      return unavailable(res, graphql, 'Another node links this session, and CLUSTER_SECRET is not set, so the request cannot reach it');
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!DROPPED.has(name)) headers[name] = value;
    headers[CLUSTER_SECRET_HEADER] = secret;
    headers[FORWARDED_BY] = ownership.nodeId;
    if (body && !headers['content-type']) headers['content-type'] = 'application/json';
    // A send carries an Idempotency-Key over the hop, the client's or one made here: when the owner dies
    // before answering, the send may have been carried out (a message sent), so it is sent again under the
    // same key to the session's next owner, which answers with what the first attempt did instead of doing
    // it twice. Other requests are left to the client to retry.
    const key = req.header(IDEMPOTENCY_KEY_HEADER) ?? (retried ? `node-${randomUUID()}` : undefined);
    if (key) headers[IDEMPOTENCY_KEY_HEADER] = key;
    const until = performance.now() + patienceMs;
    const aborted = new AbortController();
    const abort = () => aborted.abort();
    res.once('close', abort);
    inFlight.add(aborted);
    try {
      for (let attempt = 0; ; attempt++) {
        /** the node that did not answer, which the retry waits to see replaced */
        let gone: string | undefined;
        try {
          if (!mayTry(only.nodeId)) throw new Unreachable();
          return await hop(req, res, only, { headers, body, signal: aborted.signal, waitOn409: attempt > 0 });
        } catch (err) {
          if (stopping && !res.writableEnded) {
            if (res.headersSent) return void res.destroy();
            return unavailable(res, graphql, cutByStop(key));
          }
          if (aborted.signal.aborted) return;
          if (!(err instanceof NotYet)) {
            if (res.headersSent) {
              logger.warn({ err, owner: only.nodeId }, 'the answer of the owner of a session broke off');
              return void res.destroy();
            }
            if (!(err instanceof Unreachable)) failed(only.nodeId, err);
            if (!retried) return unavailable(res, graphql, 'The node that links this session did not answer; try again in a moment');
            gone = only.nodeId;
          }
        }
        // Wait for the session's next owner (a failover takes seconds), which may be this node.
        let moved: Awaited<ReturnType<typeof routeOf>>;
        while (!moved && !stopping && performance.now() < until && !aborted.signal.aborted) {
          await sleep(RETRY_EVERY_MS);
          const route = await routeOf().catch(() => undefined);
          if (route?.at === 'here' || (route?.at === 'owner' && route.nodeId !== gone)) moved = route;
        }
        if (aborted.signal.aborted) return;
        if (stopping) return unavailable(res, graphql, cutByStop(key));
        if (!moved || moved.at === 'unknown')
          return unavailable(
            res,
            graphql,
            `The node that links this session stopped before answering, and no other node took the session over in time; the request may have been carried out, so retry it with the header Idempotency-Key: ${key}`,
          );
        if (moved.at === 'here') {
          if (key) req.headers[IDEMPOTENCY_KEY_HEADER] = key;
          return next();
        }
        only = moved;
      }
    } finally {
      inFlight.delete(aborted);
      res.off('close', abort);
    }
  };

  return {
    rest: (req, res, next) => {
      const sessionId = restSession(req);
      if (servedHere(req)) {
        // Forwarded here as the owner, but the session moved on meanwhile (handed over): the client tries again.
        if (ownership.clustered && sessionId && !ownership.owns(sessionId)) return unavailable(res, false, MOVED);
        return next();
      }
      if (!sessionId) return next();
      const hasBody = req.body !== undefined && req.method !== 'GET' && req.method !== 'HEAD';
      const body = hasBody ? Buffer.from(JSON.stringify(req.body)) : undefined;
      forward(req, res, next, new Set([sessionId]), body, false, retriable.rest(req.method, req.path)).catch(next);
    },
    graphql: (req, res, next) => {
      if (!ownership.clustered || !Buffer.isBuffer(req.body)) return next();
      const raw = req.body;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        return next();
      }
      const operation = graphqlOperation(parsed);
      const sessions = operation?.sessions;
      if (!operation || !sessions || sessions.size === 0) return next();
      if (servedHere(req)) {
        if ([...sessions].some((id) => !ownership.owns(id))) return unavailable(res, true, MOVED);
        return next();
      }
      const retried = operation.kind === 'query' || operation.fields.every((f) => retriable.mutations.has(f));
      forward(req, res, next, sessions, raw, true, retried).catch(next);
    },
    fromNode: (req) => ownership.clustered && req.header(CLUSTER_SECRET_HEADER) !== undefined && servedHere(req),
    close: async () => {
      // Requests still on their way to another node (a long-poll waits there for minutes) are cut after a
      // moment, so that a stopping node exits in time; their clients get the hop's error and retry.
      stopping = true;
      let closed = false;
      const closing = agent.close().then(() => {
        closed = true;
      });
      await Promise.race([closing, sleep(CLOSE_GRACE_MS)]);
      if (closed) return;
      // Cut here rather than by the agent's destroy alone, which left a hop waiting for its answer.
      for (const request of inFlight) request.abort();
      await agent.destroy();
    },
  };
};
