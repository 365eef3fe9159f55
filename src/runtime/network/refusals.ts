import type { NetworkLink } from '../ports/network.ts';

type Call = (...args: never[]) => unknown;

/**
 * The link with every call that the network refuses (a rejected promise) reported to `refused` before the
 * caller sees the refusal, and awaited: whatever the refusal sets in motion (a rate answer pauses the
 * session) is in place when the caller handles it. Calls answered at once (`newMessageId`) are left as they are.
 */
export const reportingRefusals = (link: NetworkLink, refused: (err: unknown) => Promise<void>): NetworkLink => {
  const wrap = <T extends object>(ops: T): T => {
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(ops)) {
      if (typeof value !== 'function') {
        wrapped[name] = value !== null && typeof value === 'object' ? wrap(value) : value;
        continue;
      }
      const call = value as Call;
      wrapped[name] = (...args: never[]) => {
        const answer = call.apply(ops, args);
        if (!(answer instanceof Promise)) return answer;
        return answer.catch(async (err: unknown) => {
          await refused(err);
          throw err;
        });
      };
    }
    return wrapped as T;
  };
  return wrap(link);
};
