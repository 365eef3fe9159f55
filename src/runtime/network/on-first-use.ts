import type { Network } from '../ports/network.ts';

/**
 * A network built when it is first needed, or when `prepare` asks for it: the links of this thread load
 * Baileys (with libsignal and WhatsApp's protobufs, about 25 MB), which a process whose links live on
 * the network thread never needs on this one. The service prepares it once it listens (main.ts); an
 * in-process test app loads it with its first link.
 */
export const onFirstUse = (load: () => Promise<Network>): Network => {
  let loading: Promise<Network> | undefined;
  const loaded = () => {
    loading ??= load();
    return loading;
  };
  return {
    open: async (sessionId, callbacks) => (await loaded()).open(sessionId, callbacks),
    forget: async (sessionId) => (await loaded()).forget(sessionId),
    hasCredentials: async (sessionId) => (await loaded()).hasCredentials(sessionId),
    downloadMedia: async (media) => (await loaded()).downloadMedia(media),
    prepare: async () => {
      await loaded();
    },
    close: async () => (loading ? (await loading).close() : undefined),
    collectGarbage: async () => (loading ? (await loading).collectGarbage() : undefined),
    networkStats: async () => (loading ? (await loading).networkStats() : undefined),
  };
};
