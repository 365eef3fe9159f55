import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Logger } from 'pino';
import type { SandboxCertificates } from './certs.ts';
import { Addressing } from './addressing.ts';
import type { AddressingMode } from './addressing.ts';
import type { Directory, VirtualPhone } from './directory.ts';
import { deviceIdentity, newLinkedDevice, pairSuccessNode, parseQr } from './pairing.ts';
import type { CodeRequest } from './pairing-code.ts';
import { advSecretFromFinish, companionHello, primaryHello } from './pairing-code.ts';
import { storeUploadedKeys } from './prekeys.ts';
import type { Connection } from './server.ts';
import { newTag, SandboxServer } from './server.ts';
import { AppStates, serverSyncNotification } from './app-state.ts';
import type { AppStateWrite } from './app-state.ts';
import { SandboxChats } from './chats.ts';
import { GroupNotifier } from './group-notifications.ts';
import { GroupService } from './groups.ts';
import { PhoneHistories } from './history.ts';
import { MediaHost } from './media.ts';
import { SandboxPictures } from './pictures.ts';
import type { IqRefusal } from './pictures.ts';
import { Pushback } from './pushback.ts';
import { Router } from './routing.ts';
import type { Trace } from './trace.ts';
import { answerUsync } from './usync.ts';

/** the answer's content, an empty result, an error (sent as `<iq type="error"><error code text/></iq>`), or none */
type IqAnswer = BinaryNode[] | 'result' | 'unmodelled' | IqRefusal;

/** Plain-result answers for the start-up queries whose content Baileys tolerates being empty. */
const EMPTY_OK = new Set(['passive', 'w:p', 'urn:xmpp:whatsapp:dirty', 'w:stats', 'fb:thrift_iq', 'status', 'disappearing_mode', 'bot']);

const result = (iq: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: 'iq',
  attrs: { from: iq.attrs.to ?? 's.whatsapp.net', type: 'result', id: iq.attrs.id ?? '' },
  ...(content ? { content } : {}),
});

/** Routes every stanza of the sandbox: pairing, login, key service and the start-up queries. */
export class SandboxNetwork {
  readonly server: SandboxServer;
  /** unregistered companions by the QR refs they were offered */
  private readonly waitingByRef = new Map<string, Connection>();
  /** our own IQs (pair-success) waiting for the companion's answer */
  private readonly awaiting = new Map<string, (node: BinaryNode) => void>();
  readonly extraIq = new Map<string, (conn: Connection, iq: BinaryNode) => IqAnswer | Promise<IqAnswer>>();
  readonly stanzaHandlers = new Map<string, (conn: Connection, node: BinaryNode) => void | Promise<void>>();
  readonly router: Router;
  readonly groups: GroupService;
  /** tells members' devices what changed in their groups (w:gp2 notifications) */
  readonly groupNotices: GroupNotifier;
  readonly media = new MediaHost();
  /** phones' past chats, sent to newly linked devices as history sync */
  readonly histories: PhoneHistories;
  /** each account's app state (archive, pin, mute, read marks...) and the key its devices share */
  readonly appStates: AppStates;
  /** phones whose devices' app state fetches wait (control holdAppState), and how to let them go */
  readonly appStateHolds = new Map<string, { held: Promise<void>; release: () => void }>();
  /** read receipts, presence and calls */
  readonly chats: SandboxChats;
  /** profile pictures of phones and groups */
  readonly pictures: SandboxPictures;
  /** rates, restrictions and bans per linked number */
  readonly pushback = new Pushback();
  /** companions waiting for a phone number to enter their pairing code */
  private readonly codeRequests = new Map<string, CodeRequest>();

  readonly addressing: Addressing;

