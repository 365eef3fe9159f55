import { readQrImage } from '../../src/runtime/sandbox/qr-image.ts';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { DbKind, TestApp } from './app.ts';
import { http, startTestApp } from './app.ts';
import { callAsClient } from './cluster.ts';

export interface Linked {
  app: TestApp;
  sandbox: Sandbox;
  key: string;
}

export const startWithSandbox = async (
  kind: DbKind = 'sqlite',
  overrides: Parameters<typeof startTestApp>[1] = {},
  /** how long a dropped link waits before it links again (short unless a test needs to see the wait) */
  backoff: { backoffBaseMs: number; backoffMaxMs: number } = { backoffBaseMs: 100, backoffMaxMs: 1_000 },
): Promise<Linked> => {
  const sandbox = await startSandbox();
  const app = await startTestApp(kind, overrides, {
    target: { sandbox: sandboxAddress(sandbox) },
    // Test files are served by msw from made-up hosts; name them public so the media guard lets them through.
    resolveHost: async (host) => (host.endsWith('.example.com') ? ['93.184.216.34'] : ['127.0.0.1']),
    sessionTuning: backoff,
  });
  const { apiKey } = await app.newAccount();
  return { app, sandbox, key: apiKey };
};

export const waitUntil = async <T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 15_000): Promise<T> => {
  const until = Date.now() + ms;
  let last = await read();
  while (!check(last)) {
    if (Date.now() > until) throw new Error(`condition not met in ${ms} ms; last value: ${JSON.stringify(last).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
};

/**
 * Creates a session on the service at `baseUrl` and links it to a phone already on the sandbox through
 * the QR flow, as a user would (also for a service run as its own process); `until` 'scanned' answers
 * once the phone scanned the code, without waiting for the session to be CONNECTED.
 */
export const linkThroughQr = async (
  baseUrl: string,
  key: string,
  /** the sandbox, or anything that scans a QR code on its phones (its control API, for one in another process) */
  sandbox: { control: Pick<Sandbox['control'], 'scanQr'> },
  number: string,
  name = 'main',
  ms = 15_000,
  until: 'CONNECTED' | 'scanned' = 'CONNECTED',
): Promise<string> => {
  const created = await http(baseUrl, 'POST', '/v1/sessions', { key, body: { name } });
  const id: string = created.body.id;
  // On several nodes a new session may be moving to the node that claims it: the answer is 409 with
  // Retry-After and nothing was done, so the client tries again (docs/operations.md).
  const connected = await callAsClient(baseUrl, key, 'POST', `/v1/sessions/${id}/connect`);
  if (connected.status !== 200) throw new Error(`connect answered ${connected.status}: ${JSON.stringify(connected.body)}`);
  const qr = await waitUntil(
    () => http(baseUrl, 'GET', `/v1/sessions/${id}/qrcode`, { key }),
    (r) => r.body.hasQrCode === true,
    ms,
  );
  await sandbox.control.scanQr(number, scanQrImage(qr.body.qrCode));
  if (until === 'CONNECTED') {
    await waitUntil(
      () => http(baseUrl, 'GET', `/v1/sessions/${id}/status`, { key }),
      (r) => r.body.status === 'CONNECTED',
      ms,
    );
  }
  return id;
};

/** Creates a session and links it to a new virtual phone through the QR flow, as a user would. */
export const linkSession = async (ctx: Linked, number: string, name = 'main'): Promise<string> => {
  ctx.sandbox.control.addPhone(number);
  return linkThroughQr(ctx.app.baseUrl, ctx.key, ctx.sandbox, number, name);
};

/** Reads the QR code out of the PNG data URL, as a phone's camera would. */
export const scanQrImage = readQrImage;
