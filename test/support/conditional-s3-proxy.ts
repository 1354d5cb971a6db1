/**
 * A small S3-protocol test endpoint: an HTTP proxy in front of s3rver that adds what s3rver lacks,
 * so the S3 backend's conditional and failure paths run against real HTTP. Test support only,
 * not part of Ferry.
 *
 * - Conditional writes: PUT object and CompleteMultipartUpload (POST ?uploadId=) with
 *   `If-None-Match: *` or `If-Match: <etag>` are checked against a HEAD upstream and answered 412
 *   PreconditionFailed (or, as S3 does for If-Match on an absent key, 404 NoSuchKey). Every
 *   request on an object key is serialised through a per-key lock, so a race is decided
 *   atomically, and so no read overlaps a write: s3rver rewrites objects in place, and a GET
 *   during a PUT can see the new ETag with a truncated body (S3 never shows a partial object).
 * - An access key: any other key id is answered 403 InvalidAccessKeyId, as S3 does.
 * - Faults: the next N requests matching a method and path are answered 503 SlowDown or 500
 *   InternalError without reaching s3rver, or forwarded and then their answer withheld for
 *   `holdMs` (the write took effect but the client does not learn of it).
 */

export type FaultAction = { readonly kind: 'SlowDown' } | { readonly kind: 'InternalError' } | { readonly kind: 'LoseResponse'; readonly holdMs: number };

export interface Fault {
  readonly method: string;
  /** Matches the decoded path, `/bucket/key`. */
  readonly path: RegExp;
  /** How many matching requests it applies to. */
  count: number;
  readonly action: FaultAction;
}

export interface ConditionalS3Proxy {
  readonly endpoint: string;
  /** Requests received, by method, faults and rejections included. */
  readonly received: Record<string, number>;
  inject(fault: Omit<Fault, 'count'> & { count?: number }): void;
  clearFaults(): void;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'host', 'expect', 'content-length']);
const CONDITIONAL = ['if-none-match', 'if-match'];

function s3Error(status: number, code: string, message: string, extra = ''): Response {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}</Error>`;
  return new Response(body, { status, headers: { 'content-type': 'application/xml' } });
}

/** The access key id of a v4-signed request (header or presigned query), or undefined if unsigned. */
function accessKeyOf(request: Request, url: URL): string | undefined {
  const credential = /Credential=([^/,\s]+)/.exec(request.headers.get('authorization') ?? '')?.[1] ?? url.searchParams.get('X-Amz-Credential')?.split('/')[0];
  return credential;
}

function forwardHeaders(headers: Headers): Headers {
  const out = new Headers();
  headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) && !CONDITIONAL.includes(name)) out.set(name, value);
  });
  return out;
}

/** Answers with upstream's status, headers and body; HEAD keeps its Content-Length (the object's size). */
async function relay(upstream: Response, method: string): Promise<Response> {
  const headers = new Headers();
  upstream.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) || (name === 'content-length' && method === 'HEAD')) headers.set(name, value);
  });
  const body = method === 'HEAD' ? null : await upstream.arrayBuffer();
  return new Response(body, { status: upstream.status, headers });
}

/** Serialises async work per key: each caller runs after the previous holder finished. */
class KeyLocks {
  readonly #tails = new Map<string, Promise<void>>();

  async with<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.#tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

export function startConditionalS3Proxy(options: { upstream: string; accessKeyId: string }): ConditionalS3Proxy {
  const faults: Fault[] = [];
  const locks = new KeyLocks();
  const received: Record<string, number> = {};

  const forward = async (request: Request, url: URL, body: ArrayBuffer | null): Promise<Response> => {
    const upstream = await fetch(`${options.upstream}${url.pathname}${url.search}`, { method: request.method, headers: forwardHeaders(request.headers), body, redirect: 'manual' });
    return relay(upstream, request.method);
  };

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      received[request.method] = (received[request.method] ?? 0) + 1;
      const keyId = accessKeyOf(request, url);
      if (keyId !== undefined && keyId !== options.accessKeyId) {
        return s3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', `<AWSAccessKeyId>${keyId}</AWSAccessKeyId>`);
      }
      const body = request.method === 'GET' || request.method === 'HEAD' ? null : await request.arrayBuffer();
      const fault = takeFault(faults, request.method, decodeURIComponent(url.pathname));
      if (fault?.kind === 'SlowDown') return s3Error(503, 'SlowDown', 'Please reduce your request rate.');
      if (fault?.kind === 'InternalError') return s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.');
      const send = (): Promise<Response> => (isObjectWrite(request.method, url) ? conditionalWrite(request, url, body, forward, options.upstream) : forward(request, url, body));
      const response = isObjectRequest(url) ? await locks.with(url.pathname, send) : await send();
      if (fault?.kind === 'LoseResponse') await Bun.sleep(fault.holdMs);
      return response;
    },
  });

  return {
    endpoint: `http://127.0.0.1:${server.port}`,
    received,
    inject(fault) {
      faults.push({ ...fault, count: fault.count ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
    },
    async stop() {
      await server.stop(true);
    },
  };
}

function takeFault(faults: Fault[], method: string, path: string): FaultAction | undefined {
  const index = faults.findIndex((fault) => fault.method === method && fault.path.test(path) && fault.count > 0);
  if (index < 0) return undefined;
  const fault = faults[index]!;
  fault.count--;
  if (fault.count === 0) faults.splice(index, 1);
  return fault.action;
}

/** `/bucket/key...`, as opposed to `/bucket` (list, DeleteObjects, create bucket). */
function isObjectRequest(url: URL): boolean {
  return url.pathname.split('/').filter((segment) => segment !== '').length >= 2;
}

/** PUT object (not a part) and CompleteMultipartUpload: the writes that can carry conditions. */
function isObjectWrite(method: string, url: URL): boolean {
  if (!isObjectRequest(url)) return false;
  if (method === 'PUT') return !url.searchParams.has('uploadId');
  return method === 'POST' && url.searchParams.has('uploadId');
}

async function conditionalWrite(
  request: Request,
  url: URL,
  body: ArrayBuffer | null,
  forward: (request: Request, url: URL, body: ArrayBuffer | null) => Promise<Response>,
  upstream: string,
): Promise<Response> {
  const ifNoneMatch = request.headers.get('if-none-match');
  const ifMatch = request.headers.get('if-match');
  if (ifNoneMatch !== null || ifMatch !== null) {
    const head = await fetch(`${upstream}${url.pathname}`, { method: 'HEAD' });
    const etag = head.ok ? head.headers.get('etag') : null;
    if (ifNoneMatch === '*' && etag !== null) return s3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', '<Condition>If-None-Match</Condition>');
    if (ifMatch !== null && etag === null) return s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
    if (ifMatch !== null && unquote(ifMatch) !== unquote(etag!))
      return s3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', '<Condition>If-Match</Condition>');
  }
  return forward(request, url, body);
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/"/g, '');
}
