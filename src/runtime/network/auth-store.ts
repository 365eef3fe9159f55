import { BufferJSON, initAuthCreds, proto } from 'baileys';
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap } from 'baileys';
import { Prisma } from '../../generated/sqlite/client.ts';
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

  /** One statement per call: upsert what has a value, delete what was set to null. */
  const set = async (data: SignalDataSet) => {
    const upserts: Array<[string, string, string]> = [];
    const deletes: Array<[string, string]> = [];
    for (const [type, entries] of Object.entries(data)) {
      for (const [keyId, value] of Object.entries(entries ?? {})) {
        if (value === null || value === undefined) deletes.push([type, keyId]);
        else upserts.push([type, keyId, encode(value)]);
      }
    }
    const statements = [];
    if (upserts.length > 0) {
      const rows = Prisma.join(upserts.map(([type, keyId, value]) => Prisma.sql`(${sessionId}, ${type}, ${keyId}, ${value})`));
      statements.push(
        db.$executeRaw`INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value") VALUES ${rows}
          ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value"`,
      );
    }
    if (deletes.length > 0) {
      const keys = Prisma.join(deletes.map(([type, keyId]) => Prisma.sql`(${type}, ${keyId})`));
      statements.push(db.$executeRaw`DELETE FROM "SessionAuth" WHERE "sessionId" = ${sessionId} AND ("type", "keyId") IN (VALUES ${keys})`);
    }
    if (statements.length === 1) await statements[0];
    else if (statements.length > 1) await db.$transaction(statements);
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
