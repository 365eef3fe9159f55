import { randomBytes } from 'node:crypto';
import {
  ALL_WA_PATCH_NAMES,
  chatModificationToAppPatch,
  encodeSyncdPatch,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  makeLtHashGenerator,
  newLTHashState,
  proto,
} from 'baileys';
import type { BinaryNode, ChatModification, LTHashState, WAPatchName } from 'baileys';
import type { VirtualPhone } from './directory.ts';
import type { MediaHost } from './media.ts';

/** What a phone's user does to a chat in the app, as the control API names it. */
export type PhoneChatAction =
  | { archive: boolean }
  | { pin: boolean }
  /** muted until this time (ms since the epoch); null unmutes */
  | { mute: number | null }
  | { markRead: boolean };

/** One collection as the server keeps it: the patches in order, and what a snapshot of it holds. */
interface Collection {
  /** the LT hash over the current records, and its version (the last patch's) */
  state: LTHashState;
  /** every patch, with its version set (a device's upload carries none) */
  patches: proto.ISyncdPatch[];
  /** the current records by index MAC (base64): a SET replaces, a REMOVE drops */
  records: Map<string, proto.ISyncdRecord>;
  /** the key and snapshot MAC of the last patch: what a snapshot at this version is signed with */
  keyId?: Uint8Array;
  snapshotMac?: Uint8Array;
}

interface Account {
  /** the app state sync key the phone shares with every linked device (APP_STATE_SYNC_KEY_SHARE) */
  keyId: Buffer;
  keyData: proto.Message.IAppStateSyncKeyData;
  collections: Map<WAPatchName, Collection>;
}

/** What an app-state IQ changed: collections a device wrote to, whose other devices must resync. */
export interface AppStateWrite {
  name: WAPatchName;
  version: number;
}

const isPatchName = (name: string | undefined): name is WAPatchName => (ALL_WA_PATCH_NAMES as readonly string[]).includes(name ?? '');

const mutationOf = (m: proto.ISyncdMutation) => ({
  operation: m.operation ?? proto.SyncdMutation.SyncdOperation.SET,
  indexMac: m.record?.index?.blob ?? new Uint8Array(),
  valueMac: (m.record?.value?.blob ?? new Uint8Array()).subarray(-32),
});

/**
 * The account's app state (docs/sandbox.md, App state): per phone number, the five collections as the
 * server keeps them, versioned patches it cannot read (only the account's devices hold the key), from
 * which it answers `w:sync:app:state` fetches with a snapshot and/or patches. The phone holds the key,
 * shares it with each newly linked device, and writes its own user's actions as patches with it.
 */
export class AppStates {
  private readonly accounts = new Map<string, Account>();

  constructor(private readonly media: MediaHost) {}

  private account(phone: VirtualPhone): Account {
    const found = this.accounts.get(phone.number);
    if (found) return found;
    const account: Account = {
      // WhatsApp's key ids are short: 6 bytes, as phones send them
      keyId: randomBytes(6),
      keyData: {
        keyData: randomBytes(32),
        fingerprint: { rawId: randomBytes(4).readUInt32BE(), currentIndex: 0, deviceIndexes: [0] },
        timestamp: Date.now(),
      },
      collections: new Map(),
    };
    this.accounts.set(phone.number, account);
    return account;
  }

  private collection(account: Account, name: WAPatchName): Collection {
    const found = account.collections.get(name);
    if (found) return found;
    const collection: Collection = { state: newLTHashState(), patches: [], records: new Map() };
    account.collections.set(name, collection);
    return collection;
  }

