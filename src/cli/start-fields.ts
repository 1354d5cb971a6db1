import { selectedCrc32c } from '../format/crc32c/index.ts';
import { redactSecrets } from '../observability/redact.ts';
import type { BrokerConfig } from './broker-config.ts';

/**
 * The start line's fields: the whole checked config with its secrets redacted (passwords, JAAS
 * configs, inline keys, credentials in a store URL: src/observability/redact.ts), the data
 * directory as resolved, the port bound, the WAL store's kind and the CRC32C implementation this
 * process chose (measured at start: a slow one shows in every produce). Environment variables
 * that are not settings (AWS_SECRET_ACCESS_KEY) are never part of it.
 */
export function startFields(config: BrokerConfig, data: string, port: number, walStoreKind: string): Record<string, unknown> {
  return { config: redactSecrets(config), data, port, walStore: walStoreKind, crc32c: selectedCrc32c().name };
}