  constructor(
    readonly directory: Directory,
    certs: SandboxCertificates,
    readonly logger: Logger,
    readonly trace: Trace,
    options: { port: number; host: string; addressing?: AddressingMode; revealLids?: boolean },
  ) {
    this.addressing = new Addressing(options.addressing ?? 'lid', options.revealLids ?? true);
    this.router = new Router(this);
    this.histories = new PhoneHistories(directory, this.media);
    this.appStates = new AppStates(this.media);
    this.extraIq.set('w:sync:app:state', async (conn, iq) => {
      if (!conn.phone) return 'unmodelled';
      // A slow server (control holdAppState): the answer waits until it is let go.
      await this.appStateHolds.get(conn.phone.number)?.held;
      const { content, writes } = await this.appStates.answer(conn.phone, iq);
      for (const write of writes) this.announceAppState(conn.phone, write, conn);
      return content;
    });
    this.groups = new GroupService(directory, this.addressing);
    this.groupNotices = new GroupNotifier(this);
    this.extraIq.set('w:g2', (conn, iq) => {
      const phone = conn.phone;
      if (!phone) return 'unmodelled';
      const answer = this.groupNotices.around(conn, iq, () => this.groups.answer(phone, iq));
      if (Array.isArray(answer) || answer === 'result') return answer;
      return [{ tag: 'error', attrs: { code: String(answer.error), text: answer.text } }];
    });
    this.stanzaHandlers.set('message', (conn, node) => this.router.fromCompanion(conn, node));
    this.stanzaHandlers.set('receipt', (conn, node) => {
      if (node.attrs.type === 'read') this.chats.readReceipt(conn, node);
      return node.attrs.type === 'retry' ? this.router.retryToCompanion(conn, node) : this.router.deliveryReceipt(conn, node);
    });
    this.chats = new SandboxChats({ directory, addressing: this.addressing, connectionsOf: (number) => this.server.connectionsOf(number) });
    this.pictures = new SandboxPictures({ directory, groups: this.groups, media: this.media });
    this.extraIq.set('w:profile:picture', (conn, iq) => this.pictures.answer(conn, iq));
    this.stanzaHandlers.set('presence', (conn, node) => this.chats.presence(conn, node));
    this.stanzaHandlers.set('chatstate', (conn, node) => this.chats.chatstate(conn, node));
    this.stanzaHandlers.set('call', (conn, node) => this.chats.callStanza(conn, node));
    this.extraIq.set('usync', (_conn, iq) => answerUsync(this.directory, iq, this.addressing.revealsLids));
    this.extraIq.set('md', (conn, iq) => this.linkCodeIq(conn, iq));
    this.extraIq.set('w:m', (conn) => [
      {
        tag: 'media_conn',
        attrs: { auth: 'sandbox', ttl: '3600', auth_ttl: '3600', max_buckets: '12' },
        content: [
          { tag: 'host', attrs: { hostname: conn.mediaHostname ?? this.media.hostname, maxContentLengthBytes: String(64 * 1024 * 1024) } },
        ],
      },
    ]);
    this.server = new SandboxServer({
      port: options.port,
      host: options.host,
      certs,
      directory,
      logger,
      trace,
      onNode: (conn, node) => this.onNode(conn, node),
      refuseLogin: (phone) => this.pushback.loginRefusal(phone.number),
      onLogin: (conn) => {
        logger.info({ jid: conn.jid }, 'companion logged in');
        this.sendHistory(conn).catch((err: unknown) => logger.warn({ err, jid: conn.jid }, 'sending the history sync failed'));
        this.router.redeliver(conn).then(
          (count) => {
            if (count > 0) logger.info({ jid: conn.jid, count }, 'delivered again what the device had not receipted');
          },
          (err: unknown) => logger.warn({ err, jid: conn.jid }, 'delivering unreceipted messages again failed'),
        );
      },
      onRegistration: (conn) => {
        logger.debug({ refs: conn.refs.length }, 'companion waiting to be linked');
        for (const ref of conn.refs) this.waitingByRef.set(ref, conn);
        conn.ws.once('close', () => {
          for (const ref of conn.refs) this.waitingByRef.delete(ref);
        });
      },
    });
  }

