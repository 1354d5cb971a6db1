'use strict';
/**
 * Starts s3rver (npm) on 127.0.0.1, port 0, over a fresh temp directory, and prints one JSON line
 * `{"port": N}` on stdout when it listens. Run by test/support/s3rver.ts under
 * `node --openssl-legacy-provider` (s3rver signs ListObjectsV2 continuation tokens with DES).
 *
 * Lifetime: the process exits when its stdin closes, so a parent that dies without cleaning up
 * (a crashed test run, SIGKILL) never leaves a server behind; the temp directory goes with it.
 *
 * Two gaps in s3rver 3.7 are filled here, as S3 behaves, so the suite tests Ferry and not them:
 * - it has no AbortMultipartUpload (DELETE ?uploadId answers 405): answered here by removing the
 *   upload's directory from s3rver's store;
 * - UploadPart and CompleteMultipartUpload on an upload that is gone answer 500 (a failed file
 *   read): answered here with S3's 404 NoSuchUpload.
 */
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const S3rver = require('s3rver');

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-s3rver-'));
const s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
const handle = s3rver.callback();

function noSuchUpload(response, uploadId) {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message><UploadId>${uploadId}</UploadId></Error>`;
  response.writeHead(404, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function uploadDirectoryOf(url) {
  const bucket = decodeURIComponent(url.pathname.split('/')[1] || '');
  const uploadId = path.basename(url.searchParams.get('uploadId') || 'none');
  return path.join(s3rver.store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
}

function abortMultipartUpload(request, response, url) {
  request.resume();
  fs.rmSync(uploadDirectoryOf(url), { recursive: true, force: true });
  response.writeHead(204);
  response.end();
}

const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  if (url.searchParams.has('uploadId') && !fs.existsSync(uploadDirectoryOf(url))) {
    request.resume();
    return noSuchUpload(response, url.searchParams.get('uploadId'));
  }
  if (request.method === 'DELETE' && url.searchParams.has('uploadId')) return abortMultipartUpload(request, response, url);
  return handle(request, response);
});

function shutdown() {
  server.close();
  fs.rmSync(directory, { recursive: true, force: true });
  process.exit(0);
}

process.stdin.on('end', shutdown);
process.stdin.on('error', shutdown);
process.stdin.resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
