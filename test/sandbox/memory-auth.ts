import { BufferJSON, initAuthCreds, proto } from 'baileys';
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap } from 'baileys';

/**
 * An in-memory auth store, kept across sockets the way an app's store would be; given saved credentials
 * and keys, it opens them again (the scale benchmark's floor restarts that way).
 */
export const memoryAuth = (
  creds: AuthenticationCreds = initAuthCreds(),
  keys = new Map<string, string>(),
): { state: AuthenticationState; keys: Map<string, string>; save: () => void } => {
  const state: AuthenticationState = {
    creds,
    keys: {
      get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
        const out: { [id: string]: SignalDataTypeMap[T] } = {};
        for (const id of ids) {
          const v = keys.get(`${type}:${id}`);
          if (!v) continue;
          const value: unknown = JSON.parse(v, BufferJSON.reviver);
          // As rc14's useMultiFileAuthState: an app state key was kept as its protobuf's JSON (bytes as base64).
          out[id] = (
            type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value
          ) as SignalDataTypeMap[T];
        }
        return out;
      },
      set: async (data: SignalDataSet) => {
        for (const [type, entries] of Object.entries(data)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            if (value) keys.set(`${type}:${id}`, JSON.stringify(value, BufferJSON.replacer));
            else keys.delete(`${type}:${id}`);
          }
        }
      },
    },
  };
  return { state, keys, save: () => undefined };
};
