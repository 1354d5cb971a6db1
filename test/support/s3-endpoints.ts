import { afterAll, beforeAll } from 'bun:test';
import { type ConditionalS3Proxy, startConditionalS3Proxy } from './conditional-s3-proxy.ts';
import { S3RVER_ACCESS_KEY_ID, type S3rver, startS3rver } from './s3rver.ts';

/** s3rver and the conditional proxy in front of it, started once for the test file that calls this. */
export function useS3Endpoints(): { s3rver: () => S3rver; proxy: () => ConditionalS3Proxy } {
  let s3rver: S3rver | undefined;
  let proxy: ConditionalS3Proxy | undefined;
  beforeAll(async () => {
    s3rver = await startS3rver();
    proxy = startConditionalS3Proxy({ upstream: s3rver.endpoint, accessKeyId: S3RVER_ACCESS_KEY_ID });
  });
  afterAll(async () => {
    await proxy?.stop();
    await s3rver?.stop();
  });
  return { s3rver: () => s3rver!, proxy: () => proxy! };
}
