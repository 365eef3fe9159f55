import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557720001';
const BOB = '15557720002';
const TEXTS = 40;
const IN_FLIGHT = 8;

// Baileys issues the session's privacy token to a contact after a 1:1 send, once per token period
// (patches/: concurrent sends used to issue it again, about one text in six at 8 in flight).
describe('sustained sends to one contact', () => {
  let ctx: Linked;
  let sessionId: string;

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite');
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('issue one privacy token, and every delivery receipt that arrives sets deliveredAt', async () => {
    ctx.sandbox.control.setTrace(true);
    let next = 0;
    const ids: string[] = [];
    const worker = async () => {
      while (next < TEXTS) {
        const i = next++;
        const res = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/send`, {
          key: ctx.key,
          body: { to: BOB, message: `text ${i}` },
        });
        expect(res.status).toBe(200);
        ids.push(res.body.id);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const delivered = await waitUntil(
      () => ctx.app.db.outgoingMessage.count({ where: { id: { in: ids }, deliveredAt: { not: null } } }),
      (n) => n === TEXTS,
    );
    expect(delivered).toBe(TEXTS);
    const trace = ctx.sandbox.control.trace();
    expect(ctx.sandbox.control.inbox(BOB)).toHaveLength(TEXTS);
    expect(trace.filter((t) => t.direction === 'out' && t.stanza.startsWith('<receipt') && !t.stanza.includes('type='))).toHaveLength(
      TEXTS,
    );
    expect(trace.filter((t) => t.direction === 'in' && t.stanza.includes("xmlns='privacy'") && t.stanza.includes('<tokens'))).toHaveLength(
      1,
    );
  });
});
