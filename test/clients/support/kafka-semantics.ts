// Kafka's documented answers that every client's test checks: error codes, DescribeConfigs
// config sources, and what "read back" means for a partition.
import { expect } from 'bun:test';

/** Kafka protocol error codes (org.apache.kafka.common.protocol.Errors) the client tests expect. */
export const ERROR = {
  NONE: 0,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  SECURITY_DISABLED: 54,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
} as const;

/** DescribeConfigs v1+ ConfigSource: the Java admin's TOPIC_CONFIG is DYNAMIC_TOPIC_CONFIG on the wire. */
export const CONFIG_SOURCE = {
  /** DescribeConfigs v0 has no config_source: clients read it as unknown. */
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
} as const;

export interface ConfigEntry {
  readonly value: string | null;
  readonly source: number | string | undefined;
  readonly readOnly: boolean | undefined;
  /** DescribeConfigs v0's is_default (v1+ say config_source instead). */
  readonly isDefault: boolean | undefined;
}

/** Config entries by name, from any client's spelling of them (config_names, name, Name, ...). */
export function configEntries(entries: readonly unknown[]): Map<string, ConfigEntry> {
  const byName = new Map<string, ConfigEntry>();
  for (const raw of entries as Record<string, unknown>[]) {
    const field = (...names: string[]) => names.map((name) => raw[name]).find((value) => value !== undefined);
    byName.set(String(field('config_names', 'name', 'Name')), {
      value: (field('config_value', 'value', 'Value') ?? null) as string | null,
      source: field('config_source', 'source', 'Source') as number | string | undefined,
      readOnly: field('read_only', 'readOnly', 'is_read_only', 'ReadOnly') as boolean | undefined,
      isDefault: field('is_default', 'isDefault', 'Default') as boolean | undefined,
    });
  }
  return byName;
}

/** [offset, value] pairs read by partition are exactly `sent`, at consecutive offsets from `firstOffset`. */
export function expectReadBack(consumed: readonly (readonly [number, string])[], sent: readonly string[], firstOffset: number): void {
  expect(consumed.map(([, value]) => value)).toEqual([...sent]);
  expect(consumed.map(([offset]) => offset)).toEqual(sent.map((_, i) => firstOffset + i));
}

/** A transactional producer's first call must be refused within this (Ferry has no transactions): a refusal, not a client timeout. */
export const TRANSACTIONS_REFUSED_MS_MAX = 10_000;