  /**
   * A newly paired device's first login: its phone sends the history sync (as the primary phone does
   * after pairing), each chunk a HISTORY_SYNC_NOTIFICATION protocol message pointing at its blob.
   */
  private async sendHistory(conn: Connection): Promise<void> {
    const device = conn.device;
    const phone = conn.phone;
    if (!device?.historyDue || !phone) return;
    const wish = device.historyDue;
    device.historyDue = undefined;
    // As the primary does after pairing: the app state key first, so the device can read its app state
    // when the history sync makes it fetch it.
    await this.router.toOwnDevice(conn, this.appStates.keyShare(phone));
    for (const notification of await this.histories.chunksFor(phone, wish)) {
      if (conn.closed) return;
      await this.router.toOwnDevice(conn, historyMessage(notification));
    }
  }

  /** Tells the account's devices (but the one that wrote it) that a collection changed: they fetch its new patches. */
  announceAppState(phone: VirtualPhone, write: AppStateWrite, except?: Connection): number {
    let told = 0;
    for (const peer of this.server.connectionsOf(phone.number)) {
      if (peer === except) continue;
      peer.send(serverSyncNotification(newTag(), write));
      told += 1;
    }
    return told;
  }

  /** A device's peer data operation request to its own phone: an on-demand history request is answered with an ON_DEMAND chunk. */
  async peerRequest(conn: Connection, id: string, message: proto.IMessage): Promise<void> {
    // Baileys sends it to its own phone as a device-sent message (messages-send.js relayMessage)
    const request = (message.deviceSentMessage?.message ?? message).protocolMessage?.peerDataOperationRequestMessage;
    const phone = conn.phone;
    if (!phone || request?.peerDataOperationRequestType !== proto.Message.PeerDataOperationRequestType.HISTORY_SYNC_ON_DEMAND) return;
    if (!request.historySyncOnDemandRequest) return;
    const notification = await this.histories.onDemand(phone, request.historySyncOnDemandRequest, id);
    await this.router.toOwnDevice(conn, historyMessage(notification));
  }

  /** The companion still waiting to be linked with this QR string, if any. */
  companionShowing(qr: string): Connection | undefined {
    const conn = this.waitingByRef.get(parseQr(qr).ref);
    return conn?.registration && !conn.closed ? conn : undefined;
  }

  /** A virtual phone scans the QR a companion shows: it becomes a linked device of that phone. */
  async scanQr(number: string, qr: string): Promise<{ jid: string; deviceId: number }> {
    const phone = this.requireUnbanned(number);
    const scanned = parseQr(qr);
    const conn = this.waitingByRef.get(scanned.ref);
    if (!conn?.registration || conn.closed) throw new Error('no companion is waiting for this QR code (expired or already used)');
    if (Buffer.compare(Buffer.from(conn.registration.identityPublic), scanned.identityPublic) !== 0) {
      throw new Error('the QR code does not match the waiting companion');
    }
    return this.link(phone, conn, scanned.advSecret);
  }

