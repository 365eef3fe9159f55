import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from '../../src/runtime/webhooks/attempt.ts';
import { failureOf, payloadOf, post, retryDelay, signerOf } from '../../src/runtime/webhooks/attempt.ts';

const DAY = 24 * 60 * 60 * 1000;
const at = new Date('2026-11-25T12:00:00.000Z');
const ago = (ms: number) => new Date(at.getTime() - ms);
const answer = (statusCode: number | null, error: string | null = null): Answer => ({ statusCode, excerpt: null, error, latencyMs: 3 });
const failure = (a: Answer, eventAge: number, failingFor: number | null) =>
  failureOf({
    answer: a,
    attempts: 2,
    at,
    eventCreatedAt: ago(eventAge),
    failingSince: failingFor === null ? null : ago(failingFor),
    retryForMs: 3 * DAY,
    retryBaseMs: 1_000,
    retryMaxMs: 60_000,
  });

describe('a webhook attempt', () => {
  it('backs off exponentially with jitter up to the ceiling', () => {
    expect(retryDelay(1, 1_000, 60_000, () => 0)).toBe(500);
    expect(retryDelay(1, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(retryDelay(4, 1_000, 60_000, () => 1)).toBe(8_000);
    expect(retryDelay(40, 1_000, 60_000, () => 1)).toBe(60_000);
  });

  it('sends the stored data as it is, inside the Standard Webhooks payload', () => {
    const body = payloadOf({ type: 'message.received', data: '{"content":"a \\"quoted\\" 👋"}', createdAt: at });
    expect(JSON.parse(body)).toEqual({ type: 'message.received', timestamp: at.toISOString(), data: { content: 'a "quoted" 👋' } });
  });

  it('signs with the same bytes as the standardwebhooks package', () => {
    const secrets = [
      `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      `whsec_${Buffer.from('a shorter secret!!!!!!!!').toString('base64')}`,
    ];
    const bodies = ['{}', payloadOf({ type: 'message.sent', data: '{"content":"a \\"quoted\\" 👋 ünïcødé"}', createdAt: at })];
    for (const secret of secrets)
      for (const body of bodies)
        for (const sentAt of [at, new Date(at.getTime() + 999), new Date(at.getTime() + 1_000)]) {
          expect(signerOf(secret)('msg_0abc', sentAt, body)).toBe(new Webhook(secret).sign('msg_0abc', sentAt, body));
        }
  });

  it('retries a failure later, starting the endpoint failing now', () => {
    const { delivery, disabledReason, failingSince } = failure(answer(503), 1_000, null);
    expect(delivery).toMatchObject({ status: 'PENDING', lastError: 'HTTP 503' });
    expect((delivery.nextAttemptAt?.getTime() ?? 0) - at.getTime()).toBeGreaterThanOrEqual(1_000);
    expect((delivery.nextAttemptAt?.getTime() ?? 0) - at.getTime()).toBeLessThanOrEqual(2_000);
    expect(disabledReason).toBeNull();
    expect(failingSince).toEqual(at);
  });

  it('gives up on 410 Gone and disables the endpoint, whatever the age', () => {
    const { delivery, disabledReason } = failure(answer(410), 1_000, null);
    expect(delivery).toEqual({ status: 'FAILED', lastError: 'the endpoint answered 410 Gone' });
    expect(disabledReason).toBe(`The endpoint answered 410 Gone at ${at.toISOString()}`);
  });

  it('gives up on an event retried for 3 days, without disabling an endpoint that did not fail that long', () => {
    const { delivery, disabledReason } = failure(answer(null, 'connect ECONNREFUSED'), 3 * DAY, DAY);
    expect(delivery).toEqual({ status: 'FAILED', lastError: `gave up after retrying for ${3 * DAY} ms (last: connect ECONNREFUSED)` });
    expect(disabledReason).toBeNull();
  });

  it('disables an endpoint whose deliveries all failed for 3 days, with the reason', () => {
    const { delivery, disabledReason, failingSince } = failure(answer(500), 1_000, 3 * DAY);
    expect(delivery).toEqual({ status: 'FAILED', lastError: 'HTTP 500' });
    expect(failingSince).toEqual(ago(3 * DAY));
    expect(disabledReason).toBe(`Every delivery failed from ${ago(3 * DAY).toISOString()} to ${at.toISOString()} (last: HTTP 500)`);
  });
});

describe('a webhook POST', () => {
  // /drip answers its headers at once and then a byte every 50 ms, never ending; /stream streams
  // without end as fast as it can; /emoji answers 600 emoji; /silent never answers.
  let drips = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/drip') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => {
          drips += 1;
          res.write('.');
        }, 50);
        res.on('close', () => clearInterval(timer));
      } else if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const more = () => {
          while (!res.destroyed && res.write('x'.repeat(16_384)));
        };
        res.on('drain', more);
        more();
      } else if (req.url === '/silent') {
        // never answers
      } else res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('👋'.repeat(600));
    });
  });
  let base = '';
  const agent = new Agent();
  const send = (path: string, timeoutMs: number) =>
    post(agent, `${base}${path}`, { id: 'msg_1', sentAt: new Date(), signature: 'v1,x' }, '{}', timeoutMs);
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('gives up on an answer whose body is still coming when the time is out', async () => {
    const answer = await send('/drip', 400);
    expect(answer).toMatchObject({ statusCode: null, excerpt: null, error: 'no answer within 400 ms' });
    expect(drips).toBeGreaterThan(2);
  });

  it('gives up on a receiver that does not answer when the time is out', async () => {
    const answer = await send('/silent', 300);
    expect(answer).toMatchObject({ statusCode: null, excerpt: null, error: 'no answer within 300 ms' });
  });

  it('reads no more of an endless body than its excerpt needs', async () => {
    const answer = await send('/stream', 5_000);
    expect(answer).toMatchObject({ statusCode: 200, error: null, excerpt: 'x'.repeat(500) });
  });

  it('keeps the first 500 characters of the answer as its excerpt', async () => {
    const answer = await send('/emoji', 5_000);
    expect(answer).toMatchObject({ statusCode: 200, error: null, excerpt: '👋'.repeat(600).slice(0, 500) });
  });
});
