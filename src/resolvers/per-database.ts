/**
 * A memory kept per database client, so apps sharing a process (tests) never share entries; an entry
 * lives as long as its client.
 */
export const perDatabase = <V>(): ((db: object) => Map<string, V>) => {
  const maps = new WeakMap<object, Map<string, V>>();
  return (db) => {
    let map = maps.get(db);
    if (!map) {
      map = new Map();
      maps.set(db, map);
    }
    return map;
  };
};
