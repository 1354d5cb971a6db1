import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// ApiVersions (key 18), versions 0-3; 3 is flexible.
// Request v0-2: (empty). v3: client_software_name COMPACT_STRING, client_software_version COMPACT_STRING, TAG_BUFFER
// Response: error_code INT16, api_keys [api_key INT16, min_version INT16, max_version INT16 (+ TAG_BUFFER v3)],
//           throttle_time_ms INT32 (v1+), TAG_BUFFER (v3)

export interface ApiVersionsRequest {
  readonly clientSoftwareName: string | null;
  readonly clientSoftwareVersion: string | null;
}

export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

export interface ApiVersionsResponse {
  readonly errorCode: number;
  readonly apiKeys: readonly ApiVersionRange[];
  readonly throttleTimeMs: number;
}

export const apiVersionsCodec: ApiCodec<ApiVersionsRequest, ApiVersionsResponse> = {
  key: 18,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 3,
  decodeRequest(reader: KafkaReader, version: number): ApiVersionsRequest {
    if (version < 3) return { clientSoftwareName: null, clientSoftwareVersion: null };
    const clientSoftwareName = reader.compactString();
    const clientSoftwareVersion = reader.compactString();
    reader.skipTaggedFields();
    return { clientSoftwareName, clientSoftwareVersion };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: ApiVersionsResponse): void {
    writer.int16(response.errorCode);
    const writeRange = (w: KafkaWriter, range: ApiVersionRange) => {
      w.int16(range.apiKey).int16(range.minVersion).int16(range.maxVersion);
      if (version >= 3) w.emptyTaggedFields();
    };
    if (version >= 3) writer.compactArray(response.apiKeys, writeRange);
    else writer.array(response.apiKeys, writeRange);
    if (version >= 1) writer.int32(response.throttleTimeMs);
    if (version >= 3) writer.emptyTaggedFields();
  },
};
