import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ownership } from '../../src/runtime/ports/cluster.ts';
import { createForwarder } from '../../src/runtime/root/forward.ts';

const stop = (server: ReturnType<typeof createServer>) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

const listen = (server: ReturnType<typeof createServer>) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

/**
 * A node that stops while a send it forwarded is still at the session's owner (issue 46: a SIGTERM exited
 * 1 after the shutdown timeout). Its hop is cut when it closes; the owner is alive, so no other node takes
 * the session over, and waiting for one (the retry of a send whose owner died) would outlast the stop.
 */
describe('a forwarding node that stops', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('answers a retriable request whose hop its stop cut at once, with the key to retry it under, instead of waiting for a new owner', async () => {
    // The owner: takes the request and does not answer while the test runs (a busy or paused node).
    let arrived = () => {};
    const atOwner = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const owner = createServer(() => arrived());
    const ownerUrl = await listen(owner);
    closers.push(() => stop(owner));

    const ownership: Ownership = {
      nodeId: 'this-node',
      clustered: true,
      owns: () => false,
      owned: () => [],
      confirm: async () => false,
      fence: () => undefined,
      route: async () => ({ at: 'owner', address: ownerUrl, nodeId: 'owner-node' }),
      alive: async () => true,
      counts: { renewals: 0, losses: 0, handovers: 0 },
    };
    const forwarder = createForwarder({
      ownership,
      secret: 'cluster-secret',
      logger: pino({ level: 'silent' }),
      patienceMs: 60_000,
      retriable: { rest: () => true, mutations: new Set() },
    });
    const app = express();
    app.use(express.json());
    app.use('/v1', forwarder.rest, (_req, res) => void res.status(500).json({ served: 'here' }));
    const server = createServer(app);
    const url = await listen(server);
    closers.push(() => stop(server));

    const answer = fetch(`${url}/v1/sessions/0b9e6a0e-4c1e-4c4f-9d3c-2f3a9c1d5e71/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'client-key-1' },
      body: JSON.stringify({ to: '15550001111', message: 'hello' }),
    });
    await atOwner;
    await forwarder.close();
    const res = await answer;
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({
      ok: false,
      error: {
        code: 'SESSION_NOT_CONNECTED',
        message:
          'This node is stopping, and the request it sent on to the node that links this session was cut off; it may have been carried out, so retry it with the header Idempotency-Key: client-key-1',
      },
    });
  }, 15_000);
});
