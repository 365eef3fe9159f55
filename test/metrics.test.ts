import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestApp } from './helpers/app.ts';
import type { TestApp } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const ME = '15558880001';
const FRIEND = '15558880002';

/** One sample's value from the Prometheus text format, 0 when the series is absent. */
const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('GET /metrics (Prometheus)', () => {
  let ctx: Linked;
  let plain: TestApp;
  const scrape = async (token = TOKEN) =>
    http<string>(ctx.app.baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    // The links in a network process, so that its own memory series is there too.
    ctx = await startWithSandbox('sqlite', {
      METRICS_TOKEN: TOKEN,
      WEBHOOK_ALLOW_PRIVATE: true,
      WEBHOOK_RETRY_BASE_MS: 50,
      NETWORK_MODE: 'process',
    });
    plain = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
    await plain?.close();
  });

  it('is not served without METRICS_TOKEN, and wants the token when it is set', async () => {
    expect((await http(plain.baseUrl, 'GET', '/metrics')).status).toBe(404);
    const none = await http(ctx.app.baseUrl, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      ok: false,
      error: { code: 'UNAUTHENTICATED', message: 'A valid metrics token is required (Authorization: Bearer <METRICS_TOKEN>)' },
    });
    expect((await scrape(`${TOKEN}x`)).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // The process figures: event-loop lag and the main thread's heap.
    expect(ok.body).toMatch(/^wa_nodejs_eventloop_lag_seconds \d/m);
    expect(ok.body).toMatch(/^wa_nodejs_heap_size_used_bytes \d/m);
    // V8's heap by space, and the ArrayBuffers and Buffers within external memory (the memory benchmark reads them).
    expect(ok.body).toMatch(/^wa_nodejs_heap_space_size_used_bytes\{space="new"\} \d/m);
    expect(ok.body).toMatch(/^wa_nodejs_array_buffers_bytes [1-9]\d*$/m);
  });

  it('counts sessions by status, sends by kind and outcome with their latency, scheduled jobs, incoming messages and the network thread heap', async () => {
    const before = (await scrape()).body;
    const id = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(FRIEND);
    const { body: idle } = await http(ctx.app.baseUrl, 'POST', '/v1/sessions', { key: ctx.key, body: { name: 'idle' } });
    expect(
      (await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${id}/send`, { key: ctx.key, body: { to: FRIEND, message: 'counted' } })).status,
    ).toBe(200);
    expect(
      (
        await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${id}/messages/schedule`, {
          key: ctx.key,
          body: { to: FRIEND, message: 'due soon', delayMs: 200 },
        })
      ).status,
    ).toBe(200);
    await waitUntil(
      () => http(ctx.app.baseUrl, 'GET', `/v1/sessions/${id}/messages?status=SENT`, { key: ctx.key }),
      (r) => r.body.count === 2,
    );
    expect(
      (await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${idle.id}/send`, { key: ctx.key, body: { to: FRIEND, message: 'not sent' } }))
        .status,
    ).toBe(409);
    await ctx.sandbox.control.sendText(FRIEND, ME, 'counted too');
    await waitUntil(
      () => http(ctx.app.baseUrl, 'GET', `/v1/sessions/${id}/incoming?consume=false`, { key: ctx.key }),
      (r) => r.body.count === 1,
    );

    const after = (await scrape()).body;
    expect(sample(after, 'wa_sessions{status="CONNECTED"}')).toBe(1);
    expect(sample(after, 'wa_sessions{status="DISCONNECTED"}')).toBe(1);
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('wa_sends_total{kind="text",outcome="sent"}')).toBe(2);
    expect(delta('wa_scheduled_jobs_due_total{kind="message"}')).toBe(1);
    expect(delta('wa_scheduled_job_lateness_seconds_count{kind="message"}')).toBe(1);
    expect(delta('wa_sends_total{kind="text",outcome="not_connected"}')).toBe(1);
    expect(delta('wa_send_duration_seconds_count{kind="text"}')).toBe(2);
    expect(delta('wa_incoming_messages_total')).toBe(1);
    expect(sample(after, 'wa_incoming_buffer_drops_total')).toBe(0);
    expect(sample(after, 'wa_network_thread_heap_used_bytes')).toBeGreaterThan(1_000_000);
    // The network process's memory is not in the service's own.
    expect(sample(after, 'wa_network_process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
  });

  it("counts webhook attempts by outcome, with the receivers' answer time", async () => {
    let answer = 500;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      const before = (await scrape()).body;
      const created = await http(ctx.app.baseUrl, 'POST', '/v1/webhooks', {
        key: ctx.key,
        body: { url: `http://127.0.0.1:${port}/hook`, events: ['*'] },
      });
      expect(created.status).toBe(201);
      await http(ctx.app.baseUrl, 'POST', `/v1/webhooks/${created.body.id}/test`, { key: ctx.key });
      await waitUntil(
        scrape,
        (r) =>
          sample(r.body, 'wa_webhook_attempts_total{outcome="failed"}') > sample(before, 'wa_webhook_attempts_total{outcome="failed"}'),
      );
      answer = 204;
      const after = await waitUntil(
        scrape,
        (r) =>
          sample(r.body, 'wa_webhook_attempts_total{outcome="delivered"}') >
          sample(before, 'wa_webhook_attempts_total{outcome="delivered"}'),
      );
      expect(sample(after.body, 'wa_webhook_attempt_duration_seconds_count')).toBeGreaterThanOrEqual(2);
      await http(ctx.app.baseUrl, 'DELETE', `/v1/webhooks/${created.body.id}`, { key: ctx.key });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
