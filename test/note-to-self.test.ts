import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkThroughQr, startWithSandbox } from './helpers/sandbox.ts';

const SHARED = '15557890001';
const FRIEND = '15557890009';

describe('a note to self, then a message to someone else', () => {
  let ctx: Linked;
  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite');
    ctx.sandbox.control.addPhone(SHARED);
    ctx.sandbox.control.addPhone(FRIEND);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it("reaches the account's other linked device once each, not once per time the account's own devices were listed", async () => {
    const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
    const a = await linkThroughQr(ctx.app.baseUrl, ctx.key, ctx.sandbox, SHARED, 'a');
    const b = await linkThroughQr(ctx.app.baseUrl, ctx.key, ctx.sandbox, SHARED, 'b');
    expect((await call('POST', `/v1/sessions/${a}/send`, { to: SHARED, message: 'note to self' })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await call('POST', `/v1/sessions/${a}/send`, { to: FRIEND, message: `after ${i}` })).status).toBe(200);

    const seen: string[] = [];
    const until = Date.now() + 15_000;
    while (Date.now() < until && seen.filter((t) => t.startsWith('after ')).length < 3) {
      const res = await call('GET', `/v1/sessions/${b}/incoming?waitMs=1000&limit=200`);
      seen.push(...(res.body.items as Json[]).map((item) => String(item.content)));
    }
    // Copies that arrive twice come close together: a moment more for a second one.
    const res = await call('GET', `/v1/sessions/${b}/incoming?waitMs=1000&limit=200`);
    seen.push(...(res.body.items as Json[]).map((item) => String(item.content)));
    expect(seen.filter((t) => t.startsWith('after ')).sort()).toEqual(['after 0', 'after 1', 'after 2']);
    expect(seen.filter((t) => t === 'note to self')).toEqual(['note to self']);
    expect(ctx.sandbox.control.inbox(FRIEND).map((e) => e.content)).toEqual(['after 0', 'after 1', 'after 2']);
  });
});
