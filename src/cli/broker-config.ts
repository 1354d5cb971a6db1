/**
 * `ferry broker`'s configuration from its sources, in precedence order: defaults < config file
 * (--config or FERRY_CONFIG) < FERRY_* environment variables < flags.
 */
import { type BrokerConfig, brokerConfigOf, type RawSettings, settingsFromEnv, settingsFromFlags } from './broker-settings.ts';
import { readConfigFile } from './config-file.ts';
import { securitySettingsOf } from './security-settings.ts';
import { hostname } from 'node:os';

export type { BrokerConfig } from './broker-settings.ts';
export { configKeysHelp } from './config-keys.ts';

export interface BrokerConfigSources {
  /** parseArgs values of `ferry broker`'s flags. */
  readonly flags: { readonly [name: string]: string | boolean | undefined };
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface ResolvedBrokerConfig {
  readonly config: BrokerConfig;
  /** One line each, for stderr: Kafka keys ignored, listeners left out. */
  readonly warnings: readonly string[];
}

/** Merges and checks every source; a CliError (exit code 2) names the key, variable or flag at fault. */
export function resolveBrokerConfig(sources: BrokerConfigSources): ResolvedBrokerConfig {
  const path = typeof sources.flags.config === 'string' ? sources.flags.config : sources.env.FERRY_CONFIG;
  const file = path === undefined ? null : readConfigFile(path);
  const settings: RawSettings = { ...file?.settings, ...settingsFromEnv(sources.env), ...settingsFromFlags(sources.flags) };
  // An empty listen host is advertised as the machine's name, unless something else says what to advertise or where to listen.
  if (file?.impliedAdvertised != null && settings.advertised === undefined && settings.listen === file.settings.listen) settings.advertised = file.impliedAdvertised;
  const warnings = [...(file?.notes ?? [])];
  const config = brokerConfigOf(settings);
  const security =
    file === null
      ? null
      : securitySettingsOf({
          path: path!,
          properties: file.security,
          listeners: file.listeners?.brokers ?? null,
          advertised: file.listeners?.advertised ?? null,
          firstListen: config.listen,
          firstAdvertised: config.advertised,
          hostname: hostname(),
        });
  const ignored = [...(file?.ignored ?? []), ...(security?.ignored ?? [])];
  if (ignored.length > 0) warnings.push(`ferry: ignoring Kafka settings Ferry has no use for: ${ignored.join(', ')}`);
  return { config: { ...config, listeners: security?.listeners ?? null, security: security?.security ?? {} }, warnings };
}
