import type { ApiCodec } from './api.ts';
import { fetchCodec } from './fetch.ts';
import { findCoordinatorCodec } from './find-coordinator.ts';
import { listOffsetsCodec } from './list-offsets.ts';
import { metadataCodec } from './metadata.ts';
import { offsetCommitCodec } from './offset-commit.ts';
import { offsetFetchCodec } from './offset-fetch.ts';
import { offsetForLeaderEpochCodec } from './offset-for-leader-epoch.ts';
import { produceCodec } from './produce.ts';

/** Every API codec Ferry serves (the codec tests check each against Kafka's schemas). */
// biome-ignore lint: a table of codecs of different request and response types
export const API_CODECS: readonly ApiCodec<any, any>[] = [produceCodec, fetchCodec, listOffsetsCodec, metadataCodec, offsetCommitCodec, offsetFetchCodec, findCoordinatorCodec, offsetForLeaderEpochCodec];
