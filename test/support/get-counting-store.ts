import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';

/** A memory store that counts the GETs it answered (ranged or whole, found or not). */
export class GetCountingStore extends MemoryStore {
  gets = 0;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.gets++;
    return super.get(key, options);
  }
}
