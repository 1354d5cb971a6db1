import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { S3StoreConfig } from './s3-config.ts';

/**
 * The @aws-sdk/client-s3 client, tuned for latency (design: "@aws-sdk/client-s3" notes):
 * - checksums only where S3 requires them (DeleteObjects): a CRC of every PUT and GET body is
 *   CPU on the hot path, and TLS plus our own XXH64 frame checksums already cover integrity;
 * - no `Expect: 100-continue`, which costs a round trip before every body over 2 MB;
 * - bodies signed as UNSIGNED-PAYLOAD (below): the SDK would otherwise SHA-256 every byte;
 * - a keep-alive agent with one socket per request in flight, so no request waits for a
 *   TCP/TLS handshake or for another request's socket;
 * - the SDK's own retries off: s3.ts retries, because only it knows which conditional writes
 *   must be resolved by reading back instead of being resent.
 */

/** Idle keep-alive sockets die after this long; S3 closes idle connections after ~20 s anyway. */
const KEEP_ALIVE_IDLE_MS = 15_000;
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

export interface SdkClient {
  readonly client: S3Client;
  destroy(): void;
}

export function createSdkClient(config: S3StoreConfig): SdkClient {
  const agentOptions = { keepAlive: true, keepAliveMsecs: KEEP_ALIVE_IDLE_MS, maxSockets: config.concurrency, maxFreeSockets: config.concurrency };
  const httpAgent = new HttpAgent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  const client = new S3Client({
    region: config.region,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials === undefined ? {} : { credentials: config.credentials }),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    expectContinueHeader: false,
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ httpAgent, httpsAgent, connectionTimeout: config.requestTimeoutMs }),
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (request.headers !== undefined && request.body instanceof Uint8Array) request.headers['x-amz-content-sha256'] = UNSIGNED_PAYLOAD;
      return next(args);
    },
    { step: 'build', name: 'ferryUnsignedPayload', override: true },
  );
  return {
    client,
    destroy(): void {
      client.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
