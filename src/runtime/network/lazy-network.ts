import type { Network } from '../ports/network.ts';

/**
 * A network whose modules load on its first use: the links on this thread (NETWORK_THREAD=false) need
 * Baileys here, while with the network thread this thread never loads it.
 */
export const lazyNetwork = (load: () => Promise<Network>): Network => {
  let loading: Promise<Network> | undefined;
  const network = () => {
    loading ??= load();
    return loading;
  };
  return {
    open: async (sessionId, callbacks) => (await network()).open(sessionId, callbacks),
    forget: async (sessionId) => (await network()).forget(sessionId),
    hasCredentials: async (sessionId) => (await network()).hasCredentials(sessionId),
    downloadMedia: async (media) => (await network()).downloadMedia(media),
    close: async () => {
      if (loading) await (await loading).close();
    },
    collectGarbage: async () => {
      if (loading) await (await loading).collectGarbage();
    },
    threadStats: async () => (loading ? (await loading).threadStats() : undefined),
  };
};
