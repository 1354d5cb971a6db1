import { describe, expect, test } from 'bun:test';
import { ConfigResourceType, ConfigSource, type DescribeConfigsResourceResult, type DescribeConfigsResponse, describeConfigsCodec as codec } from '../../../src/broker/apis/describe-configs.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// v0-3 are the rigid versions (flexible from v4); every version is also checked against Kafka's own
// grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3];
/** kafkajs 2.2.4 stops at v2; a v3 request is v2's bytes plus include_documentation (appended here). */
const kafkajsVersion = (version: number) => Math.min(version, 2);

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const bytes = await kafkajsEncode('describeConfigs', kafkajsVersion(version), args);
  if (version < 3) return bytes;
  const extended = Buffer.concat([bytes, Uint8Array.of(1)]);
  return new Uint8Array(extended.buffer, extended.byteOffset, extended.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('describeConfigs', version).decode(bytes);
}

// --- tests ---

const kafkajsArgs = {
  includeSynonyms: true,
  resources: [
    { type: ConfigResourceType.TOPIC, name: 'orders', configNames: ['cleanup.policy', 'retention.ms'] },
    { type: ConfigResourceType.BROKER, name: '1' }, // configNames [] goes out as null: every config
  ],
};

const retention: DescribeConfigsResourceResult = {
  name: 'retention.ms',
  value: '604800000',
  readOnly: false,
  isDefault: false,
  configSource: ConfigSource.TOPIC_CONFIG,
  isSensitive: false,
  synonyms: [
    { name: 'retention.ms', value: '604800000', source: ConfigSource.TOPIC_CONFIG },
    { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
  ],
  configType: 5, // LONG
  documentation: 'How long a log is kept before old segments are discarded.',
};
const password: DescribeConfigsResourceResult = {
  name: 'ssl.key.password',
  value: null,
  readOnly: true,
  isDefault: true,
  configSource: ConfigSource.DEFAULT_CONFIG,
  isSensitive: true,
  synonyms: [],
  configType: 9, // PASSWORD
  documentation: null,
};
const response: DescribeConfigsResponse = {
  throttleTimeMs: 12,
  results: [
    { errorCode: 0, errorMessage: null, resourceType: ConfigResourceType.TOPIC, resourceName: 'orders', configs: [retention, password] },
    { errorCode: 3, errorMessage: 'no such topic', resourceType: ConfigResourceType.TOPIC, resourceName: 'gone', configs: [] },
  ],
};

test('advertises versions 0-4, flexible from 4', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([32, 'DescribeConfigs', 0, 4, 4]);
});

describe.each(VERSIONS)('DescribeConfigs v%i', (version) => {
  test(`decodes a request encoded by kafkajs (its v${kafkajsVersion(version)} bytes)`, async () => {
    expect(decodeRequest(await kafkajsRequest(version, kafkajsArgs), version)).toEqual({
      resources: [
        { resourceType: 2, resourceName: 'orders', configurationKeys: ['cleanup.policy', 'retention.ms'] },
        { resourceType: 4, resourceName: '1', configurationKeys: null },
      ],
      includeSynonyms: version >= 1,
      includeDocumentation: version >= 3,
    });
  });

  if (version >= 3) {
    test('response bytes follow the grammar (kafkajs has no v3 decoder)', () => {
      const config = { ...password, name: 'a', value: 'b', readOnly: false, configSource: 1, isSensitive: false, configType: 2, documentation: 'd' };
      const one: DescribeConfigsResponse = {
        throttleTimeMs: 0,
        results: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't', configs: [config] }],
      };
      const expected = [
        '00000000 00000001', // throttle_time_ms, results count
        '0000 ffff 02 000174 00000001', // error_code, error_message null, resource_type, resource_name 't', configs count
        '000161 000162 00 01 00 00000000', // name 'a', value 'b', read_only, config_source, is_sensitive, synonyms count
        '02 000164', // config_type, documentation 'd'
      ];
      expect(encodeResponse(version, one).toString('hex')).toBe(expected.join('').replaceAll(' ', ''));
    });
  } else {
    test('kafkajs decodes the response', async () => {
      const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, response));
      const entry = (config: DescribeConfigsResourceResult) => ({
        configName: config.name,
        configValue: config.value,
        readOnly: config.readOnly,
        isDefault: config.isDefault,
        configSource: config.configSource,
        isSensitive: config.isSensitive,
        ...(version >= 1 ? { configSynonyms: config.synonyms.map((s) => ({ configName: s.name, configValue: s.value, configSource: s.source })) } : {}),
      });
      const throttle = version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 12 } : { throttleTime: 12 };
      expect(decoded).toEqual({
        ...throttle,
        resources: response.results.map((r) => ({ ...r, configEntries: r.configs.map(entry), configs: undefined })),
      });
    });
  }

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0xabcdef + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const flags = (w: KafkaWriter) => (version >= 3 ? w.boolean(true).boolean(true) : version >= 1 ? w.boolean(true) : w);
    const resource = () => new KafkaWriter().int32(1).int8(2).string('t');
    expectRejected(bytesOf(flags(new KafkaWriter().int32(0x7fffffff))), version); // resources count above the limit
    expectRejected(bytesOf(flags(new KafkaWriter().int32(2).int8(2).string('t').int32(-1))), version); // resources that cannot fit
    expectRejected(bytesOf(flags(new KafkaWriter().int32(-4))), version); // negative count
    expectRejected(bytesOf(flags(resource().int32(0x7fffffff))), version); // configuration_keys above the limit
    expectRejected(bytesOf(flags(resource().int32(50_000).string('k'))), version); // keys that cannot fit
    expectRejected(bytesOf(flags(resource().int32(-2))), version); // negative keys count (-1 is null)
    expectRejected(bytesOf(flags(resource().int32(1).int16(-1))), version); // null key
    expectRejected(bytesOf(flags(new KafkaWriter().int32(1).int8(2).int16(0x7fff).int32(-1))), version); // name past the frame
  });
});
