/**
 * Kafka's `listeners` and `advertised.listeners` (NAME://host:port, comma-separated) read for
 * Ferry:
 * - a listener named in `controller.listener.names` is a KRaft controller's: Ferry has none, so
 *   it is skipped (Kafka's combined mode lists one in its default server.properties);
 * - every other listener's security protocol comes from `listener.security.protocol.map` (by
 *   default: a listener named after a protocol has it);
 * - Ferry listens on all of them; the first is the one `--listen` and `--advertised` change and
 *   the broker record's host and port name; an empty host is every interface, as in Kafka.
 */
import { hostname } from 'node:os';
import { SECURITY_PROTOCOLS, type SecurityProtocol } from '../security/session.ts';
import { CliError } from './args.ts';

export interface Listener {
  readonly name: string;
  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (listener.security.protocol.map). */
  readonly protocol?: SecurityProtocol;
  /** '' in the file: every interface (listen) or the machine's name (advertise). */
  readonly host: string;
  readonly port: number;
}

/** What the listener settings of one file say; null where the file does not say. */
export interface ListenerSettings {
  readonly listeners: string | null;
  readonly protocolMap: string | null;
  readonly controllerNames: string | null;
}

/** Kafka's listener when `listeners` is not set: PLAINTEXT://:9092. */
const DEFAULT_LISTENER_NAME = 'PLAINTEXT';
const PORT_MAX = 65535;
/** Every interface, as Kafka binds an empty host. */
const ALL_INTERFACES = '0.0.0.0';

/** `NAME://host:port` entries; a bracketed IPv6 host loses its brackets. */
export function parseListeners(text: string, source: string): Listener[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^([A-Za-z0-9_-]+):\/\/(\[[^\]]*\]|[^:/]*):(\d{1,5})$/.exec(entry);
      const port = Number(match?.[3]);
      if (match === null || port > PORT_MAX) throw new CliError(`${source}: '${entry}' is not NAME://host:port`);
      return { name: match[1]!.toUpperCase(), host: match[2]!.replace(/^\[(.*)\]$/, '$1'), port };
    });
}

/** The broker listeners (controller ones skipped), each with its security protocol, in the file's order; names are unique. */
export function brokerListeners(settings: ListenerSettings, source: string): (Listener & { readonly protocol: SecurityProtocol })[] {
  const controllers = new Set(namesOf(settings.controllerNames));
  const brokers = parseListeners(settings.listeners ?? '', source).filter((listener) => !controllers.has(listener.name));
  if (brokers.length === 0) throw new CliError(`${source} names no broker listener (only controller listeners: Ferry has no controller)`);
  const protocols = protocolMap(settings.protocolMap, source);
  const seen = new Set<string>();
  return brokers.map((listener) => {
    const protocol = protocols.get(listener.name);
    if (protocol === undefined) throw new CliError(`${source}: listener ${listener.name} has no security protocol (add it to listener.security.protocol.map)`);
    if (seen.has(listener.name)) throw new CliError(`${source}: listener ${listener.name} is named twice`);
    seen.add(listener.name);
    return { ...listener, protocol };
  });
}

/** The first broker listener: the one --listen and --advertised change. */
export function pickListener(settings: ListenerSettings, source: string): { listener: Listener } {
  return { listener: brokerListeners(settings, source)[0]! };
}

/** The name of the listener Ferry listens on: that of `listeners`, else Kafka's default. */
export function listenerName(settings: ListenerSettings, source: string): string {
  return settings.listeners === null ? DEFAULT_LISTENER_NAME : pickListener(settings, source).listener.name;
}

/** HOST:PORT to listen on for a listener: an empty host is every interface. */
export function listenAddress(listener: Listener): string {
  return `${listener.host === '' ? ALL_INTERFACES : listener.host}:${listener.port}`;
}

/**
 * HOST:PORT to advertise for the listener named `name`: its advertised.listeners entry, or null
 * (the listen address) when there is none. An empty host is the machine's name, as Kafka
 * advertises its canonical host name; the 0.0.0.0 meta-address cannot be advertised.
 */
export function advertisedAddress(text: string, name: string, source: string): string | null {
  const listener = parseListeners(text, source).find((entry) => entry.name === name);
  if (listener === undefined) return null;
  if (listener.host === ALL_INTERFACES) throw new CliError(`${source}: ${listener.name} cannot advertise the 0.0.0.0 meta-address`);
  return `${listener.host === '' ? hostname() : listener.host}:${listener.port}`;
}

/** When listening on every interface, clients need a name to be told: the machine's, as Kafka does. */
export function defaultAdvertisedAddress(listener: Listener): string | null {
  return listener.host === '' ? `${hostname()}:${listener.port}` : null;
}

function namesOf(text: string | null): string[] {
  return (text ?? '')
    .split(',')
    .map((name) => name.trim().toUpperCase())
    .filter((name) => name !== '');
}

/** Listener name to security protocol: the file's map, which replaces Kafka's default one. */
function protocolMap(text: string | null, source: string): Map<string, SecurityProtocol> {
  if (text === null) return new Map(SECURITY_PROTOCOLS.map((protocol) => [protocol, protocol]));
  const map = new Map<string, SecurityProtocol>();
  for (const entry of namesOf(text)) {
    const match = /^([A-Z0-9_-]+):([A-Z_]+)$/.exec(entry);
    const protocol = SECURITY_PROTOCOLS.find((known) => known === match?.[2]);
    if (match === null || protocol === undefined) throw new CliError(`${source}: listener.security.protocol.map entry '${entry}' is not NAME:PROTOCOL (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)`);
    map.set(match[1]!, protocol);
  }
  return map;
}
