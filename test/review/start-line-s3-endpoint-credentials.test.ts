// Review finding (issue 14): the start line's redaction (src/observability/redact.ts) redacts a
// store URL's own user info and secret-named query parameters, but not a URL nested in one: an S3
// URL's `endpoint=` (an S3-compatible server, e.g. MinIO behind a proxy) with credentials in its
// user info reaches the start line whole. s3-config.ts refuses user info in the s3:// URL itself but
// accepts it in endpoint=, so such a broker starts and logs the password.
import { expect, test } from 'bun:test';
import { resolveBrokerConfig } from '../../src/cli/broker-config.ts';
import { startFields } from '../../src/cli/start-fields.ts';

test('the start line does not carry the password of an endpoint= URL inside the S3 store URL', () => {
  const { config } = resolveBrokerConfig({
    flags: { 'wal-store': 's3://bucket/wal?region=us-east-1&endpoint=http://minio:ENDPOINT-PASSWORD@127.0.0.1:9000' },
    env: {},
  });
  const line = JSON.stringify(startFields(config, '/data', 9092, 's3'));
  expect(line).toContain('bucket/wal'); // the store is still named
  expect(line).not.toContain('ENDPOINT-PASSWORD');
});
