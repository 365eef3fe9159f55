import { Agent } from 'node:https';
import NodeCache from '@cacheable/node-cache';
import { DEF_MEDIA_HOST, WA_CERT_DETAILS } from 'baileys';
import type { PossiblyExtendedCacheStore, UserFacingSocketConfig } from 'baileys';
import { Agent as UndiciAgent } from 'undici';
import type { Dispatcher } from 'undici';

/** Where the links go, in a form that can cross to the network thread: WhatsApp itself, or a sandbox. */
export interface NetworkTarget {
  sandbox?: SandboxAddress;
}

export interface SandboxAddress {
  /** the sandbox's WebSocket URL, in place of WhatsApp's */
  wsUrl: string;
  /** the certificate of its media host */
  mediaCaPem: string;
  /** the root key its noise certificates are signed with */
  rootPublicKey: Uint8Array;
  /** its media host (`host:port`), where Baileys' downloads by bare directPath (history blobs, from WhatsApp's default media host) go */
  mediaHost?: string;
}

/**
 * Baileys' options for the target. For a sandbox this also makes Baileys in this thread trust the
 * sandbox's root key: Baileys reads WA_CERT_DETAILS at handshake time, and a thread whose links go to
 * a sandbox talks to nothing else.
 */
export const socketOptionsFor = (target: NetworkTarget): Partial<UserFacingSocketConfig> => {
  if (!target.sandbox) return {};
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(target.sandbox.rootPublicKey);
  return {
    waWebSocketUrl: target.sandbox.wsUrl,
    fetchAgent: new Agent({ ca: target.sandbox.mediaCaPem }),
    // Baileys fetches a history blob by its directPath alone, from WhatsApp's media host (Utils/history.js
    // downloadHistory, messages-media.js getUrlFromDirectPath): with this the fetch reaches the sandbox's.
    ...(target.sandbox.mediaHost ? { options: { dispatcher: sandboxMediaDispatcher(target.sandbox) } as RequestInit } : {}),
    shouldSyncHistoryMessage: () => false,
    syncFullHistory: false,
    fireInitQueries: true,
    markOnlineOnConnect: false,
  };
};

/**
 * Baileys downloads with `fetch`, which takes an undici dispatcher rather than the https agent its
 * uploads use: for a sandbox, one that trusts the sandbox's media host.
 */
export const mediaDispatcherFor = (target: NetworkTarget): Dispatcher | undefined =>
  target.sandbox ? sandboxMediaDispatcher(target.sandbox) : undefined;

/** Trusts the sandbox's media host, and sends what is asked of WhatsApp's default media host there. */
const sandboxMediaDispatcher = (sandbox: SandboxAddress): Dispatcher => {
  const agent = new UndiciAgent({ connect: { ca: sandbox.mediaCaPem } });
  const mediaHost = sandbox.mediaHost;
  if (!mediaHost) return agent;
  return agent.compose((dispatch) => (opts, handler) => {
    const origin = opts.origin ? new URL(String(opts.origin)) : undefined;
    if (origin?.host !== DEF_MEDIA_HOST) return dispatch(opts, handler);
    return dispatch(
      { ...opts, origin: `https://${mediaHost}`, headers: { ...(opts.headers as Record<string, string>), host: mediaHost } },
      handler,
    );
  });
};

/** Baileys' cache of contacts' device lists, as Baileys makes it, with its lifetime given in ms. */
export const deviceListCache = (ttlMs: number): PossiblyExtendedCacheStore =>
  new NodeCache({ stdTTL: ttlMs / 1000, useClones: false, deleteOnExpire: true, checkperiod: 0 }) as unknown as PossiblyExtendedCacheStore;
