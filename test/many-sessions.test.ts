import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox } from './helpers/sandbox.ts';

const COUNT = 50;

describe('one service process with many sessions', () => {
  let ctx: Linked;
  beforeAll(async () => {
    ctx = await startWithSandbox();
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it(`links ${COUNT} sessions to ${COUNT} virtual phones, and each can send`, async () => {
    const numbers = Array.from({ length: COUNT }, (_, i) => `1556000${String(i).padStart(4, '0')}`);
    const ids: string[] = [];
    for (let i = 0; i < numbers.length; i += 10) {
      ids.push(...(await Promise.all(numbers.slice(i, i + 10).map((n, k) => linkSession(ctx, n, `s${i + k}`)))));
    }
    const list = await http(ctx.app.baseUrl, 'GET', '/v1/sessions', { key: ctx.key });
    expect(list.body.filter((s: { status: string }) => s.status === 'CONNECTED')).toHaveLength(COUNT);
    expect(new Set(list.body.map((s: { phone: string }) => s.phone)).size).toBe(COUNT);
    ctx.sandbox.control.addPhone('15560009999');
    await Promise.all(
      ids.map((id, i) =>
        http(ctx.app.baseUrl, 'POST', `/v1/sessions/${id}/send`, { key: ctx.key, body: { to: '15560009999', message: `hello from ${i}` } }),
      ),
    );
    const until = Date.now() + 20_000;
    while (ctx.sandbox.control.inbox('15560009999').length < COUNT && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(new Set(ctx.sandbox.control.inbox('15560009999').map((e) => e.content)).size).toBe(COUNT);
  }, 120_000);
});
