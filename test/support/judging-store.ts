// A client of an object store that resolves an ambiguous answer to a conditional put (Timeout,
// Unavailable) by reading the key back, through the shared judge (src/store/conditional-write.ts,
// docs/cluster-protocol.md CW1), as S3Store and the simulation's store views do. Over a
// MemoryStore (the server, whose injected faults are answered as they are), it lets a test give
// ControlStore an ambiguous answer without HTTP.
import { putConditionally } from '../../src/store/conditional-write.ts';
import { isStoreError } from '../../src/store/errors.ts';
import type { ObjectStore, PutOptions, PutResult } from '../../src/store/object-store.ts';

/** One attempt: a test's store is not S3, its failures are not retried blindly either way. */
const ATTEMPTS_MAX = 1;

export function judgingClient(server: ObjectStore): ObjectStore {
  const put = (key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> => {
    if (options?.ifNoneMatch === undefined && options?.ifMatch === undefined) return server.put(key, body, options);
    const write = { key, objectKey: key, body, ifNoneMatch: options.ifNoneMatch, ifMatch: options.ifMatch, authorship: options.authorship };
    return putConditionally(write, {
      attempt: () => server.put(key, body, options),
      readBack: () => server.get(key).catch((error: unknown) => (isStoreError(error, 'NotFound') ? null : Promise.reject(error))),
      mayHaveTakenEffect: (error) => error.kind === 'Timeout' || error.kind === 'Unavailable',
      attemptsMax: ATTEMPTS_MAX,
      backoff: async () => {},
    });
  };
  return new Proxy(server, {
    get: (target, name) => {
      if (name === 'put') return put;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