  /** The protocol message a phone sends a newly linked device with its app state sync key (Utils/process-message.js). */
  keyShare(phone: VirtualPhone): proto.IMessage {
    const account = this.account(phone);
    return {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: { keys: [{ keyId: { keyId: account.keyId }, keyData: account.keyData }] },
      },
    };
  }

  /** The current version of one of an account's collections (0 for one never written). */
  version(phone: VirtualPhone, name: WAPatchName): number {
    return this.accounts.get(phone.number)?.collections.get(name)?.state.version ?? 0;
  }

  /**
   * The phone's user acts on a chat: the phone encodes the mutation with its key as rc14's own
   * chatModify does (chatModificationToAppPatch, encodeSyncdPatch), and the server stores the patch.
   */
  async phoneAction(phone: VirtualPhone, chatJid: string, action: PhoneChatAction): Promise<AppStateWrite> {
    const account = this.account(phone);
    const now = Math.floor(Date.now() / 1000);
    const mod: ChatModification =
      'archive' in action
        ? { archive: action.archive, lastMessages: { lastMessageTimestamp: now } }
        : 'markRead' in action
          ? { markRead: action.markRead, lastMessages: { lastMessageTimestamp: now } }
          : action;
    const create = chatModificationToAppPatch(mod, chatJid);
    const collection = this.collection(account, create.type);
    const keyId = account.keyId.toString('base64');
    const { patch } = await encodeSyncdPatch(create, keyId, collection.state, async (id) => (id === keyId ? account.keyData : undefined));
    return this.store(create.type, collection, patch);
  }

  /** Appends a patch at the collection's next version and moves the LT hash and records on. */
  private store(name: WAPatchName, collection: Collection, patch: proto.ISyncdPatch): AppStateWrite {
    const version = collection.state.version + 1;
    const generator = makeLtHashGenerator(collection.state);
    for (const m of patch.mutations ?? []) {
      const mutation = mutationOf(m);
      generator.mix(mutation);
      const index = Buffer.from(mutation.indexMac).toString('base64');
      if (mutation.operation === proto.SyncdMutation.SyncdOperation.REMOVE) collection.records.delete(index);
      else if (m.record) collection.records.set(index, m.record);
    }
    collection.state = { ...generator.finish(), version };
    collection.patches.push({ ...patch, version: { version } });
    if (patch.keyId?.id) collection.keyId = patch.keyId.id;
    if (patch.snapshotMac) collection.snapshotMac = patch.snapshotMac;
    return { name, version };
  }

  /**
   * A device's `w:sync:app:state` IQ: per `<collection name version return_snapshot>`, its patches
   * after `version` (`<patches><patch>`), or a snapshot (`<snapshot>`, an ExternalBlobReference to a
   * SyncdSnapshot on the media host) when it asked for one and the collection has any state; a
   * collection with a `<patch>` is a device's upload, stored when written on the current version.
   */
  async answer(phone: VirtualPhone, iq: BinaryNode): Promise<{ content: BinaryNode[]; writes: AppStateWrite[] }> {
    const account = this.account(phone);
    const writes: AppStateWrite[] = [];
    const answers: BinaryNode[] = [];
    for (const node of getBinaryNodeChildren(getBinaryNodeChild(iq, 'sync'), 'collection')) {
      const name = node.attrs.name;
      if (!isPatchName(name)) {
        answers.push(collectionError(name ?? '', '400', 'bad-request'));
        continue;
      }
      const collection = this.collection(account, name);
      const uploads = getBinaryNodeChildren(node, 'patch');
      if (uploads.length > 0) {
        // A device writes on the version it last synced; one written on an older version conflicts.
        if (Number(node.attrs.version) !== collection.state.version) {
          answers.push(collectionError(name, '409', 'conflict'));
          continue;
        }
        for (const upload of uploads) {
          if (upload.content instanceof Uint8Array) writes.push(this.store(name, collection, proto.SyncdPatch.decode(upload.content)));
        }
        answers.push({ tag: 'collection', attrs: { name, version: String(collection.state.version) } });
        continue;
      }
      const from = Number(node.attrs.version ?? 0) || 0;
      const attrs = { name, version: String(collection.state.version) };
      if (node.attrs.return_snapshot === 'true' && collection.state.version > 0) {
        answers.push({ tag: 'collection', attrs, content: [{ tag: 'snapshot', attrs: {}, content: await this.snapshot(collection) }] });
        continue;
      }
      const patches = collection.patches.slice(Math.min(from, collection.patches.length));
      answers.push({
        tag: 'collection',
        attrs,
        ...(patches.length > 0
          ? {
              content: [
                {
                  tag: 'patches',
                  attrs: {},
                  content: patches.map((p) => ({ tag: 'patch', attrs: {}, content: proto.SyncdPatch.encode(p).finish() })),
                },
              ],
            }
          : {}),
      });
    }
    return { content: [{ tag: 'sync', attrs: {}, content: answers }], writes };
  }

  /** A snapshot of the collection's current records, put on the media host as `md-app-state`. */
  private async snapshot(collection: Collection): Promise<Uint8Array> {
    const snapshot = proto.SyncdSnapshot.encode({
      version: { version: collection.state.version },
      records: [...collection.records.values()],
      // the MAC the last writer computed over this very state (generateSnapshotMac in Utils/chat-utils.js)
      mac: collection.snapshotMac,
      keyId: { id: collection.keyId },
    }).finish();
    const blob = await this.media.putEncrypted(Buffer.from(snapshot), 'md-app-state');
    return proto.ExternalBlobReference.encode({ ...blob, fileSizeBytes: blob.fileLength }).finish();
  }
}

const collectionError = (name: string, code: string, text: string): BinaryNode => ({
  tag: 'collection',
  attrs: { name, type: 'error' },
  content: [{ tag: 'error', attrs: { code, text } }],
});

/** The notification that tells an account's devices a collection changed on the server (messages-recv.js, server_sync). */
export const serverSyncNotification = (id: string, write: AppStateWrite): BinaryNode => ({
  tag: 'notification',
  attrs: { from: 's.whatsapp.net', type: 'server_sync', id, t: String(Math.floor(Date.now() / 1000)) },
  content: [{ tag: 'collection', attrs: { name: write.name, version: String(write.version) } }],
});
