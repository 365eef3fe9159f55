import { describe, expect, it } from 'vitest';
import { IncomingBuffer } from '../../src/runtime/incoming-buffer.ts';
import type { IncomingInput } from '../../src/runtime/ports/incoming.ts';

const msg = (content: string): IncomingInput => ({
  chatId: '15550001111@s.whatsapp.net',
  chatLid: null,
  from: '15550001111@s.whatsapp.net',
  fromLid: null,
  fromMe: false,
  type: 'text',
  content,
  waMessageId: `3EB0${content}`,
  pushName: 'Alice',
  messageTimestamp: 1_700_000_000,
});

describe('incoming buffer', () => {
  it('keeps items oldest first with growing event ids, per session', () => {
    const buffer = new IncomingBuffer(10);
    buffer.push('a', msg('one'));
    buffer.push('b', msg('other session'));
    buffer.push('a', msg('two'));
    const items = buffer.read('a', 50, false);
    expect(items.map((i) => i.content)).toEqual(['one', 'two']);
    expect(items[0]?.eventId).toBeLessThan(items[1]?.eventId ?? 0);
    expect(items[0]).toMatchObject({ sessionId: 'a', receivedAt: expect.stringMatching(/Z$/) });
  });

  it('consume removes exactly the items returned, never the unreturned ones', () => {
    const buffer = new IncomingBuffer(10);
    for (const c of ['1', '2', '3']) buffer.push('a', msg(c));
    expect(buffer.read('a', 2, true).map((i) => i.content)).toEqual(['1', '2']);
    expect(buffer.read('a', 50, false).map((i) => i.content)).toEqual(['3']);
  });

  it('drops the oldest items past its bound and counts them', () => {
    const buffer = new IncomingBuffer(2);
    for (const c of ['1', '2', '3']) buffer.push('a', msg(c));
    expect(buffer.read('a', 50, false).map((i) => i.content)).toEqual(['2', '3']);
    expect(buffer.dropped('a')).toBe(1);
  });

  it('reports drops at 1, 10, 100... per session, so a flood is logged a few times, not per message', () => {
    const reports: Array<[string, number]> = [];
    const buffer = new IncomingBuffer(2, undefined, undefined, (sessionId, dropped) => reports.push([sessionId, dropped]));
    for (let i = 0; i < 125; i++) buffer.push('a', msg(String(i)));
    buffer.push('b', msg('x'));
    expect(reports).toEqual([
      ['a', 1],
      ['a', 10],
      ['a', 100],
    ]);
    expect(buffer.dropped('a')).toBe(123);
  });

  it('wakes every waiter as soon as an item arrives', async () => {
    const buffer = new IncomingBuffer(10);
    const waits = [buffer.waitForItem('a', 10_000), buffer.waitForItem('a', 10_000)];
    const started = Date.now();
    setTimeout(() => buffer.push('a', msg('hello')), 20);
    await Promise.all(waits);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(buffer.size('a')).toBe(1);
  });

  it('wakes every waiter at shutdown', async () => {
    const buffer = new IncomingBuffer(10);
    const waits = [buffer.waitForItem('a', 60_000), buffer.waitForItem('b', 60_000)];
    buffer.wakeAll();
    await Promise.all(waits);
    expect(buffer.size('a') + buffer.size('b')).toBe(0);
  });

  it('stops waiting when the caller goes away', async () => {
    const buffer = new IncomingBuffer(10);
    const gone = new AbortController();
    const wait = buffer.waitForItem('a', 10_000, gone.signal);
    gone.abort();
    await wait;
    expect(buffer.size('a')).toBe(0);
  });
});
