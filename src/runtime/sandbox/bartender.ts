import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import { isIP } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { generate } from 'selfsigned';
import { WebSocketServer } from 'ws';
import type { Directory } from './directory.ts';
import type { SandboxNetwork } from './network.ts';
import { parseQr } from './pairing.ts';

/**
 * The layout of Baileys' private mock server ("bartender"), served by the sandbox: one TLS port with the
 * chat WebSocket at /ws/chat, the mock phone's scan at POST /admin/mock-phone/scan-qr (the body is the
 * QR text a client printed), and the media host. A client's phone number follows from its push name.
 */
export interface BartenderOptions {
  port: number;
  host: string;
  /** when set, a QR whose ADV secret differs is refused (bartender signs with this key only) */
  advSecretKey?: string;
  /** where to write the self-signed certificate, for NODE_EXTRA_CA_CERTS or an agent's `ca` */
  caFile?: string;
}

export interface BartenderEndpoint {
  /** SOCKET_URL for clients: wss://host:port/ws/chat */
  url: string;
  adminUrl: string;
  /** the port's self-signed certificate (PEM) */
  caPem: string;
  close: () => Promise<void>;
}

export const ADMIN_SCAN_PATH = '/admin/mock-phone/scan-qr';
const CHAT_PATH = '/ws/chat';
const MAX_QR_BYTES = 4096;
const NUMBER_PREFIX = '55998';

/** The same push name always gets the same number; another name that hashes onto a taken number moves on. */
export const numberForPushName = (directory: Directory, pushName: string): string => {
  for (let attempt = 0; ; attempt += 1) {
    const digest = createHash('sha256')
      .update(attempt === 0 ? pushName : `${pushName}#${attempt}`)
      .digest();
    const number = NUMBER_PREFIX + String(digest.readUInt32BE(0) % 10_000_000).padStart(7, '0');
    const phone = directory.get(number);
    if (!phone || phone.name === pushName) return number;
  }
};

class ScanError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const altNames = (host: string) => {
  const names: Array<{ type: 2; value: string } | { type: 7; ip: string }> = [
    { type: 2, value: 'localhost' },
    { type: 7, ip: '127.0.0.1' },
    { type: 7, ip: '::1' },
  ];
  if (isIP(host) && !['0.0.0.0', '::', '127.0.0.1', '::1'].includes(host)) names.push({ type: 7, ip: host });
  else if (!isIP(host) && host !== 'localhost') names.push({ type: 2, value: host });
  return names;
};

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_QR_BYTES) {
        reject(new ScanError(413, `a QR string is at most ${MAX_QR_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

/** Starts the bartender-compatible TLS endpoint in front of a running sandbox network. */
export const startBartender = async (network: SandboxNetwork, options: BartenderOptions, logger: Logger): Promise<BartenderEndpoint> => {
  const expectedSecret = options.advSecretKey ? Buffer.from(options.advSecretKey, 'base64') : undefined;
  if (expectedSecret && expectedSecret.length !== 32) throw new Error('ADV_SECRET_KEY must be 32 bytes in base64');
  const pems = await generate([{ name: 'commonName', value: 'wa-sandbox' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: altNames(options.host) }],
  } as Parameters<typeof generate>[1]);
  if (options.caFile) await writeFile(options.caFile, pems.cert);

  const scan = async (body: string): Promise<{ number: string; name: string; jid: string; deviceId: number }> => {
    const qr = body.trim();
    let scanned: ReturnType<typeof parseQr>;
    try {
      scanned = parseQr(qr);
    } catch {
      throw new ScanError(400, 'the body must be the QR string the client printed (ref,noiseKey,identityKey,advSecret,...)');
    }
    if (expectedSecret && !expectedSecret.equals(scanned.advSecret)) {
      throw new ScanError(409, "the client's ADV secret differs from the sandbox's ADV_SECRET_KEY; set the same key on both sides");
    }
    const conn = network.companionShowing(qr);
    if (!conn) throw new ScanError(404, 'no client is waiting for this QR code (expired, already scanned, or from another server)');
    // Without a push name the client's identity key stands in, so the same credentials keep one number.
    const name = conn.pushName ?? `client-${scanned.identityPublic.toString('hex').slice(0, 12)}`;
    const number = numberForPushName(network.directory, name);
    network.directory.add(number, name);
    const linked = await network.scanQr(number, qr);
    return { number, name, ...linked };
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === ADMIN_SCAN_PATH && req.method === 'POST') {
      readBody(req)
        .then(scan)
        .then((linked) => {
          logger.info(linked, 'bartender: mock phone scanned a QR code');
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ...linked }));
        })
        .catch((err: unknown) => {
          const status = err instanceof ScanError ? err.status : 409;
          const message = err instanceof Error ? err.message : String(err);
          logger.warn({ status, err: message }, 'bartender: QR scan refused');
          if (!res.headersSent)
            res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error: message }));
        });
      return;
    }
    if (path.startsWith('/mms/') || path.startsWith('/m/') || path.startsWith('/pp/')) {
      network.media.handle(req, res);
      return;
    }
    if (path === '/' && req.method === 'GET') {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`WhatsApp sandbox (bartender layout): WebSocket ${CHAT_PATH}, POST ${ADMIN_SCAN_PATH}\n`);
      return;
    }
    logger.warn({ method: req.method, path }, 'bartender: unmodelled HTTP route');
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ok: false, error: `no route ${req.method} ${path} in the sandbox's bartender layout` }));
  };

  const server: Server = createServer({ key: pems.private, cert: pems.cert }, onRequest);
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== CHAT_PATH) {
      logger.warn({ path }, 'bartender: WebSocket on an unknown path refused');
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = network.server.accept(ws);
      // The media host lives on this same port, under whatever name the client reached it by.
      conn.mediaHostname = req.headers.host;
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = ['0.0.0.0', '::'].includes(options.host) ? '127.0.0.1' : options.host;
  const origin = `${isIP(shown) === 6 ? `[${shown}]` : shown}:${port}`;
  return {
    url: `wss://${origin}${CHAT_PATH}`,
    adminUrl: `https://${origin}${ADMIN_SCAN_PATH}`,
    caPem: pems.cert,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
};
