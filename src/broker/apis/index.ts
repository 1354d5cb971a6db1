import type { ApiCodec } from './api.ts';
import { offsetForLeaderEpochCodec } from './offset-for-leader-epoch.ts';

/** Every API codec Ferry serves (the codec tests check each against Kafka's schemas). */
// biome-ignore lint: a table of codecs of different request and response types
export const API_CODECS: readonly ApiCodec<any, any>[] = [offsetForLeaderEpochCodec];
