/** Request classes as S3 bills them. */
export type RequestClass = 'put' | 'get' | 'head' | 'list' | 'delete' | 'multipartCreate' | 'uploadPart' | 'multipartComplete' | 'multipartAbort';

export const REQUEST_CLASSES: readonly RequestClass[] = ['put', 'get', 'head', 'list', 'delete', 'multipartCreate', 'uploadPart', 'multipartComplete', 'multipartAbort'];

export interface StoreStats {
  /** Requests sent, by class, including ones that failed (AWS bills those too). */
  readonly requests: Readonly<Record<RequestClass, number>>;
  /** Body bytes uploaded (puts and parts) and downloaded (gets). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Failed requests by error kind. */
  readonly errors: Readonly<Record<string, number>>;
}

/** A mutable tally each backend keeps; `snapshot()` is what `ObjectStore.stats()` returns. */
export class StatsRecorder {
  readonly #requests = Object.fromEntries(REQUEST_CLASSES.map((c) => [c, 0])) as Record<RequestClass, number>;
  readonly #errors: Record<string, number> = {};
  #bytesIn = 0;
  #bytesOut = 0;

  request(kind: RequestClass, bytesIn = 0, bytesOut = 0): void {
    this.#requests[kind]++;
    this.#bytesIn += bytesIn;
    this.#bytesOut += bytesOut;
  }

  received(bytes: number): void {
    this.#bytesOut += bytes;
  }

  error(kind: string): void {
    this.#errors[kind] = (this.#errors[kind] ?? 0) + 1;
  }

  snapshot(): StoreStats {
    return { requests: { ...this.#requests }, bytesIn: this.#bytesIn, bytesOut: this.#bytesOut, errors: { ...this.#errors } };
  }
}
