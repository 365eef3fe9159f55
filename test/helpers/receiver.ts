import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** the parsed payload, once its signature checked out against the secret given to verifyWith */
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  verified: boolean;
}

export type Mode = { kind: 'ok' } | { kind: 'status'; status: number } | { kind: 'hang' };

/**
 * A webhook receiver on loopback that verifies every request with the standardwebhooks package, as a
 * user's receiver would, and fails, hangs or recovers on command.
 */
export interface Receiver {
  url: string;
  received: Received[];
  /** every request, including those answered with an error */
  requests: number;
  setMode: (mode: Mode) => void;
  verifyWith: (...secrets: string[]) => void;
  close: () => Promise<void>;
}

export const startReceiver = async (): Promise<Receiver> => {
  let mode: Mode = { kind: 'ok' };
  let secrets: string[] = [];
  const received: Received[] = [];
  const state = { requests: 0 };
  const hanging = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests += 1;
      const body = Buffer.concat(chunks).toString();
      if (mode.kind === 'hang') {
        const end = () => res.destroy();
        hanging.add(end);
        res.on('close', () => hanging.delete(end));
        return;
      }
      if (mode.kind === 'status') {
        res.writeHead(mode.status, { 'content-type': 'text/plain' }).end(`failing with ${mode.status}`);
        return;
      }
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      let verified = secrets.length > 0;
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, headers);
        } catch {
          verified = false;
        }
      }
      received.push({
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        payload: JSON.parse(body) as Received['payload'],
        verified,
      });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    get requests() {
      return state.requests;
    },
    setMode: (m) => {
      mode = m;
    },
    verifyWith: (...s) => {
      secrets = s;
    },
    close: async () => {
      for (const end of [...hanging]) end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
