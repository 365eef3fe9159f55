const running = new Map<string, Promise<void>>();

/**
 * Runs the work of one key after the work of that key already started has finished, in the order the
 * calls were made; different keys run side by side. Resolves or rejects as the work does.
 */
export const oneAtATime = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
  const previous = running.get(key) ?? Promise.resolve();
  const mine = previous.then(work, work);
  const tail = mine.then(
    () => undefined,
    () => undefined,
  );
  running.set(key, tail);
  try {
    return await mine;
  } finally {
    if (running.get(key) === tail) running.delete(key);
  }
};
