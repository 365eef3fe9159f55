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

  // Keys known to be absent. Baileys asks for some (privacy tokens) on every send; every write goes
  // through this store, so a miss stays a miss until `set` writes that key.
  const missing = new Set<string>();
  const get = async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
    const out: { [id: string]: SignalDataTypeMap[T] } = {};
    const wanted = ids.filter((id) => !missing.has(`${type}\u0000${id}`));
    if (wanted.length === 0) return out;
    const rows = await db.sessionAuth.findMany({ where: { sessionId, type, keyId: { in: wanted } } });
    const found = new Set(rows.map((r) => r.keyId));
    for (const id of wanted) if (!found.has(id)) missing.add(`${type}\u0000${id}`);
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
        missing.delete(`${type}\u0000${keyId}`);
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
    // Raw, so the (large) credentials row is not read back after every write.
    await db.$executeRaw`INSERT INTO "SessionAuth" ("sessionId", "type", "keyId", "value") VALUES (${sessionId}, ${CREDS}, '', ${encode(creds)})
      ON CONFLICT ("sessionId", "type", "keyId") DO UPDATE SET "value" = excluded."value"`;
  };

  return { state: { creds, keys: { get, set } }, saveCreds, registered: Boolean(stored && creds.registered !== false && creds.me) };
};

export const clearAuthState = async (db: Db, sessionId: string): Promise<void> => {
  await db.sessionAuth.deleteMany({ where: { sessionId } });
};
