import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoggerOptions } from '../src/runtime/logger.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

/** Every line the service logs in this file's process, as JSON, at info and above. */
const logged = vi.hoisted(() => [] as Array<Record<string, unknown>>);
vi.mock('../src/runtime/logger.ts', async (original) => {
  const real = await original<typeof import('../src/runtime/logger.ts')>();
  const out: LoggerOptions['out'] = { write: (line: string) => logged.push(JSON.parse(line)) };
  return { ...real, createLogger: () => real.createLogger('info', { out, pretty: false }) };
});

describe.each(dbKinds)("a session's life in the log (%s)", (kind) => {
  let ctx: Linked;
  const call = (method: string, path: string) => http(ctx.app.baseUrl, method, path, { key: ctx.key });

  beforeAll(async () => {
    ctx = await startWithSandbox(kind);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('logs one info line when it connects (QR, pairing restart and all), disconnects, connects again and is deleted, and nothing else about it', async () => {
    const from = logged.length;
    // What the service says of the session itself, its request lines (pino-http's, with res) aside.
    const lines = () => logged.slice(from).filter((l) => l.res === undefined && JSON.stringify(l).includes(id));
    const said = () => lines().map((l) => [l.level, l.msg]);
    const id = await linkSession(ctx, '15557440001');
    await waitUntil(
      async () => said(),
      (s) => s.length >= 1,
    );
    expect(said()).toEqual([[30, 'session connected']]);

    expect((await call('POST', `/v1/sessions/${id}/disconnect`)).body.status).toBe('DISCONNECTED');
    expect(said().slice(1)).toEqual([[30, 'session disconnected']]);

    expect((await call('POST', `/v1/sessions/${id}/connect`)).status).toBe(200);
    await waitUntil(
      async () => said(),
      (s) => s.length >= 3,
    );
    expect(said().slice(2)).toEqual([[30, 'session connected']]);

    expect((await call('DELETE', `/v1/sessions/${id}`)).body).toEqual({ ok: true });
    expect(said()).toEqual([
      [30, 'session connected'],
      [30, 'session disconnected'],
      [30, 'session connected'],
      [30, 'session deleted'],
    ]);
    expect(lines().every((l) => l.sessionId === id)).toBe(true);
  });
});
