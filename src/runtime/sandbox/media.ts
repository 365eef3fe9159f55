import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { Agent, createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getMediaKeys } from 'baileys';
import type { MediaType } from 'baileys';
import { generate } from 'selfsigned';

/**
 * How the media host fails a download, as real ones do: `cut` sends the headers and half the body, then
 * drops the connection; `reset` drops it before answering.
 */
export type MediaFailure = 'cut' | 'reset';

/** The sandbox's media host: companions upload encrypted files here and phones fetch them. */
export class MediaHost {
  private readonly blobs = new Map<string, Buffer>();
  /** plain files anyone may fetch (profile pictures), by path */
  private readonly published = new Map<string, { data: Buffer; mimetype: string }>();
  private readonly failures: MediaFailure[] = [];
  private readonly failuresOf = new Map<string, MediaFailure[]>();
  private server?: Server;
  hostname = '';
  certPem = '';

  async start(host: string): Promise<void> {
    const pems = await generate([{ name: 'commonName', value: host }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: host }] }],
    } as Parameters<typeof generate>[1]);
    this.certPem = pems.cert;
    this.server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, host, resolve));
    this.hostname = `${host}:${(this.server.address() as AddressInfo).port}`;
  }

  /** Uploads (POST /mms/...), downloads (GET /m/...) and pictures (GET /pp/...); the links it answers name the host the client used. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const host = req.headers.host ?? this.hostname;
    const url = new URL(req.url ?? '/', 'https://media.invalid');
    if (req.method === 'POST' && url.pathname.startsWith('/mms/')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = randomBytes(12).toString('hex');
        this.blobs.set(id, Buffer.concat(chunks));
        const path = `/m/${id}`;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ url: `https://${host}${path}`, direct_path: path }));
      });
      return;
    }
    const plain = req.method === 'GET' ? this.published.get(url.pathname) : undefined;
    if (plain) {
      res.writeHead(200, { 'content-type': plain.mimetype, 'content-length': plain.data.length }).end(plain.data);
      return;
    }
    const blob = req.method === 'GET' && url.pathname.startsWith('/m/') ? this.blobs.get(url.pathname.slice(3)) : undefined;
    if (!blob) {
      res.writeHead(404).end();
      return;
    }
    const failure = this.failuresOf.get(url.pathname)?.shift() ?? this.failures.shift();
    if (failure === 'reset') {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.length });
    if (failure === 'cut') {
      res.write(blob.subarray(0, Math.floor(blob.length / 2)), () => res.destroy());
      return;
    }
    res.end(blob);
  }

  /** The next downloads (one per failure given) fail this way. */
  failDownloads(...failures: MediaFailure[]): void {
    this.failures.push(...failures);
  }

  /**
   * The next downloads of the file at `url` (one per failure given) fail this way; other files are
   * served (a newly linked device's history blobs, fetched at the same time, are not the ones that fail).
   */
  failDownloadsOf(url: string, ...failures: MediaFailure[]): void {
    const path = new URL(url).pathname;
    this.failuresOf.set(path, [...(this.failuresOf.get(path) ?? []), ...failures]);
  }

  /** An HTTPS agent that trusts this host, for Baileys' `fetchAgent`. */
  agent(): Agent {
    return new Agent({ ca: this.certPem, keepAlive: false });
  }

  /** Stores an already encrypted file, as an upload would. */
  put(encrypted: Buffer): { url: string; directPath: string } {
    const id = randomBytes(12).toString('hex');
    this.blobs.set(id, encrypted);
    return { url: `https://${this.hostname}/m/${id}`, directPath: `/m/${id}` };
  }

  /**
   * Encrypts a file as a phone encrypts what it uploads (AES-256-CBC with keys from a fresh media key for
   * `type`, then the first 10 bytes of an HMAC-SHA256 over iv and ciphertext; Utils/messages-media.js),
   * stores it, and answers what a message or blob reference points at it with.
   */
  async putEncrypted(
    plain: Buffer,
    type: MediaType,
  ): Promise<{ mediaKey: Buffer; directPath: string; fileSha256: Buffer; fileEncSha256: Buffer; fileLength: number }> {
    const mediaKey = randomBytes(32);
    const { cipherKey, iv, macKey } = await getMediaKeys(mediaKey, type);
    const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
    const enc = Buffer.concat([cipher.update(plain), cipher.final()]);
    const mac = createHmac('sha256', macKey ?? Buffer.alloc(32))
      .update(Buffer.concat([iv, enc]))
      .digest()
      .subarray(0, 10);
    const file = Buffer.concat([enc, mac]);
    const { directPath } = this.put(file);
    return {
      mediaKey,
      directPath,
      fileSha256: createHash('sha256').update(plain).digest(),
      fileEncSha256: createHash('sha256').update(file).digest(),
      fileLength: plain.length,
    };
  }

  /** Serves a plain (unencrypted) file, as WhatsApp's picture host does; answers its path. */
  publish(data: Buffer, mimetype: string): string {
    const path = `/pp/${randomBytes(12).toString('hex')}`;
    this.published.set(path, { data, mimetype });
    return path;
  }

  unpublish(path: string): void {
    this.published.delete(path);
  }

  /** Deletes a stored file, as WhatsApp's media host does once a file is old: its links then answer 404. */
  remove(directPathOrUrl: string): boolean {
    const path = directPathOrUrl.startsWith('https://') ? new URL(directPathOrUrl).pathname : directPathOrUrl;
    return this.blobs.delete(path.replace(/^\/m\//, '').split('?')[0] ?? '');
  }

  /** Opens a file a message points at, with the message's media key (what a phone does on download). */
  async open(directPathOrUrl: string, mediaKey: Uint8Array, type: MediaType): Promise<Buffer> {
    const path = directPathOrUrl.startsWith('https://') ? new URL(directPathOrUrl).pathname : directPathOrUrl;
    const blob = this.blobs.get(path.replace(/^\/m\//, '').split('?')[0] ?? '');
    if (!blob) throw new Error(`no media at ${path}`);
    const { cipherKey, iv } = await getMediaKeys(mediaKey, type);
    const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
    return Buffer.concat([decipher.update(blob.subarray(0, blob.length - 10)), decipher.final()]);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

export const sha256Hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
