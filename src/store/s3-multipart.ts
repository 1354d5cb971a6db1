import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, HeadObjectCommand, ListPartsCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { StoreError, isStoreError } from './errors.ts';
import { MULTIPART_PART_BYTES_MIN, type MultipartUpload, type PutResult, type UploadedPart } from './object-store.ts';
import { failureFromSdk, mayHaveTakenEffect, where, type RequestContext } from './s3-errors.ts';
import type { S3Requests } from './s3-requests.ts';
import { checkPartBody, checkPartList, checkPartNumber, checkPartSizes } from './validate.ts';

/**
 * One multipart upload on S3. Parts are checked against S3's limits before anything is sent, so
 * a bad part fails the same way (InvalidArgument naming the part) on every endpoint, including
 * S3-compatible servers that do not enforce them. Nothing is visible under the key until
 * CompleteMultipartUpload succeeds; that is S3's guarantee, and the test suite checks it.
 */
export class S3MultipartUpload implements MultipartUpload {
  readonly key: string;
  readonly uploadId: string;
  readonly #fullKey: string;
  readonly #bucket: string;
  readonly #client: S3Client;
  readonly #requests: S3Requests;
  readonly #ifNoneMatch: boolean;

  constructor(deps: { client: S3Client; requests: S3Requests; bucket: string }, key: string, fullKey: string, uploadId: string, ifNoneMatch: boolean) {
    this.key = key;
    this.uploadId = uploadId;
    this.#fullKey = fullKey;
    this.#bucket = deps.bucket;
    this.#client = deps.client;
    this.#requests = deps.requests;
    this.#ifNoneMatch = ifNoneMatch;
  }

  /** UploadPart is idempotent (same number, same bytes), so every retriable failure is retried. */
  async uploadPart(partNumber: number, body: Uint8Array): Promise<UploadedPart> {
    const context = this.#context('UploadPart');
    this.#requests.checkOpen(context);
    checkPartNumber(this.key, partNumber);
    checkPartBody(this.key, partNumber, body);
    const output = await this.#requests.run({
      requestClass: 'uploadPart',
      context,
      bytesIn: body.byteLength,
      send: (abortSignal) =>
        this.#client.send(new UploadPartCommand({ Bucket: this.#bucket, Key: this.#fullKey, UploadId: this.uploadId, PartNumber: partNumber, Body: body, ContentLength: body.byteLength }), {
          abortSignal,
        }),
    });
    return { partNumber, etag: output.ETag ?? '', size: body.byteLength };
  }

  async complete(parts: readonly UploadedPart[]): Promise<PutResult> {
    const context = this.#context('CompleteMultipartUpload');
    this.#requests.checkOpen(context);
    checkPartList(this.key, parts);
    checkPartSizes(this.key, parts, MULTIPART_PART_BYTES_MIN);
    for (let attempt = 1; ; attempt++) {
      let error: StoreError;
      try {
        return await this.#requests.attempt({ requestClass: 'multipartComplete', context, send: (signal) => this.#sendComplete(parts, signal) });
      } catch (caught) {
        if (!isStoreError(caught)) throw caught;
        error = caught;
      }
      if (mayHaveTakenEffect(error)) {
        const etag = await this.#resolveUnknownCompletion(error);
        if (etag !== null) return { etag };
      }
      if (!error.retriable || attempt >= this.#requests.policy.attempts) throw error;
      await this.#requests.backoff(attempt, undefined);
    }
  }

  /** Aborting an upload that is already gone (aborted, or never existed) succeeds: nothing is left either way. */
  async abort(): Promise<void> {
    const context = this.#context('AbortMultipartUpload');
    try {
      await this.#requests.run({
        requestClass: 'multipartAbort',
        context,
        send: (abortSignal) => this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#fullKey, UploadId: this.uploadId }), { abortSignal }),
      });
    } catch (error) {
      if (!isStoreError(error, 'NotFound') || failureFromSdk(error.cause).code === 'NoSuchBucket') throw error;
    }
  }

  async #sendComplete(parts: readonly UploadedPart[], abortSignal: AbortSignal): Promise<PutResult> {
    const output = await this.#client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.#bucket,
        Key: this.#fullKey,
        UploadId: this.uploadId,
        MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) },
        MpuObjectSize: parts.reduce((sum, part) => sum + part.size, 0),
        ...(this.#ifNoneMatch ? { IfNoneMatch: '*' } : {}),
      }),
      { abortSignal },
    );
    return { etag: output.ETag ?? '' };
  }

  /**
   * A completion whose answer was lost: if the object exists and our upload no longer does, our
   * completion made it (we never abort an upload we are completing): return its ETag. If the
   * object is absent, nothing landed: null, send the completion again (the upload id makes that
   * safe: it can complete at most once). If both exist, another writer's object holds the key.
   */
  async #resolveUnknownCompletion(error: StoreError): Promise<string | null> {
    const head = await this.#requests
      .run({
        requestClass: 'head',
        context: this.#context('HeadObject'),
        send: (abortSignal) => this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#fullKey }), { abortSignal }),
      })
      .catch((headError: unknown) => (isStoreError(headError, 'NotFound') ? null : Promise.reject(headError)));
    if (head === null) return null;
    const uploadAlive = await this.#requests
      .run({
        requestClass: 'list',
        context: this.#context('ListParts'),
        send: (abortSignal) => this.#client.send(new ListPartsCommand({ Bucket: this.#bucket, Key: this.#fullKey, UploadId: this.uploadId, MaxParts: 1 }), { abortSignal }),
      })
      .then(
        () => true,
        (listError: unknown) => (isStoreError(listError, 'NotFound') ? false : Promise.reject(outcomeUnknown(this.#context('CompleteMultipartUpload'), error, listError))),
      );
    if (!uploadAlive) return head.ETag ?? '';
    if (!this.#ifNoneMatch) return null;
    throw new StoreError('PreconditionFailed', `CompleteMultipartUpload ${this.#bucket}/${this.#fullKey}: If-None-Match: * failed: another writer's object is under the key`, {
      key: this.key,
      cause: error,
    });
  }

  #context(operation: string): RequestContext {
    return { operation, bucket: this.#bucket, key: this.key, objectKey: this.#fullKey };
  }
}

function outcomeUnknown(context: RequestContext, error: StoreError, cause: unknown): StoreError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StoreError(error.kind, `${context.operation} ${where(context)}: outcome unknown (${error.message}); checking the upload failed: ${detail}`, {
    ...(context.key === undefined ? {} : { key: context.key }),
    cause,
  });
}
