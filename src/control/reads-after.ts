/**
 * Reads that must start after their caller asked (a check after a write: the read must see the
 * world as it is once the write landed), shared by the callers that ask at once. A caller that asks
 * while no read of its key runs starts one; one that asks while a read runs shares the next read,
 * which starts once that one ended: every caller gets a read that began after it asked, and a
 * burst of N callers makes about two reads instead of N (issue 28: a takeover of 500 partitions
 * read one topic record after each of its 500 claims, [C3]).
 */
export class ReadsAfter<T> {
  readonly #read: (key: string) => Promise<T>;
  /** The read of each key under way. */
  readonly #running = new Map<string, Promise<T>>();
  /** The read of each key that starts once the running one ended, for those who asked meanwhile. */
  readonly #queued = new Map<string, Promise<T>>();

  constructor(read: (key: string) => Promise<T>) {
    this.#read = read;
  }

  /** A read of `key` that starts at or after this call. */
  read(key: string): Promise<T> {
    const running = this.#running.get(key);
    if (running === undefined) return this.#start(key);
    let queued = this.#queued.get(key);
    if (queued === undefined) {
      const ended = () => {
        this.#queued.delete(key);
        return this.#start(key);
      };
      queued = running.then(ended, ended);
      this.#queued.set(key, queued);
    }
    return queued;
  }

  #start(key: string): Promise<T> {
    const read = this.#read(key);
    this.#running.set(key, read);
    const ended = () => {
      if (this.#running.get(key) === read) this.#running.delete(key);
    };
    read.then(ended, ended);
    return read;
  }
}
