import { mkdirSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { LinkedDevice, VirtualPhone } from './directory.ts';
import type { Role, SandboxGroup } from './groups.ts';
import type { SandboxNetwork } from './network.ts';
import { PhoneSignal } from './signal.ts';
import type { PhoneSignalState } from './signal.ts';

/**
 * What a sandbox keeps across restarts (`npm run demo`): its phones with their keys and linked devices,
 * and its groups. Without it a restarted sandbox no longer knows the phones the service's sessions are
 * linked to, refuses their login and the service deletes their credentials. Inboxes, traces and media
 * are not kept.
 */
interface SavedDevice {
  deviceId: number;
  noisePublic: string;
  identityPublic: string;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: string; signature: string };
  preKeys: Array<[number, string]>;
  loggedOut: boolean;
}

interface SavedPhone {
  number: string;
  name: string;
  lid: string;
  identity: { public: string; private: string };
  registrationId: number;
  devices: SavedDevice[];
  signal: PhoneSignalState;
  /** absent in files written before numbers could be hidden or tokens required */
  hideNumber?: boolean;
  requireToken?: boolean;
  tokensIssued?: Array<[string, { token: string; t: number; toldDevices: number[] }]>;
  /** the numbers it has a 1:1 chat with, which a restriction lets go on (absent in older files) */
  chats?: string[];
}

interface SavedGroup extends Omit<SandboxGroup, 'participants'> {
  participants: Array<[string, Role]>;
}

export interface SandboxState {
  version: 1;
  phones: SavedPhone[];
  groups: SavedGroup[];
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const bytes = (text: string): Buffer => Buffer.from(text, 'base64');

const saveDevice = (device: LinkedDevice): SavedDevice => ({
  deviceId: device.deviceId,
  noisePublic: b64(device.noisePublic),
  identityPublic: b64(device.identityPublic),
  registrationId: device.registrationId,
  signedPreKey: {
    keyId: device.signedPreKey.keyId,
    publicKey: b64(device.signedPreKey.publicKey),
    signature: b64(device.signedPreKey.signature),
  },
  preKeys: [...device.preKeys].map(([id, key]) => [id, b64(key)]),
  loggedOut: device.loggedOut,
});

const loadDevice = (saved: SavedDevice): LinkedDevice => ({
  deviceId: saved.deviceId,
  noisePublic: bytes(saved.noisePublic),
  identityPublic: bytes(saved.identityPublic),
  registrationId: saved.registrationId,
  signedPreKey: {
    keyId: saved.signedPreKey.keyId,
    publicKey: bytes(saved.signedPreKey.publicKey),
    signature: bytes(saved.signedPreKey.signature),
  },
  preKeys: new Map(saved.preKeys.map(([id, key]) => [id, bytes(key)])),
  loggedOut: saved.loggedOut,
});

export const sandboxState = (network: SandboxNetwork): SandboxState => ({
  version: 1,
  phones: network.directory.all().map((phone) => ({
    number: phone.number,
    name: phone.name,
    lid: phone.lid,
    identity: { public: b64(phone.identity.public), private: b64(phone.identity.private) },
    registrationId: phone.registrationId,
    devices: [...phone.devices.values()].map(saveDevice),
    signal: phone.signal.state(),
    hideNumber: phone.hideNumber,
    requireToken: phone.requireToken,
    tokensIssued: [...phone.tokensIssued].map(([to, issued]) => [
      to,
      { token: b64(issued.token), t: issued.t, toldDevices: [...issued.toldDevices] },
    ]),
    chats: network.pushback.chatsOf(phone.number),
  })),
  groups: [...network.groups.groups.values()].map((group) => ({ ...group, participants: [...group.participants] })),
});

export const restoreSandboxState = (network: SandboxNetwork, state: SandboxState): void => {
  for (const saved of state.phones) {
    const identity = { public: bytes(saved.identity.public), private: bytes(saved.identity.private) };
    const phone: VirtualPhone = {
      number: saved.number,
      name: saved.name,
      jid: `${saved.number}@s.whatsapp.net`,
      lid: saved.lid,
      identity,
      registrationId: saved.registrationId,
      devices: new Map(saved.devices.map((device) => [device.deviceId, loadDevice(device)])),
      inbox: [],
      inboxIndex: new Map(),
      signal: new PhoneSignal(identity, saved.registrationId, saved.signal),
      hideNumber: saved.hideNumber ?? false,
      requireToken: saved.requireToken ?? false,
      tokensIssued: new Map(
        (saved.tokensIssued ?? []).map(([to, issued]) => [
          to,
          { token: bytes(issued.token), t: issued.t, toldDevices: new Set(issued.toldDevices) },
        ]),
      ),
    };
    network.directory.restore(phone);
    network.pushback.restoreChats(phone.number, saved.chats ?? []);
  }
  for (const group of state.groups) network.groups.groups.set(group.id, { ...group, participants: new Map(group.participants) });
};

export interface StateKeeper {
  /** Writes the state now if it changed since the last write. */
  flush: () => Promise<void>;
  /** Stops watching, after a last flush. */
  close: () => Promise<void>;
}

/**
 * Loads the file if it exists, then writes the state whenever it changed: checked every `everyMs`
 * (a sandbox's state changes with every message, as Signal ratchets turn), and once more on close.
 * Writes go to a temporary file renamed over the old one, so a crash never leaves half a file.
 */
export const keepSandboxState = (network: SandboxNetwork, file: string, logger: Logger, everyMs = 500): StateKeeper => {
  mkdirSync(dirname(file), { recursive: true });
  let last = '';
  try {
    last = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (last) {
    const state = JSON.parse(last) as SandboxState;
    if (state.version !== 1) throw new Error(`${file}: unknown sandbox state version ${String(state.version)}`);
    restoreSandboxState(network, state);
    logger.info({ file, phones: state.phones.length }, 'sandbox state loaded');
  }
  let writing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    writing = writing
      .then(async () => {
        const text = JSON.stringify(sandboxState(network));
        if (text === last) return;
        await writeFile(`${file}.tmp`, text, { mode: 0o600 });
        await rename(`${file}.tmp`, file);
        last = text;
      })
      .catch((err: unknown) => logger.error({ err, file }, 'writing the sandbox state failed'));
    return writing;
  };
  const timer = setInterval(() => void flush(), everyMs);
  timer.unref();
  return {
    flush,
    close: async () => {
      clearInterval(timer);
      await flush();
    },
  };
};
