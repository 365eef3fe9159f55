import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeBinaryNode, encodeBinaryNode, proto } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { SandboxCertificates } from './certs.ts';
import type { Directory, LinkedDevice, VirtualPhone } from './directory.ts';
import { NoiseServer } from './noise.ts';
import type { Registration } from './pairing.ts';
import { newRefs, pairDeviceNode, registrationFrom } from './pairing.ts';
import type { Trace } from './trace.ts';

let tagCounter = 0;
export const newTag = (): string => `sbx-${Date.now().toString(36)}-${(tagCounter++).toString(36)}`;

/** One socket from a companion (a Baileys client), from the Noise handshake to its close. */
export class Connection {
  readonly noise: NoiseServer;
  phase: 'hello' | 'finish' | 'open' = 'hello';
  /** set while an unregistered companion waits for a phone to scan or enter a code */
  registration?: Registration;
  refs: string[] = [];
  /** set once logged in */
  phone?: VirtualPhone;
  device?: LinkedDevice;
  /** acks withheld or delayed by a fault */
  ackDelayMs = 0;
  withholdAcks = false;
  /** messages with buttons from this device are refused with an error ack (as some clients do) */
  refuseButtons = false;
  /** a frozen link neither answers nor delivers anything: a connection gone silent */
  frozen = false;
  closed = false;
  /** the push name the client's payload carried (Baileys' `pushName` option) */
  pushName?: string;
  /** the media host named to this link in media_conn, when it differs from the sandbox's own (bartender mode) */
  mediaHostname?: string;

  constructor(
    readonly ws: WebSocket,
    certs: SandboxCertificates,
    private readonly trace: Trace,
    readonly logger: Logger,
  ) {
    this.noise = new NoiseServer(certs.serverStatic, certs.chain);
  }

  get jid(): string | undefined {
    return this.phone && this.device ? `${this.phone.number}:${this.device.deviceId}@s.whatsapp.net` : undefined;
  }

  sendRaw(body: Uint8Array): void {
    if (this.closed || this.frozen || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(this.noise.frame(body));
  }

  send(node: BinaryNode): void {
    this.trace.record('out', this.jid, node);
    this.sendRaw(encodeBinaryNode(node));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close();
  }
}

export type NodeHandler = (conn: Connection, node: BinaryNode) => void | Promise<void>;

export interface SandboxServerOptions {
  port: number;
  host: string;
  certs: SandboxCertificates;
  directory: Directory;
  logger: Logger;
  trace: Trace;
  /** routes every decoded stanza of a logged-in companion */
  onNode: NodeHandler;
  onLogin: (conn: Connection) => void;
  /** what a known device's login gets instead of `<success>` (a banned number's `<failure>`), if anything */
  refuseLogin: (phone: VirtualPhone) => BinaryNode | undefined;
  onRegistration: (conn: Connection) => void;
}

/** The WebSocket endpoint companions connect to (`waWebSocketUrl`). */
export class SandboxServer {
  readonly http: Server;
  private readonly wss: WebSocketServer;
  readonly connections = new Set<Connection>();

  constructor(private readonly options: SandboxServerOptions) {
    this.http = createServer((_req, res) => {
      res.writeHead(426).end('WebSocket only');
    });
    this.wss = new WebSocketServer({ server: this.http });
    this.wss.on('connection', (ws) => this.accept(ws));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(this.options.port, this.options.host, resolve));
    const { port } = this.http.address() as AddressInfo;
    return `ws://${this.options.host}:${port}/ws/chat`;
  }

  /** The open, logged-in connections of one phone (every linked device). */
  connectionsOf(number: string): Connection[] {
    return [...this.connections].filter((c) => c.phase === 'open' && c.phone?.number === number && !c.closed);
  }

  connectionOf(number: string, deviceId: number): Connection | undefined {
    return this.connectionsOf(number).find((c) => c.device?.deviceId === deviceId);
  }

  async close(): Promise<void> {
    for (const conn of this.connections) conn.close();
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  /** Takes a companion's socket, from this endpoint or another one that serves the same network. */
  accept(ws: WebSocket): Connection {
    const conn = new Connection(ws, this.options.certs, this.options.trace, this.options.logger);
    this.connections.add(conn);
    ws.on('message', (data: Buffer) => {
      void this.receive(conn, data).catch((err: unknown) => {
        this.options.logger.error({ err, jid: conn.jid }, 'sandbox connection failed; closing it');
        conn.close();
      });
    });
    ws.on('close', () => {
      conn.closed = true;
      this.connections.delete(conn);
    });
    ws.on('error', (err) => this.options.logger.debug({ err }, 'sandbox socket error'));
    return conn;
  }

  private async receive(conn: Connection, data: Buffer): Promise<void> {
    for (const frame of conn.noise.feed(data)) {
      if (conn.phase === 'hello') {
        const hello = proto.HandshakeMessage.decode(frame).clientHello;
        if (!hello?.ephemeral) throw new Error('first frame is not a client hello');
        conn.sendRaw(conn.noise.serverHello({ ephemeral: hello.ephemeral }));
        conn.phase = 'finish';
      } else if (conn.phase === 'finish') {
        const payload = conn.noise.clientFinish(proto.HandshakeMessage.decode(frame));
        conn.phase = 'open';
        this.onPayload(conn, payload);
      } else {
        if (conn.frozen || conn.closed) continue;
        const node = await decodeBinaryNode(frame);
        this.options.trace.record('in', conn.jid, node);
        await this.options.onNode(conn, node);
      }
    }
  }

  private onPayload(conn: Connection, payload: proto.ClientPayload): void {
    conn.pushName = payload.pushName || undefined;
    if (payload.devicePairingData) {
      conn.registration = registrationFrom(payload, conn.noise.clientStatic ?? new Uint8Array());
      conn.refs = newRefs(6);
      conn.send(pairDeviceNode(newTag(), conn.refs));
      this.options.onRegistration(conn);
      return;
    }
    const number = String(payload.username ?? '');
    const phone = this.options.directory.get(number);
    const device = phone?.devices.get(payload.device ?? 0);
    if (!phone || !device || device.loggedOut) {
      this.options.logger.warn({ number, device: payload.device }, 'login refused: unknown or logged-out device');
      conn.send({ tag: 'failure', attrs: { reason: '401', location: 'sandbox' } });
      setTimeout(() => conn.close(), 50);
      return;
    }
    const refusal = this.options.refuseLogin(phone);
    if (refusal) {
      this.options.logger.warn({ number, device: payload.device, reason: refusal.attrs.reason }, 'login refused: the number is banned');
      conn.send(refusal);
      setTimeout(() => conn.close(), 50);
      return;
    }
    conn.phone = phone;
    conn.device = device;
    // WhatsApp keeps one connection a device: a second login replaces the first, which hears a stream
    // error `conflict` (type replaced; rc14 reads it as 440, connectionReplaced) and is closed. Nothing
    // is delivered to it or taken from it after that.
    for (const other of this.connectionsOf(number)) {
      if (other === conn || other.device?.deviceId !== device.deviceId) continue;
      this.options.logger.info({ jid: other.jid }, 'login replaced an open connection of the same device');
      other.send({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
      other.close();
    }
    conn.send({
      tag: 'success',
      attrs: {
        t: String(Math.floor(Date.now() / 1000)),
        lid: `${phone.lid.split('@')[0]}:${device.deviceId}@lid`,
        props: '1',
        location: 'sbx',
      },
    });
    conn.send({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: '0' } }] });
    this.options.onLogin(conn);
  }
}
