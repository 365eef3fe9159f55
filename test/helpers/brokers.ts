import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerMessages } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { Connection } from 'rabbitmq-client';
import type { AsyncMessage, Consumer } from 'rabbitmq-client';

export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** What a consumer got of one message, the same for both brokers. */
export interface Consumed {
  /** the routing key, or the subject */
  key: string;
  eventId: string;
  type: string;
  contentType: string | undefined;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  /** AMQP: the message's properties; NATS: its headers */
  meta: Record<string, unknown>;
  /** when the consumer got it (performance.timeOrigin + performance.now(), ms) */
  receivedAt: number;
}

const clock = () => performance.timeOrigin + performance.now();

/**
 * A durable topic exchange of the test's own, a queue bound to all of it and a consumer on the queue
 * (the machine's RabbitMQ is shared: names are unique and deleted at the end).
 */
export const amqpConsumer = async (options: { consume?: boolean; queueArgs?: Record<string, unknown> } = {}) => {
  const exchange = unique('wa-test-x');
  const queue = unique('wa-test-q');
  const rabbit = new Connection(AMQP_URL);
  rabbit.on('error', () => undefined);
  await rabbit.exchangeDeclare({ exchange, type: 'topic', durable: true });
  await rabbit.queueDeclare({ queue, durable: true, arguments: options.queueArgs });
  await rabbit.queueBind({ queue, exchange, routingKey: '#' });
  const received: Consumed[] = [];
  let consumer: Consumer | null = null;
  const start = () => {
    consumer = rabbit.createConsumer(
      { queue, queueOptions: { durable: true, arguments: options.queueArgs }, qos: { prefetchCount: 500 } },
      (msg: AsyncMessage) => {
        received.push({
          receivedAt: clock(),
          key: msg.routingKey,
          eventId: String(msg.messageId),
          type: String(msg.type),
          contentType: msg.contentType,
          body: JSON.parse(Buffer.isBuffer(msg.body) ? msg.body.toString('utf8') : JSON.stringify(msg.body)),
          meta: {
            messageId: msg.messageId,
            type: msg.type,
            timestamp: msg.timestamp,
            contentType: msg.contentType,
            durable: msg.durable,
            headers: msg.headers,
          },
        });
      },
    );
  };
  if (options.consume !== false) start();
  return {
    exchange,
    queue,
    received,
    start,
    depth: async () => (await rabbit.queueDeclare({ queue, passive: true })).messageCount,
    purge: () => rabbit.queuePurge({ queue }),
    close: async () => {
      await (consumer as Consumer | null)?.close();
      await rabbit.queueDelete({ queue }).catch(() => undefined);
      await rabbit.exchangeDelete({ exchange }).catch(() => undefined);
      await rabbit.close();
    },
  };
};

/** A stream of the test's own over `<prefix>.>`, and an ordered consumer reading it from the start. */
export const natsConsumer = async (url = NATS_URL, options: { consume?: boolean } = {}) => {
  const stream = unique('WA_TEST').replace(/-/g, '_');
  const prefix = stream.toLowerCase();
  const nc: NatsConnection = await connect({ servers: url.replace(/^nats:\/\//, ''), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], duplicate_window: 120_000_000_000 });
  const received: Consumed[] = [];
  let messages: ConsumerMessages | null = null;
  const start = async () => {
    const consumer = await jetstream(nc).consumers.get(stream);
    messages = await consumer.consume();
    void (async () => {
      for await (const m of messages as ConsumerMessages) {
        const headers: Record<string, string> = {};
        for (const [k] of m.headers ?? []) headers[k] = m.headers?.get(k) ?? '';
        received.push({
          receivedAt: clock(),
          key: m.subject,
          eventId: headers['Nats-Msg-Id'],
          type: headers['Event-Type'],
          contentType: headers['Content-Type'],
          body: m.json(),
          meta: headers,
        });
      }
    })();
  };
  if (options.consume !== false) await start();
  return {
    start,
    stream,
    prefix,
    received,
    /** messages the stream holds */
    stored: async () => (await jsm.streams.info(stream)).state.messages,
    close: async () => {
      (messages as ConsumerMessages | null)?.stop();
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
};

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/** A nats-server -js of the test's own on a free loopback port, its store in a temporary folder, restartable. */
export const privateNats = async () => {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wa-nats-'));
  let child: ChildProcess | null = null;
  const up = async () => {
    child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}`).then(
        () => true,
        (err: { cause?: { code?: string } }) => err.cause?.code !== 'ECONNREFUSED',
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('nats-server did not start');
  };
  const down = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once('exit', r));
    running.kill('SIGTERM');
    await exited;
  };
  await up();
  return {
    url: `nats://127.0.0.1:${port}`,
    restart: async (downMs: number) => {
      await down();
      await new Promise((r) => setTimeout(r, downMs));
      await up();
    },
    close: async () => {
      await down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const run = promisify(execFile);

/**
 * The broker's ids of the AMQP connections whose client named them `name` (rabbitmq-client's
 * connectionName), read with rabbitmqctl (the machine's RabbitMQ; the management plugin is off).
 */
export const amqpConnectionPids = async (name: string): Promise<string[]> => {
  const { stdout } = await run('rabbitmqctl', ['-s', 'list_connections', 'pid', 'client_properties'], { timeout: 60_000 });
  return stdout
    .split('\n')
    .filter((line) => line.includes(`"${name}"`))
    .map((line) => line.split('\t')[0].trim());
};

/**
 * Closes those connections on the broker's side, as a broker restart does to its clients: the
 * machine's RabbitMQ is shared with other processes, so it is not restarted itself.
 */
export const closeAmqpConnections = async (pids: string[]): Promise<void> => {
  for (const pid of pids) await run('rabbitmqctl', ['-q', 'close_connection', pid, 'test: broker restart'], { timeout: 60_000 });
};
