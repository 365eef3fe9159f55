import type { SandboxAddress } from '../network/baileys-target.ts';

/** For a service in another process: reads the sandbox's address and root key from its control API. */
export const connectToSandbox = async (controlUrl: string): Promise<SandboxAddress> => {
  const res = await fetch(new URL('/info', controlUrl));
  if (!res.ok) throw new Error(`the sandbox at ${controlUrl} answered HTTP ${res.status}`);
  const info = (await res.json()) as { wsUrl: string; rootPublicKey: string; mediaCaPem: string };
  return { wsUrl: info.wsUrl, mediaCaPem: info.mediaCaPem, rootPublicKey: Buffer.from(info.rootPublicKey, 'base64') };
};
