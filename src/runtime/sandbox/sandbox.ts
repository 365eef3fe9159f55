import type { UserFacingSocketConfig } from 'baileys';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { socketOptionsFor } from '../network/baileys-target.ts';
import type { SandboxAddress } from '../network/baileys-target.ts';
import type { AddressingMode } from './addressing.ts';
import { startBartender } from './bartender.ts';
import type { BartenderEndpoint, BartenderOptions } from './bartender.ts';
import { createCertificates } from './certs.ts';
import { SandboxControl } from './control.ts';
import { startControlApi } from './control-api.ts';
import { Directory } from './directory.ts';
import { SandboxNetwork } from './network.ts';
import { keepSandboxState } from './state.ts';
import { Trace } from './trace.ts';

export interface StartSandboxOptions {
  port?: number;
  /** the HTTP control API's port; 0 picks a free one */
  controlPort?: number;
  host?: string;
  logger?: Logger;
  /** also serve Baileys' mock-server layout (one TLS port: /ws/chat, the QR scan, media); port 0 picks one */
  bartender?: Partial<Omit<BartenderOptions, 'host'>>;
  /** a JSON file the sandbox loads its phones, keys, linked devices and groups from, and keeps them in */
  stateFile?: string;
  /** how the network names phones: by LID with the number beside it (today's WhatsApp, the default), or by phone number */
  addressing?: AddressingMode;
  /**
   * On a `pn` network, whether usync answers a number's LID and privacy tokens carry `sender_lid`
   * (default true); false is the network before LIDs, where Baileys keys Signal sessions by number
   */
  revealLids?: boolean;
}

export interface Sandbox {
  /** what Baileys' `waWebSocketUrl` must be */
  wsUrl: string;
  /** the HTTP+JSON control API (GET /info, /phones...) */
  controlUrl: string;
  /** the root key Baileys must trust (see trustSandbox) */
  rootPublicKey: Uint8Array;
  /** the media host's self-signed certificate, which Baileys' fetchAgent must trust */
  mediaCaPem: string;
  /** the media host, `host:port` */
  mediaHost: string;
  control: SandboxControl;
  network: SandboxNetwork;
  addressing: AddressingMode;
  /** the bartender-compatible endpoint, when asked for */
  bartender?: BartenderEndpoint;
  close: () => Promise<void>;
}

/** Starts the loopback WhatsApp network in this process. */
export const startSandbox = async (options: StartSandboxOptions = {}): Promise<Sandbox> => {
  const logger = options.logger ?? pino({ level: 'silent' });
  const certs = createCertificates();
  const directory = new Directory();
  const trace = new Trace();
  const addressing = options.addressing ?? 'lid';
  const network = new SandboxNetwork(directory, certs, logger, trace, {
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    addressing,
    revealLids: options.revealLids,
  });
  const state = options.stateFile ? keepSandboxState(network, options.stateFile, logger) : undefined;
  const wsUrl = await network.server.listen();
  await network.media.start(options.host ?? '127.0.0.1');
  const control = new SandboxControl(network);
  const bartender = options.bartender
    ? await startBartender(
        network,
        { ...options.bartender, port: options.bartender.port ?? 8080, host: options.host ?? '127.0.0.1' },
        logger,
      ).catch(async (err: unknown) => {
        await network.server.close();
        await network.media.close();
        throw err;
      })
    : undefined;
  const api = await startControlApi(
    control,
    () => ({
      wsUrl,
      addressing,
      rootPublicKey: Buffer.from(certs.root.public).toString('base64'),
      mediaCaPem: network.media.certPem,
      mediaHost: network.media.hostname,
      ...(bartender ? { bartender: { socketUrl: bartender.url, adminUrl: bartender.adminUrl, caPem: bartender.caPem } } : {}),
    }),
    { port: options.controlPort ?? 0, host: options.host ?? '127.0.0.1' },
  );
  return {
    wsUrl,
    controlUrl: api.url,
    rootPublicKey: certs.root.public,
    mediaCaPem: network.media.certPem,
    mediaHost: network.media.hostname,
    addressing,
    control,
    network,
    bartender,
    close: async () => {
      control.dispose();
      await bartender?.close();
      await new Promise<void>((resolve) => {
        api.server.close(() => resolve());
        api.server.closeAllConnections();
      });
      await network.server.close();
      await network.media.close();
      await state?.close();
    },
  };
};

/** Makes Baileys in this thread accept the sandbox's certificate chain (for sockets made by hand). */
export const trustSandbox = (rootPublicKey: Uint8Array): void => {
  socketOptionsFor({ sandbox: { wsUrl: '', mediaCaPem: '', rootPublicKey } });
};

/** What a client needs to reach this sandbox, in a form that can cross to another thread. */
export const sandboxAddress = (
  sandbox: Pick<Sandbox, 'wsUrl' | 'mediaCaPem' | 'rootPublicKey'> & Partial<Pick<Sandbox, 'mediaHost'>>,
): SandboxAddress => ({
  wsUrl: sandbox.wsUrl,
  mediaCaPem: sandbox.mediaCaPem,
  rootPublicKey: sandbox.rootPublicKey,
  ...(sandbox.mediaHost ? { mediaHost: sandbox.mediaHost } : {}),
});

/** The socket options of a Baileys client made by hand against the sandbox (and trust in its root key). */
export const sandboxSocketOptions = (
  sandbox: Pick<Sandbox, 'wsUrl' | 'mediaCaPem' | 'rootPublicKey'> & Partial<Pick<Sandbox, 'mediaHost'>>,
): Partial<UserFacingSocketConfig> => socketOptionsFor({ sandbox: sandboxAddress(sandbox) });

export { connectToSandbox } from './address.ts';
