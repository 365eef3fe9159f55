import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { HttpResult, Json } from './app.ts';
import { http } from './app.ts';
import type { ServiceProcess } from './process.ts';
import type { Receiver } from './receiver.ts';

/** What a cluster test's nodes share: the sandbox with the test's phones, one PostgreSQL database and a client of it. */
export interface ClusterGround {
  sandbox: Sandbox;
  database: TestDatabase;
  db: Db;
}

export const startClusterGround = async (phones: string[]): Promise<ClusterGround> => {
  const sandbox = await startSandbox();
  const database = await createTestDatabase('postgres');
  const db = createPrisma(database.url);
  for (const n of phones) sandbox.control.addPhone(n);
  return { sandbox, database, db };
};

/** Stops a cluster test's nodes (stopNodes), then its receiver and what startClusterGround started: each only when it was. */
export const stopCluster = async (
  cluster: Partial<ClusterGround> & { nodes: ServiceProcess[]; paused?: Set<ServiceProcess>; receiver?: Receiver },
): Promise<void> => {
  await stopNodes(cluster.nodes, cluster.paused);
  await cluster.receiver?.close();
  await cluster.db?.$disconnect();
  await cluster.sandbox?.close();
  await cluster.database?.drop();
};

/** What every node of a test cluster is started with: one PostgreSQL database, one sandbox, Redis, one secret. */
export const clusterEnv = (options: {
  databaseUrl: string;
  sandboxUrl: string;
  key: string;
  secret: string;
  /** shorter than the default 10 s keeps the tests quick; long enough that a node starved of CPU does not fence itself */
  leaseTtlMs?: number;
}): Record<string, string> => ({
  DATABASE_URL: options.databaseUrl,
  WA_SANDBOX_URL: options.sandboxUrl,
  BOOTSTRAP_EMAIL: 'ops@example.com',
  BOOTSTRAP_API_KEY: options.key,
  REDIS_URL: 'redis://127.0.0.1:6379',
  CLUSTER_SECRET: options.secret,
  CLUSTER_LEASE_TTL_MS: String(options.leaseTtlMs ?? 6_000),
});

/**
 * A request as a client of several nodes makes it: a 409 with Retry-After (the session is moving between
 * nodes, nothing was done) is tried again after the wait it asks for, up to `attempts` times.
 */
export const callAsClient = async (
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  attempts = 20,
): Promise<HttpResult<Json>> => {
  for (let attempt = 0; ; attempt++) {
    const res = await http(baseUrl, method, path, { key, body });
    const wait = res.headers.get('retry-after');
    if (res.status !== 409 || !wait || attempt >= attempts) return res;
    await new Promise((r) => setTimeout(r, Number(wait) * 1000));
  }
};

/** The node whose lease holds the session, as the database says. */
export const ownerOf = async (db: Db, nodes: ServiceProcess[], sessionId: string): Promise<ServiceProcess | undefined> => {
  const lease = await db.sessionLease.findUnique({ where: { sessionId } });
  const node = lease ? await db.clusterNode.findUnique({ where: { id: lease.nodeId } }) : null;
  return nodes.find((n) => n.baseUrl === node?.address);
};

/** The nodes still running: not exited, not killed, and not among those the test paused. */
export const liveNodes = (nodes: ServiceProcess[], paused: Set<ServiceProcess> = new Set()): ServiceProcess[] =>
  nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null && !paused.has(n));

/**
 * Ends every node of a test (a paused one is woken first, so that it can be killed), after printing what
 * each logged about ownership when CLUSTER_DEBUG is set.
 */
export const stopNodes = async (nodes: ServiceProcess[], paused: Set<ServiceProcess> = new Set()): Promise<void> => {
  if (process.env.CLUSTER_DEBUG)
    for (const [i, node] of nodes.entries())
      console.log(
        `--- node ${i}\n`,
        node
          .output()
          .split('\n')
          .filter((l) => /claimed|lost|handing|fenced|refused|"level":(40|50)|joined|"err"|link dropped|link ended/.test(l))
          .join('\n'),
      );
  for (const node of nodes) {
    if (paused.has(node)) node.child.kill('SIGCONT');
    await node.stop('SIGKILL');
  }
};