  /** Finishes pairing: pair-success, wait for the signed answer, then the 515 restart. */
  async link(phone: VirtualPhone, conn: Connection, advSecret: Uint8Array): Promise<{ jid: string; deviceId: number }> {
    if (!conn.registration) throw new Error('companion not registering');
    const deviceId = Math.max(0, ...phone.devices.keys()) + 1;
    for (const ref of conn.refs) this.waitingByRef.delete(ref);
    const identity = deviceIdentity(phone, conn.registration.identityPublic, advSecret, deviceId);
    const id = newTag();
    const answered = new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.awaiting.delete(id);
        reject(new Error('the companion did not confirm the pairing'));
      }, 10_000);
      this.awaiting.set(id, (node) => {
        clearTimeout(timer);
        resolve(node);
      });
    });
    conn.send(pairSuccessNode(id, phone, deviceId, identity));
    const reply = await answered;
    if (reply.attrs.type !== 'result' || !getBinaryNodeChild(reply, 'pair-device-sign'))
      throw new Error('the companion refused the pairing');
    phone.devices.set(deviceId, newLinkedDevice(deviceId, conn.registration));
    conn.registration = undefined;
    conn.send({ tag: 'stream:error', attrs: { code: '515' } });
    setTimeout(() => conn.close(), 20);
    this.logger.info({ phone: phone.number, deviceId }, 'companion linked');
    return { jid: `${phone.number}:${deviceId}@s.whatsapp.net`, deviceId };
  }

  /** The phone enters the 8-character code a companion displays for this number. */
  async enterPairingCode(number: string, code: string): Promise<{ jid: string; deviceId: number }> {
    const phone = this.requireUnbanned(number);
    // The companion's request can still be in flight when the code is shown to the user.
    for (let waited = 0; !this.codeRequests.get(number) && waited < 5_000; waited += 25) await new Promise((r) => setTimeout(r, 25));
    const request = this.codeRequests.get(number);
    if (!request || request.conn.closed) throw new Error(`no companion asked for a pairing code for ${number}`);
    const finished = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the companion did not finish the code pairing')), 10_000);
      request.finish = (advSecret) => {
        clearTimeout(timer);
        resolve(advSecret);
      };
    });
    request.conn.send(await primaryHello(request, phone, code.replace('-', '').toUpperCase()));
    const advSecret = await finished;
    this.codeRequests.delete(number);
    return this.link(phone, request.conn, advSecret);
  }

  private linkCodeIq(conn: Connection, iq: BinaryNode): IqAnswer {
    const reg = getBinaryNodeChild(iq, 'link_code_companion_reg');
    if (!reg) return 'unmodelled';
    if (reg.attrs.stage === 'companion_hello') {
      const request = companionHello(conn, reg);
      this.codeRequests.set(request.number, request);
      return [{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: request.ref }] }];
    }
    if (reg.attrs.stage === 'companion_finish') {
      const request = [...this.codeRequests.values()].find((r) => r.conn === conn);
      if (!request) return 'unmodelled';
      request.finish?.(advSecretFromFinish(request, this.requirePhone(request.number), reg));
      return 'result';
    }
    return 'unmodelled';
  }

  requirePhone(number: string): VirtualPhone {
    const phone = this.directory.get(number);
    if (!phone) throw new Error(`no virtual phone ${number}`);
    return phone;
  }

  /** A banned number's phone cannot link a device (its own app is locked out). */
  private requireUnbanned(number: string): VirtualPhone {
    const phone = this.requirePhone(number);
    if (this.pushback.isBanned(number)) throw new Error(`${number} is banned`);
    return phone;
  }

  private async onNode(conn: Connection, node: BinaryNode): Promise<void> {
    if (node.tag === 'iq') return this.onIq(conn, node);
    const handler = this.stanzaHandlers.get(node.tag);
    if (handler) return handler(conn, node);
    // Presence, typing, receipts, acks and session notices need no answer from the network.
    if (['presence', 'chatstate', 'ack', 'receipt', 'ib'].includes(node.tag)) return;
    this.logger.warn({ jid: conn.jid, tag: node.tag, attrs: node.attrs }, 'unmodelled stanza; answering an error ack');
    conn.send({ tag: 'ack', attrs: { id: node.attrs.id ?? '', class: node.tag, error: '501' } });
  }

  private async onIq(conn: Connection, iq: BinaryNode): Promise<void> {
    const { type, xmlns, id } = iq.attrs;
    if (type === 'result' || type === 'error') {
      const waiter = id ? this.awaiting.get(id) : undefined;
      if (waiter && id) {
        this.awaiting.delete(id);
        waiter(iq);
      }
      return;
    }
    if (xmlns === 'usync' && conn.phone && !this.pushback.admitUsync(conn.phone.number)) {
      // rc14's query() throws Boom(text, { data: code }) on this child (WABinary assertNodeErrorFree)
      conn.send({
        tag: 'iq',
        attrs: { from: 's.whatsapp.net', type: 'error', id: id ?? '' },
        content: [{ tag: 'error', attrs: { code: '429', text: 'rate-overlimit' } }],
      });
      return;
    }
    const answer = await this.answerIq(conn, iq);
    if (answer === 'unmodelled') {
      this.logger.warn(
        {
          jid: conn.jid,
          xmlns,
          type,
          child: getBinaryNodeChildren(iq, '')[0]?.tag ?? (Array.isArray(iq.content) ? iq.content[0]?.tag : undefined),
        },
        'unmodelled IQ; answering an error',
      );
      conn.send({
        tag: 'iq',
        attrs: { from: 's.whatsapp.net', type: 'error', id: id ?? '' },
        content: [{ tag: 'error', attrs: { code: '501', text: 'feature-not-implemented' } }],
      });
      return;
    }
    if (!Array.isArray(answer) && answer !== 'result') {
      // rc14's query() throws Boom(text, { data: code }) on this child (WABinary assertNodeErrorFree)
      conn.send({
        tag: 'iq',
        attrs: { from: iq.attrs.to ?? 's.whatsapp.net', type: 'error', id: id ?? '' },
        content: [{ tag: 'error', attrs: { code: String(answer.error), text: answer.text } }],
      });
      return;
    }
    conn.send(result(iq, answer === 'result' ? undefined : answer));
  }

  private async answerIq(conn: Connection, iq: BinaryNode): Promise<IqAnswer> {
    const xmlns = iq.attrs.xmlns ?? '';
    const extra = this.extraIq.get(xmlns);
    if (extra) {
      const answer = await extra(conn, iq);
      if (answer !== 'unmodelled') return answer;
    }
    if (EMPTY_OK.has(xmlns)) return 'result';
    const child = Array.isArray(iq.content) ? iq.content[0] : undefined;
    switch (xmlns) {
      case 'encrypt':
        if (!conn.device) return 'unmodelled';
        if (child?.tag === 'count') return [{ tag: 'count', attrs: { value: String(conn.device.preKeys.size) } }];
        if (child?.tag === 'digest')
          return [{ tag: 'digest', attrs: {}, content: [{ tag: 'type', attrs: {}, content: Buffer.from([5]) }] }];
        if (iq.attrs.type === 'set' && getBinaryNodeChild(iq, 'list')) {
          storeUploadedKeys(conn.device, iq);
          return 'result';
        }
        if (child?.tag === 'rotate') return 'result';
        if (child?.tag === 'key') return this.router.keyBundles(iq);
        return 'unmodelled';
      case 'abt':
        return [{ tag: 'props', attrs: { protocol: '1', hash: 'sandbox' }, content: [] }];
      case 'w':
        return [{ tag: 'props', attrs: { protocol: '2', hash: 'sandbox' }, content: [] }];
      case 'blocklist':
        return [{ tag: 'list', attrs: {}, content: [] }];
      case 'privacy':
        // A set with <tokens> is an account issuing its own trusted-contact token to a contact
        // (Baileys' issuePrivacyTokens); WhatsApp's answer carries no tokens, only the result.
        if (iq.attrs.type === 'set') return 'result';
        return [
          {
            tag: 'privacy',
            attrs: {},
            content: ['last', 'online', 'profile', 'status', 'readreceipts', 'groupadd', 'calladd'].map((name) => ({
              tag: 'category',
              attrs: { name, value: 'all' },
            })),
          },
        ];
      case 'md': {
        // Baileys' logout: a linked device unlinks itself, and the phone's device list drops it.
        const removal = getBinaryNodeChild(iq, 'remove-companion-device');
        const target = jidDecode(removal?.attrs.jid);
        if (!conn.phone || !conn.device || target?.user !== conn.phone.number || (target.device ?? 0) !== conn.device.deviceId)
          return 'unmodelled';
        conn.device.loggedOut = true;
        return 'result';
      }
      default:
        return 'unmodelled';
    }
  }
}

/** The protocol message that announces a history chunk (Utils/process-message.js, HISTORY_SYNC_NOTIFICATION). */
const historyMessage = (notification: proto.Message.IHistorySyncNotification): proto.IMessage => ({
  protocolMessage: { type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION, historySyncNotification: notification },
});
