import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import express from 'express';
import type { ErrorRequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Deps } from '../../resolvers/context.ts';
import { DomainError } from '../../resolvers/errors.ts';
import { errorHandler, notFoundRoute, sendError } from '../../rest/errors.ts';
import { docsRouter } from '../../rest/docs.ts';
import { restRouter } from '../../rest/router.ts';
import { honoursIdempotencyKey } from '../../rest/routes.ts';
import { dashboardRouter } from '../dashboard.ts';
import { createForwarder } from './forward.ts';
import { attachSubscriptions, createGraphQL, idempotentMutations } from './graphql.ts';

export interface App {
  server: Server;
  /** Stops accepting work, closes subscriptions and open connections. Does not touch the database. */
  close: () => Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;
/** While the server closes, how often the connections that went idle since are closed. */
const IDLE_CHECK_MS = 100;

/** Wires REST, GraphQL (HTTP and graphql-ws) and health checks onto one HTTP server; never listens. */
export const buildApp = (deps: Deps): App => {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // API answers are not cached by clients; hashing every body for an ETag is work for nothing.
  app.set('etag', false);
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('x-request-id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      // What a request line is read for (responseTime is added beside): no headers, which carry keys and
      // cookies and bury the rest, and no query string, which can carry phone numbers.
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.db.$queryRawUnsafe('SELECT 1');
      res.json({ ok: true });
    } catch (err) {
      deps.logger.warn({ err }, 'readiness check failed');
      res.status(503).json({ ok: false, error: { code: 'INTERNAL', message: 'Database unreachable' } });
    }
  });

  const metricsToken = deps.settings.METRICS_TOKEN;
  if (metricsToken !== undefined) {
    // Digests compared, so neither the token's length nor its bytes leak through timing.
    const digest = (text: string) => createHash('sha256').update(text).digest();
    const expected = digest(`Bearer ${metricsToken}`);
    app.get('/metrics', async (req, res, next) => {
      if (!timingSafeEqual(digest(req.header('authorization') ?? ''), expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        sendError(res, new DomainError('UNAUTHENTICATED', 'A valid metrics token is required (Authorization: Bearer <METRICS_TOKEN>)'));
        return;
      }
      try {
        const text = await deps.metrics.registry.metrics();
        res.type(deps.metrics.registry.contentType).send(text);
      } catch (err) {
        next(err);
      }
    });
  }

  app.use(docsRouter(deps.settings));
  app.use(dashboardRouter(deps.logger));
  const forwarder = deps.ownership.clustered
    ? createForwarder({
        ownership: deps.ownership,
        secret: deps.settings.CLUSTER_SECRET,
        logger: deps.logger,
        // A failover takes the lease's TTL at most (a paused owner); a killed one is replaced within seconds.
        patienceMs: Math.max(30_000, 3 * deps.settings.CLUSTER_LEASE_TTL_MS),
        retriable: { rest: honoursIdempotencyKey, mutations: idempotentMutations() },
        onForward: (outcome) => deps.metrics.forwarded.inc({ outcome }),
      })
    : undefined;
  app.use('/v1', restRouter(deps, forwarder?.rest, forwarder?.fromNode));

  const yoga = createGraphQL(deps);
  if (forwarder) {
    // The body is read here to find the operation's sessions; yoga takes the same bytes as its body.
    app.post(
      yoga.graphqlEndpoint,
      express.raw({ type: () => true, limit: deps.settings.GRAPHQL_BODY_LIMIT }),
      forwarder.graphql,
      // The body read here refuses what yoga would: in GraphQL's shape, as on a single node, not REST's.
      ((err, _req, res, next) => {
        if ((err as { type?: unknown } | null)?.type !== 'entity.too.large') return next(err);
        res.status(413).json({ errors: [{ message: 'The request body is too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
      }) satisfies ErrorRequestHandler,
    );
  }
  app.use(yoga.graphqlEndpoint, (req, res) => yoga(req, res));

  app.use(notFoundRoute);
  app.use(errorHandler(deps.logger));

  const server = createServer(app);
  const subscriptions = attachSubscriptions(server, yoga, deps);
  let closing = false;
  // A stopping node ends each connection after the answer it is giving: a keep-alive connection (another
  // node's forwarding hop sends a request every few hundred ms on one) would otherwise carry new requests
  // for as long as they come, and server.close() would wait for it.
  server.prependListener('request', (_req, res) => {
    if (closing && !res.headersSent) res.setHeader('Connection', 'close');
  });

  return {
    server,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // The connections busy when the close began (their answer under way) are idle once it is given.
      const idle = setInterval(() => server.closeIdleConnections(), IDLE_CHECK_MS);
      server.closeIdleConnections();
      try {
        await subscriptions.close();
        await forwarder?.close();
        await closed;
      } finally {
        clearInterval(idle);
      }
    },
  };
};
