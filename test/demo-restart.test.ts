import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const ME = '15557770001';
const FRIEND = '15557770002';

/** The service's pino lines (JSON), without the plain lines it prints for people. */
const logLines = (output: string): Json[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

const controlUrlOf = (service: ServiceProcess): string => {
  const match = /control API at (http:\/\/[^\s]+)/.exec(service.output());
  if (!match?.[1]) throw new Error(`no control URL in the output:\n${service.output()}`);
  return match[1];
};

describe('npm run demo (the service with its embedded sandbox), restarted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-restart-'));
  let service: ServiceProcess | undefined;
  const env = () => ({
    SANDBOX_EMBEDDED: 'true',
    SANDBOX_CONTROL_PORT: '0',
    DATABASE_URL: `file:${join(dir, 'app.db')}`,
    BOOTSTRAP_EMAIL: 'demo@example.com',
    BOOTSTRAP_API_KEY: KEY,
  });
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, `/v1${path}`, { key: KEY, body });
  const control = (method: string, path: string, body?: unknown) => http(controlUrlOf(service as ServiceProcess), method, path, { body });
  const inboxOf = async (number: string): Promise<string[]> =>
    ((await control('GET', `/phones/${number}/inbox`)).body as Json[]).map((m) => m.content);

  afterAll(async () => {
    await service?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the sandbox phones beside the database, so the session re-links without a QR and messages flow both ways', async () => {
    service = await spawnService(env());
    // The account was made from BOOTSTRAP_API_KEY on this start: its key is known, so none is offered.
    expect(service.output()).not.toContain('No API key printed');
    expect((await control('POST', '/phones', { number: ME, name: 'Me' })).status).toBe(201);
    expect((await control('POST', '/phones', { number: FRIEND, name: 'Friend' })).status).toBe(201);
    const { body: session } = await call('POST', '/sessions', { name: 'demo' });
    await call('POST', `/sessions/${session.id}/connect`);
    const qr = await call('GET', `/sessions/${session.id}/qrcode?waitMs=20000`);
    expect(qr.body.hasQrCode).toBe(true);
    expect((await control('POST', `/phones/${ME}/scan`, { qrCode: qr.body.qrCode })).status).toBe(200);
    expect((await call('GET', `/sessions/${session.id}/status?waitFor=CONNECTED&waitMs=20000`)).body.status).toBe('CONNECTED');
    expect((await call('POST', `/sessions/${session.id}/send`, { to: FRIEND, message: 'before the restart' })).status).toBe(200);
    await waitUntil(
      () => inboxOf(FRIEND),
      (inbox) => inbox.includes('before the restart'),
    );

    // Linking (with its 515 restart after pairing) and sending are normal operation: nothing at warn or above.
    const lines = logLines(service.output());
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    const requests = lines.filter((l) => l.msg === 'request completed');
    expect(requests.length).toBeGreaterThan(0);
    for (const line of requests) {
      expect(Object.keys(line.req).sort()).toEqual(['id', 'method', 'path']);
      expect(line.res).toEqual({ statusCode: expect.any(Number) });
      expect(line.responseTime).toBeTypeOf('number');
    }
    expect(requests).toContainEqual(expect.objectContaining({ req: expect.objectContaining({ method: 'POST', path: '/v1/sessions' }) }));

    expect(await service.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dir, 'sandbox.json'))).toBe(true);
    service = await spawnService(env());

    const back = await waitUntil(
      () => call('GET', `/sessions/${session.id}/status`),
      (r) => r.body.status === 'CONNECTED' || r.body.status === 'QR_READY' || r.body.status === 'DISCONNECTED',
      30_000,
    );
    expect(back.body).toMatchObject({ status: 'CONNECTED', phone: `${ME}@s.whatsapp.net`, qrCode: null, lastError: null });
    const phones = (await control('GET', '/phones')).body as Json[];
    expect(phones.find((p) => p.number === ME)?.devices).toEqual([1]);

    expect((await call('POST', `/sessions/${session.id}/send`, { to: FRIEND, message: 'after the restart' })).status).toBe(200);
    await waitUntil(
      () => inboxOf(FRIEND),
      (inbox) => inbox.includes('after the restart'),
    );
    expect((await control('POST', `/phones/${FRIEND}/send`, { to: ME, text: 'hi back after the restart' })).status).toBe(200);
    const incoming = await call('GET', `/sessions/${session.id}/incoming?waitMs=15000`);
    expect(incoming.body.items.map((m: Json) => m.content)).toEqual(['hi back after the restart']);
  }, 120_000);

  it('says at its next start how to get a key for the account that exists, and takes a webhook on this machine', async () => {
    const output = (service as ServiceProcess).output();
    expect(output).toContain('No API key printed: accounts exist already (demo@example.com)');
    expect(output).toContain('npm run account -- create --email you@example.com');
    expect(output).toContain('npm run account -- rotate --email demo@example.com');
    expect(output).toContain(
      "Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true, the demo's default).",
    );
    const hook = await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['message.received'] });
    expect(hook.status).toBe(201);
  });
});
