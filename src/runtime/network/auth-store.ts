import { BufferJSON, initAuthCreds, proto } from 'baileys';
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap } from 'baileys';
import type { Db } from '../db/client.ts';

const CREDS = 'creds';

export interface StoredAuthState {
  state: AuthenticationState;
  saveCreds: () => Promise<void>;
  /** True when credentials were loaded, i.e. the session can log in without a new QR. */
  registered: boolean;
}

const encode = (value: unknown): string => JSON.stringify(value, BufferJSON.replacer);
const decode = (value: string): unknown => JSON.parse(value, BufferJSON.reviver);

/**
 * Baileys' credentials and Signal keys in our database, one row per key.
 * Each `keys.set` call is one transaction, so a crash never leaves half of a key update behind.
 */
export const loadAuthState = async (db: Db, sessionId: string): Promise<StoredAuthState> => {
  const stored = await db.sessionAuth.findUnique({
    where: { sessionId_type_keyId: { sessionId, type: CREDS, keyId: '' } },
  });
  const creds = stored ? (decode(stored.value) as AuthenticationCreds) : initAuthCreds();

  const get = async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
    const rows = await db.sessionAuth.findMany({ where: { sessionId, type, keyId: { in: ids } } });
    const out: { [id: string]: SignalDataTypeMap[T] } = {};
    for (const row of rows) {
      const value = decode(row.value);
      out[row.keyId] = (
        type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value
      ) as SignalDataTypeMap[T];
    }
    return out;
  };

  const set = async (data: SignalDataSet) => {
    const writes = Object.entries(data).flatMap(([type, entries]) => {
      const ids = Object.keys(entries ?? {});
      if (ids.length === 0) return [];
      const rows = Object.entries(entries ?? {})
        .filter(([, value]) => value !== null && value !== undefined)
        .map(([keyId, value]) => ({ sessionId, type, keyId, value: encode(value) }));
      return [
        db.sessionAuth.deleteMany({ where: { sessionId, type, keyId: { in: ids } } }),
        ...(rows.length > 0 ? [db.sessionAuth.createMany({ data: rows })] : []),
      ];
    });
    if (writes.length > 0) await db.$transaction(writes);
  };

  const saveCreds = async () => {
    const value = encode(creds);
    await db.sessionAuth.upsert({
      where: { sessionId_type_keyId: { sessionId, type: CREDS, keyId: '' } },
      create: { sessionId, type: CREDS, keyId: '', value },
      update: { value },
    });
  };

  return { state: { creds, keys: { get, set } }, saveCreds, registered: Boolean(stored && creds.registered !== false && creds.me) };
};

export const clearAuthState = async (db: Db, sessionId: string): Promise<void> => {
  await db.sessionAuth.deleteMany({ where: { sessionId } });
};
