import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { Connection } from 'rabbitmq-client';
import type { Publisher } from 'rabbitmq-client';

/** What a sink's publisher reads of its row. */
export interface SinkTarget {
  id: string;
  kind: string;
  url: string;
  exchange: string | null;
  stream: string | null;
  subjectPrefix: string | null;
}

/** One event as it is published: the webhook body, with the broker's own headers. */
export interface SinkMessage {
  eventId: string;
  accountId: string;
  sessionId: string | null;
  type: string;
  createdAt: Date;
  body: string;
}

/**
 * A sink's broker client. `publish` sends the messages in order and settles with each one's outcome
 * once the broker confirmed (or refused) it; `check` answers whether the exchange or stream exists.
 */
export interface BrokerClient {
  check(): Promise<void>;
  publish(messages: SinkMessage[]): Promise<Array<Error | null>>;
  close(): Promise<void>;
}

/** The routing key / subject tail: an event without a session (a campaign's progress) has `_` in its place. */
export const keyOf = (m: Pick<SinkMessage, 'accountId' | 'sessionId' | 'type'>): string => `${m.accountId}.${m.sessionId ?? '_'}.${m.type}`;

const PUBLISH_TIMEOUT_MS = 5_000;

/** An error's message with the URL's secrets taken out (a client may quote what it was given). */
export const scrubbed = (err: unknown, url: string): string => {
  let message = err instanceof Error ? err.message : String(err);
  if (URL.canParse(url)) {
    const { password, username } = new URL(url);
    for (const secret of [password, username, decodeURIComponent(password), decodeURIComponent(username)])
      if (secret.length >= 3) message = message.split(secret).join('****');
  }
  return message;
};

const settle = (sends: Array<Promise<unknown>>): Promise<Array<Error | null>> =>
  Promise.all(
    sends.map((p) =>
      p.then(
        () => null,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      ),
    ),
  );

/**
 * RabbitMQ through rabbitmq-client: one connection per sink (it reconnects by itself), a publisher
 * channel in confirm mode, persistent messages to the sink's exchange. The exchange is not declared:
 * it is the user's, with their bindings; a missing one fails the check and every publish (404).
 */
export const amqpClient = (sink: SinkTarget, onError: (message: string) => void): BrokerClient => {
  const exchange = sink.exchange ?? '';
  let lastConnectionError: string | null = null;
  const connection = new Connection({
    url: sink.url,
    connectionName: `wa-sink-${sink.id}`,
    connectionTimeout: 5_000,
    acquireTimeout: PUBLISH_TIMEOUT_MS,
    retryLow: 250,
    retryHigh: 5_000,
  });
  connection.on('error', (err: unknown) => {
    lastConnectionError = scrubbed(err, sink.url);
    onError(lastConnectionError);
  });
  connection.on('connection', () => {
    lastConnectionError = null;
  });
  let publisher: Publisher | null = null;
  // A channel acquisition that timed out says only that; the connection's own error says why.
  const explained = (err: Error): Error =>
    lastConnectionError && /timed out|aquisition|acquisition/i.test(err.message)
      ? new Error(`cannot connect: ${lastConnectionError}`)
      : new Error(scrubbed(err, sink.url));
  return {
    check: async () => {
      try {
        await connection.exchangeDeclare({ exchange, passive: true });
      } catch (err) {
        throw explained(err instanceof Error ? err : new Error(String(err)));
      }
    },
    publish: async (messages) => {
      publisher ??= connection.createPublisher({ confirm: true, maxAttempts: 1 });
      const p = publisher;
      const outcomes = await settle(
        messages.map((m) =>
          p.send(
            {
              exchange,
              routingKey: keyOf(m),
              durable: true,
              contentType: 'application/json',
              messageId: m.eventId,
              type: m.type,
              timestamp: Math.floor(m.createdAt.getTime() / 1000),
              headers: { 'event-time': m.createdAt.toISOString() },
            },
            Buffer.from(m.body),
          ),
        ),
      );
      return outcomes.map((e) => (e ? explained(e) : null));
    },
    close: async () => {
      await publisher?.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
};

/** nats://user:pass@host:port, nats://token@host:port (the user part alone is a token), tls:// for TLS. */
const natsOptions = (raw: string) => {
  const url = new URL(raw);
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return {
    servers: `${url.hostname}:${url.port || '4222'}`,
    ...(user && pass ? { user, pass } : user ? { token: user } : {}),
    ...(url.protocol === 'tls:' ? { tls: {} } : {}),
  };
};

/**
 * NATS JetStream through @nats-io/transport-node and @nats-io/jetstream: each publish is acknowledged by
 * the stream, with the event id as Nats-Msg-Id so the server drops a copy sent again within its
 * duplicate window. The stream is not created: it is the user's (subjects, retention, replicas).
 */
export const natsClient = (sink: SinkTarget, onError: (message: string) => void): BrokerClient => {
  const stream = sink.stream ?? '';
  const prefix = sink.subjectPrefix ?? '';
  let connecting: Promise<{ nc: NatsConnection; js: JetStreamClient }> | null = null;
  let closed = false;
  const connection = () => {
    connecting ??= (async () => {
      const nc = await connect({
        ...natsOptions(sink.url),
        name: `wa-sink-${sink.id}`,
        timeout: 5_000,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      });
      void (async () => {
        for await (const s of nc.status())
          if (s.type === 'error' || s.type === 'disconnect') onError(`${s.type}: ${scrubbed(s, sink.url)}`);
      })().catch(() => undefined);
      void nc.closed().then(() => {
        connecting = null;
      });
      if (closed) await nc.close();
      return { nc, js: jetstream(nc, { timeout: PUBLISH_TIMEOUT_MS }) };
    })();
    connecting.catch(() => {
      connecting = null;
    });
    return connecting;
  };
  const clear = (err: unknown): Error => new Error(scrubbed(err, sink.url));
  return {
    check: async () => {
      try {
        const { nc } = await connection();
        await (await jetstreamManager(nc, { timeout: PUBLISH_TIMEOUT_MS })).streams.info(stream);
      } catch (err) {
        throw clear(err);
      }
    },
    publish: async (messages) => {
      let js: JetStreamClient;
      try {
        ({ js } = await connection());
      } catch (err) {
        const error = clear(err);
        return messages.map(() => error);
      }
      const outcomes = await settle(
        messages.map((m) => {
          const h = headers();
          h.set('Content-Type', 'application/json');
          h.set('Event-Id', m.eventId);
          h.set('Event-Type', m.type);
          h.set('Event-Time', m.createdAt.toISOString());
          return js.publish(`${prefix}.${keyOf(m)}`, m.body, { msgID: m.eventId, headers: h, expect: { streamName: stream } });
        }),
      );
      return outcomes.map((e) => (e ? clear(e) : null));
    },
    close: async () => {
      closed = true;
      const pending = connecting;
      connecting = null;
      const open = await pending?.catch(() => null);
      await open?.nc.close().catch(() => undefined);
    },
  };
};

export const brokerClient = (sink: SinkTarget, onError: (message: string) => void): BrokerClient =>
  sink.kind === 'amqp' ? amqpClient(sink, onError) : natsClient(sink, onError);
