import type { DeleteManyResult, GetResult, ListPage, MultipartUpload, ObjectInfo, ObjectStore, PutResult } from '../../src/store/object-store.ts';
import type { StoreStats } from '../../src/store/stats.ts';

/**
 * A store that accepts every put at once and keeps nothing: no copy, no hash, no timer. The WAL
 * bench times the writer's own CPU cost with it, apart from any store's. Only `put` works.
 */
export class NullStore implements ObjectStore {
  readonly kind = 'null';
  #puts = 0;
  #bytesIn = 0;

  async put(_key: string, body: Uint8Array): Promise<PutResult> {
    this.#puts++;
    this.#bytesIn += body.length;
    return { etag: '' };
  }

  get(): Promise<GetResult> {
    return unsupported('get');
  }

  head(): Promise<ObjectInfo | null> {
    return unsupported('head');
  }

  list(): Promise<ListPage> {
    return unsupported('list');
  }

  delete(): Promise<void> {
    return unsupported('delete');
  }

  deleteMany(): Promise<DeleteManyResult> {
    return unsupported('deleteMany');
  }

  createMultipartUpload(): Promise<MultipartUpload> {
    return unsupported('createMultipartUpload');
  }

  stats(): StoreStats {
    const requests = { put: this.#puts, get: 0, head: 0, list: 0, delete: 0, multipartCreate: 0, uploadPart: 0, multipartComplete: 0, multipartAbort: 0 };
    return { requests, bytesIn: this.#bytesIn, bytesOut: 0, errors: {} };
  }

  async close(): Promise<void> {}
}

function unsupported(operation: string): Promise<never> {
  return Promise.reject(new Error(`NullStore does not support ${operation}; it only swallows puts`));
}
