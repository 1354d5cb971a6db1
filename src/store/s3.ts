import type { Logger } from '../observability/logger.ts';
import { CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../util/clock.ts';
import { SeededRandom, type Random } from '../util/random.ts';
import { StoreError, isStoreError } from './errors.ts';
import {
  DELETE_BATCH_KEYS_MAX,
  KEY_BYTES_MAX,
  type ByteRange,
  type DeleteManyResult,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type MultipartOptions,
  type MultipartUpload,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from './object-store.ts';
import { StatsRecorder, type StoreStats } from './stats.ts';
import { BunS3, bunCarriesKey } from './bun-s3.ts';
import { readBody } from './s3-body.ts';
import { createSdkClient, type SdkClient } from './s3-client.ts';
import type { CurrentObject } from './conditional-write.ts';
import { putConditionallyOnS3 } from './s3-conditional.ts';
import { isDirectoryBucket, parseS3Url, resolveS3Config, type S3StoreConfig, type S3StoreOptions } from './s3-config.ts';
import { failureFromSdk, mapS3Failure, type RequestContext } from './s3-errors.ts';
import { S3MultipartUpload } from './s3-multipart.ts';
import { fitToRange, rangeHeader, sizeFromContentRange } from './s3-range.ts';
import { S3Requests } from './s3-requests.ts';
import { retryPolicy } from './s3-retry.ts';
import { checkKey, checkListOptions, checkPutOptions, checkRangeShape, invalidArgument, showKey } from './validate.ts';

/** Injected so a simulation can drive backoff waits and jitter (docs/design.md contract 8). */
export interface S3StoreDeps {
  readonly clock?: Clock;
  readonly random?: Random;
  /** Where a request that failed after all its retries is said (component store); silent by default. */
  readonly logger?: Logger;
}

/**
 * The ObjectStore on Amazon S3, S3 Express One Zone directory buckets, or any S3-compatible
 * server, through @aws-sdk/client-s3 (conditional writes, multipart, listing, deletes) and, for
 * unconditional GETs and PUTs on general purpose buckets, Bun's native S3 signer (bun-s3.ts).
 * Keys live under the configured prefix. See docs/object-store-s3.md.
 */
export class S3Store implements ObjectStore {
  readonly kind = 's3';
  readonly config: S3StoreConfig;
  readonly #sdk: SdkClient;
  readonly #bun: BunS3 | null;
  readonly #stats = new StatsRecorder();
  readonly #requests: S3Requests;

  /** `s3://bucket/optional/prefix?region=...&endpoint=...`; see s3-config.ts for every parameter. */
  static fromUrl(url: URL, env: Record<string, string | undefined> = process.env, deps: S3StoreDeps = {}): S3Store {
    return new S3Store({ ...parseS3Url(url, env), ...deps });
  }

  constructor(options: S3StoreOptions & S3StoreDeps) {
    this.config = resolveS3Config(options);
    this.#sdk = createSdkClient(this.config);
    this.#requests = new S3Requests({
      clock: options.clock ?? systemClock,
      random: options.random ?? new SeededRandom(randomBytes(4).readUInt32LE(0)),
      stats: this.#stats,
      timeoutMs: this.config.requestTimeoutMs,
      policy: retryPolicy(this.config.maxAttempts),
      logger: options.logger,
    });
    this.#bun = this.config.bunS3 ? new BunS3(this.config, this.#sdk.client) : null;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const context = this.#context('PutObject', key);
    checkPutOptions(key, options);
    const objectKey = context.objectKey!;
    const spec = {
      requestClass: 'put' as const,
      context,
      bytesIn: body.byteLength,
      signal: options.signal,
      send: (signal: AbortSignal) => this.#sendPut(objectKey, body, options, signal),
    };
    if (options.ifNoneMatch === undefined && options.ifMatch === undefined) return this.#requests.run(spec);
    const write = { key, objectKey, body, ifNoneMatch: options.ifNoneMatch, ifMatch: options.ifMatch, authorship: options.authorship, signal: options.signal };
    return putConditionallyOnS3(this.#requests, write, spec, () => this.#readBack(key, options.signal));
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    const context = this.#context('GetObject', key);
    if (options.range !== undefined) checkRangeShape(key, options.range);
    const result = await this.#requests.run({
      requestClass: 'get',
      context,
      signal: options.signal,
      send: (signal) => this.#sendGet(context, options.range, signal),
    });
    this.#requests.received(result.body.byteLength);
    return result;
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const context = this.#context('HeadObject', key);
    try {
      const output = await this.#requests.run({
        requestClass: 'head',
        context,
        send: (abortSignal) => this.#sdk.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: context.objectKey }), { abortSignal }),
      });
      return { key, size: output.ContentLength ?? 0, etag: output.ETag ?? '' };
    } catch (error) {
      if (isStoreError(error, 'NotFound')) return null;
      throw error;
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const maxKeys = checkListOptions(options);
    const context: RequestContext = { operation: 'ListObjectsV2', bucket: this.config.bucket, objectKey: `${this.config.prefix}${prefix}*` };
    const wanted = `${this.config.prefix}${prefix}`;
    // Directory buckets list only prefixes that end in '/': list the enclosing directory and filter.
    const listed = isDirectoryBucket(this.config.bucket) ? wanted.slice(0, wanted.lastIndexOf('/') + 1) : wanted;
    const output = await this.#requests.run({
      requestClass: 'list',
      context,
      send: (abortSignal) =>
        this.#sdk.client.send(
          new ListObjectsV2Command({ Bucket: this.config.bucket, Prefix: listed, MaxKeys: maxKeys, ...(options.token === undefined ? {} : { ContinuationToken: options.token }) }),
          { abortSignal },
        ),
    });
    const objects = (output.Contents ?? [])
      .filter((object) => object.Key?.startsWith(wanted))
      .map((object) => ({ key: object.Key!.slice(this.config.prefix.length), size: object.Size ?? 0, etag: object.ETag ?? '' }));
    return output.IsTruncated === true && output.NextContinuationToken !== undefined ? { objects, nextToken: output.NextContinuationToken } : { objects };
  }

  async delete(key: string): Promise<void> {
    const context = this.#context('DeleteObject', key);
    try {
      await this.#requests.run({
        requestClass: 'delete',
        context,
        send: (abortSignal) => this.#sdk.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: context.objectKey }), { abortSignal }),
      });
    } catch (error) {
      if (!isStoreError(error, 'NotFound') || failureFromSdk(error.cause).code === 'NoSuchBucket') throw error;
    }
  }

  /** DeleteObjects in batches of at most 1000 keys, `Quiet` so S3 lists only the failures. */
  async deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    const contexts = keys.map((key) => this.#context('DeleteObjects', key));
    const result: DeleteManyResult = { deleted: [], failed: [] };
    for (let start = 0; start < contexts.length; start += DELETE_BATCH_KEYS_MAX) {
      await this.#deleteBatch(contexts.slice(start, start + DELETE_BATCH_KEYS_MAX), result);
    }
    return result;
  }

  async createMultipartUpload(key: string, options: MultipartOptions = {}): Promise<MultipartUpload> {
    const context = this.#context('CreateMultipartUpload', key);
    const output = await this.#requests.run({
      requestClass: 'multipartCreate',
      context,
      send: (abortSignal) => this.#sdk.client.send(new CreateMultipartUploadCommand({ Bucket: this.config.bucket, Key: context.objectKey }), { abortSignal }),
    });
    if (output.UploadId === undefined) throw new StoreError('Unavailable', `CreateMultipartUpload ${this.config.bucket}/${context.objectKey}: no UploadId in the answer`, { key });
    const deps = { client: this.#sdk.client, requests: this.#requests, bucket: this.config.bucket };
    return new S3MultipartUpload(deps, key, context.objectKey!, output.UploadId, options.ifNoneMatch === '*');
  }

  stats(): StoreStats {
    return this.#stats.snapshot();
  }

  async close(): Promise<void> {
    this.#requests.close();
    this.#sdk.destroy();
  }

  async #sendPut(objectKey: string, body: Uint8Array, options: PutOptions, abortSignal: AbortSignal): Promise<PutResult> {
    const unconditional = options.ifNoneMatch === undefined && options.ifMatch === undefined;
    if (this.#bun !== null && unconditional && bunCarriesKey(objectKey)) return this.#bun.put(objectKey, body, abortSignal);
    const output = await this.#sdk.client.send(
      new PutObjectCommand({
        Bucket: this.config.bucket,
        Key: objectKey,
        Body: body,
        ContentLength: body.byteLength,
        ...(options.ifNoneMatch === undefined ? {} : { IfNoneMatch: options.ifNoneMatch }),
        ...(options.ifMatch === undefined ? {} : { IfMatch: options.ifMatch }),
      }),
      { abortSignal },
    );
    return { etag: output.ETag ?? '' };
  }

  async #sendGet(context: RequestContext, range: ByteRange | undefined, abortSignal: AbortSignal): Promise<GetResult> {
    if (this.#bun !== null && bunCarriesKey(context.objectKey!)) return this.#bun.get(context, range, abortSignal);
    const header = rangeHeader(range);
    const output = await this.#sdk.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: context.objectKey, ...(header === undefined ? {} : { Range: header }) }), { abortSignal });
    const length = output.ContentLength ?? 0;
    const body = await readBody(output.Body, length, context);
    return { body: fitToRange(body, range, output.ContentRange), etag: output.ETag ?? '', size: sizeFromContentRange(output.ContentRange) ?? length };
  }

  /** The whole object as it is now, or null: how an unknown conditional outcome is resolved. */
  async #readBack(key: string, signal: AbortSignal | undefined): Promise<CurrentObject | null> {
    try {
      return await this.get(key, { ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      if (isStoreError(error, 'NotFound') && failureFromSdk(error.cause).code !== 'NoSuchBucket') return null;
      throw error;
    }
  }

  async #deleteBatch(batch: readonly RequestContext[], result: DeleteManyResult): Promise<void> {
    const output = await this.#requests.run({
      requestClass: 'delete',
      context: { operation: 'DeleteObjects', bucket: this.config.bucket },
      send: (abortSignal) =>
        this.#sdk.client.send(new DeleteObjectsCommand({ Bucket: this.config.bucket, Delete: { Objects: batch.map((context) => ({ Key: context.objectKey })), Quiet: true } }), { abortSignal }),
    });
    const errors = new Map((output.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey').map((error) => [error.Key, error]));
    for (const context of batch) {
      const error = errors.get(context.objectKey);
      if (error === undefined) result.deleted.push(context.key!);
      else result.failed.push({ key: context.key!, error: mapS3Failure({ code: error.Code ?? 'Unknown', message: error.Message ?? 'delete failed', cause: error }, context) });
    }
  }

  /** Checks the caller's key and returns the request context for it, the prefix applied. */
  #context(operation: string, key: string): RequestContext {
    const context = { operation, bucket: this.config.bucket, key };
    this.#requests.checkOpen(context);
    checkKey(key);
    const objectKey = `${this.config.prefix}${key}`;
    const bytes = Buffer.byteLength(objectKey);
    if (bytes > KEY_BYTES_MAX) {
      throw invalidArgument(key, `key ${showKey(key)} is ${bytes} bytes of UTF-8 with the store's prefix ${showKey(this.config.prefix)}, longer than S3's limit of ${KEY_BYTES_MAX}`);
    }
    return { ...context, objectKey };
  }
}
