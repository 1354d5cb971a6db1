/** Request classes as S3 bills them. */
export type RequestClass = 'put' | 'get' | 'head' | 'list' | 'delete' | 'multipartCreate' | 'uploadPart' | 'multipartComplete' | 'multipartAbort';

/** Every request class, in a fixed order (tables, Prometheus labels). */
export const REQUEST_CLASSES: readonly RequestClass[] = ['put', 'get', 'head', 'list', 'delete', 'multipartCreate', 'uploadPart', 'multipartComplete', 'multipartAbort'];

/** What a store did since it was opened: its requests, bytes and failures. */
export interface StoreStats {
  /** Requests sent, by class, including ones that failed (AWS bills those too). */
  readonly requests: Readonly<Record<RequestClass, number>>;
  /** Body bytes uploaded (puts and parts). */
  readonly bytesIn: number;
  /** Body bytes downloaded (gets). */
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

  /** Counts one request of `kind` and the body bytes it sent and received. */
  request(kind: RequestClass, bytesIn = 0, bytesOut = 0): void {
    this.#requests[kind]++;
    this.#bytesIn += bytesIn;
    this.#bytesOut += bytesOut;
  }

  /** Counts bytes received after the request was counted (a streamed body). */
  received(bytes: number): void {
    this.#bytesOut += bytes;
  }

  /** Counts one failed request by its error kind. */
  error(kind: string): void {
    this.#errors[kind] = (this.#errors[kind] ?? 0) + 1;
  }

  /** The tallies now, as an immutable copy. */
  snapshot(): StoreStats {
    return { requests: { ...this.#requests }, bytesIn: this.#bytesIn, bytesOut: this.#bytesOut, errors: { ...this.#errors } };
  }
}
