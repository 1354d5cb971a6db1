import { componentLogger, type LoggerOption } from '../../observability/logger.ts';
import { ControlStore } from '../../control/control-store.ts';
import { FerryError } from '../../errors.ts';
import type { MetricsRegistry } from '../../metrics/index.ts';
import { AclStore } from '../../security/acl/acl-store.ts';
import { type AuthorizationDecision, Authorizer, type AuthorizerOptions } from '../../security/acl/authorizer.ts';
import { aclOperationName, resourceTypeName } from '../../security/acl/model.ts';
import { principalText } from '../../security/principal.ts';
import { ScramCredentialStore } from '../../security/scram/store.ts';
import { ClientQuotaStore } from '../../security/quotas/store.ts';
import type { Session } from '../../security/session.ts';
import type { TlsSettings } from '../../security/tls/tls-settings.ts';
import { loadTlsMaterial } from '../../security/tls/tls-material.ts';
import { PLAIN_MECHANISM, PlainSaslClient } from '../../security/sasl/plain.ts';
import { ScramSaslClient } from '../../security/sasl/scram-client.ts';
import { scramMechanismNamed } from '../../security/scram/mechanism.ts';
import type { InterBrokerConnector } from '../../cluster/inter-broker-connection.ts';
import type { ObjectStore } from '../../store/object-store.ts';
import type { Clock, Timer } from '../../util/clock.ts';
import type { Random } from '../../util/random.ts';
import { logText } from '../../util/log-text.ts';
import type { AuthenticationEvents } from './channel.ts';
import { type ListenerConfig, SASL_MECHANISMS } from './listener-config.ts';
import { type OpenedListener, openListener } from './listener-setup.ts';

/**
 * How often a broker reads the security records again (ACLs, SCRAM credentials, client quotas) so that changes
 * made through another broker apply here: one LIST per kind and a GET per changed record. An ACL
 * removed or a credential revoked elsewhere still works here for up to this long; shorter costs
 * more requests to the control store (two LISTs a second per broker at 1 s: cents a month).
 */
export const SECURITY_REFRESH_INTERVAL_MS_DEFAULT = 1_000;

/** How this broker connects to another broker's inter-broker listener (its progress reports, [R2]). */
export interface InterBrokerClient {
  /** inter.broker.listener.name: the listener whose endpoints brokers reach each other at. */
  readonly listener: string;
  /** TLS to that listener (the CA its certificates are checked against; this broker's own for mTLS); null: plain TCP. */
  readonly tls: TlsSettings | null;
  /** SASL as this broker's principal (sasl.mechanism.inter.broker.protocol, the JAAS username and password); null: none. */
  readonly sasl: {
    /** The SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). */
    readonly mechanism: string;
    /** This broker's principal. */
    readonly username: string;
    /** Its password. */
    readonly password: string;
  } | null;
}

/** Kafka's security settings of a broker beyond its listeners. */
export interface BrokerSecurityOptions {
  /** How this broker reaches the other brokers' inter-broker listener (its name, TLS, SASL). */
  readonly interBroker?: InterBrokerClient;
  /** authorizer.class.name set: ACLs decide every request (super.users, allow.everyone.if.no.acl.found). Absent: no authorization, as Kafka without an authorizer. */
  readonly authorizer?: Omit<AuthorizerOptions, 'audit'>;
  /** connection.failed.authentication.delay.ms. */
  readonly failedAuthenticationDelayMs?: number;
  /** max.connections.per.ip: connections from one address at once; unbounded by default. */
  readonly maxConnectionsPerIp?: number;
  /** max.connections.per.ip.overrides: per host or address. */
  readonly maxConnectionsPerIpOverrides?: ReadonlyMap<string, number>;
  /** How often ACLs, SCRAM credentials and quotas are re-read from the control records; default SECURITY_REFRESH_INTERVAL_MS_DEFAULT. */
  readonly refreshIntervalMs?: number;
}

export interface BrokerSecurityDependencies {
  /** Where the security records live: the cluster's control store, or a single broker's WAL store. */
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly clock: Clock;
  readonly metrics: MetricsRegistry;
  /** Where security events go (failed authentications, denials, refresh failures); bound to component security here. */
  readonly log: LoggerOption;
  /** Draws the nonces of the security records this broker writes [CW1]; the operating system's randomness by default. */
  readonly random?: Random;
}

/**
 * Everything a broker knows about who may do what: its listeners' security, the SCRAM
 * credentials and the ACLs (kept current from the control records), and the events they report.
 */
export class BrokerSecurity {
  readonly listeners: readonly { readonly config: ListenerConfig; readonly opened: OpenedListener }[];
  readonly scram: ScramCredentialStore;
  /** Kafka's client quotas (AlterClientQuotas, DescribeClientQuotas, enforcement), kept current like the ACLs. */
  readonly quotas: ClientQuotaStore;
  /** Null without an authorizer (authorizer.class.name unset): every request is allowed, as in Kafka. */
  readonly acls: AclStore | null;
  readonly events: AuthenticationEvents;
  readonly options: BrokerSecurityOptions;
  /** How this broker reaches other brokers' inter-broker listener; null: plain TCP to their first listener. */
  readonly interBrokerConnector: InterBrokerConnector | null;
  readonly #dependencies: BrokerSecurityDependencies;
  #timer: Timer | null = null;
  #stopped = false;

  private constructor(init: Pick<BrokerSecurity, 'listeners' | 'scram' | 'quotas' | 'acls' | 'events' | 'options' | 'interBrokerConnector'>, dependencies: BrokerSecurityDependencies) {
    this.interBrokerConnector = init.interBrokerConnector;
    this.quotas = init.quotas;
    this.listeners = init.listeners;
    this.scram = init.scram;
    this.acls = init.acls;
    this.events = init.events;
    this.options = init.options;
    this.#dependencies = dependencies;
  }

  /**
   * Reads the security records (a broker with an authorizer starts only once it has every ACL:
   * before, it would deny everyone but super users) and each listener's files, then keeps the
   * records current every refreshIntervalMs.
   */
  static async open(listeners: readonly ListenerConfig[], options: BrokerSecurityOptions, dependencies: BrokerSecurityDependencies): Promise<BrokerSecurity> {
    const control = new ControlStore(dependencies.store, dependencies.prefix, dependencies.random === undefined ? {} : { random: dependencies.random });
    const scram = new ScramCredentialStore(control);
    const acls = options.authorizer === undefined ? null : new AclStore(control, new Authorizer({ ...options.authorizer, audit: auditOf(dependencies) }));
    const warn = warningsOf(dependencies);
    const quotas = new ClientQuotaStore(control, { log: warn });
    await Promise.all([scram.refresh(), acls?.refresh(), quotas.refresh()]);
    const scramUnknownUserSecret = await scram.unknownUserSecret();
    const events = authenticationEvents(dependencies);
    const opened = [];
    for (const config of listeners) opened.push({ config, opened: await openListener(config, { scram, scramUnknownUserSecret, clock: dependencies.clock, log: warn }) });
    const interBrokerConnector = options.interBroker === undefined ? null : await connectorOf(options.interBroker);
    const security = new BrokerSecurity({ listeners: opened, scram, quotas, acls, events, options, interBrokerConnector }, dependencies);
    security.#schedule();
    return security;
  }

  /** The listener other brokers report progress through (inter.broker.listener.name); null: any (no security configured). */
  get interBrokerListener(): string | null {
    return this.options.interBroker?.listener ?? null;
  }

  /** The authorizer, or null when every request is allowed. */
  get authorizer(): Authorizer | null {
    return this.acls?.authorizer ?? null;
  }

  /** SIGHUP: every listener reads its certificates, CRL, PLAIN users and JWKS again; the first failure is thrown after the others were tried. */
  async reload(): Promise<void> {
    const failures: string[] = [];
    for (const { config, opened } of this.listeners) {
      await opened.reload().catch((error: unknown) => failures.push(`listener ${config.name}: ${error instanceof Error ? error.message : String(error)}`));
    }
    if (failures.length > 0) throw new FerryError('InvalidArgument', `reload kept the previous TLS and SASL material of ${failures.join('; ')}`);
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const { clock } = this.#dependencies;
    const warn = warningsOf(this.#dependencies);
    this.#timer = clock.setTimer(
      this.options.refreshIntervalMs ?? SECURITY_REFRESH_INTERVAL_MS_DEFAULT,
      () => {
        // A refresh that fails keeps the last complete view (never a partial one that could miss a DENY) and is tried again.
        void Promise.all([this.scram.refresh(), this.acls?.refresh(), this.quotas.refresh()])
          .catch((error: unknown) => warn(`security records could not be refreshed (kept the last ones read): ${error instanceof Error ? error.message : String(error)}`))
          .finally(() => this.#schedule());
      },
      true,
    );
  }
}

/** The inter-broker client's TLS material and SASL client, read and checked at start (one line naming the setting when wrong). */
async function connectorOf(client: InterBrokerClient): Promise<InterBrokerConnector> {
  const where = `the inter-broker client (listener ${client.listener})`;
  const tls = client.tls === null ? null : (await loadTlsMaterial(client.tls, 'client', where)).options;
  const sasl = client.sasl;
  if (sasl === null) return { listener: client.listener, tls, sasl: null };
  const scram = scramMechanismNamed(sasl.mechanism);
  if (sasl.mechanism !== PLAIN_MECHANISM && scram === null)
    throw new FerryError('InvalidArgument', `${where}: sasl.mechanism.inter.broker.protocol ${sasl.mechanism} is not one a broker can authenticate with (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)`);
  const newClient = () => (scram === null ? new PlainSaslClient(sasl.username, sasl.password) : new ScramSaslClient(scram, sasl.username, sasl.password));
  newClient(); // checks the username and password once, at start
  return { listener: client.listener, tls, sasl: newClient };
}

/** The mechanism label of a refusal whose mechanism the client named and no listener serves. */
const UNKNOWN_MECHANISM_LABEL = 'unknown';
const KNOWN_MECHANISMS: ReadonlySet<string> = new Set(SASL_MECHANISMS);

/**
 * Counts authentications per listener, mechanism and result; logs each refusal once with its
 * reason (never a secret). A mechanism name is the client's own text in SaslHandshake: one Ferry
 * does not know is counted as `unknown`, or every made-up name would add a metric series.
 */
/** The security stores' and listeners' lines (records left out, a JWKS kept): warnings of component security. */
function warningsOf({ log }: BrokerSecurityDependencies): (message: string) => void {
  const logger = componentLogger(log, 'security');
  return (message) => logger.warn({}, message);
}

function authenticationEvents({ metrics, log }: BrokerSecurityDependencies): AuthenticationEvents {
  const logger = componentLogger(log, 'security');
  const counter = (session: { listener: string; mechanism: string }, result: string) =>
    metrics.counter('ferry_broker_authentications_total', 'Authentications, by listener, mechanism (SSL for a client certificate) and result', { labels: { ...session, result } });
  return {
    authenticated(session: Session, reauthentication: boolean) {
      counter({ listener: session.listenerName, mechanism: session.saslMechanism ?? 'SSL' }, reauthentication ? 'reauthenticated' : 'succeeded').add();
    },
    failed(listener, mechanism, clientAddress, detail) {
      const known = mechanism === null || KNOWN_MECHANISMS.has(mechanism);
      counter({ listener, mechanism: mechanism === null ? 'SSL' : known ? mechanism : UNKNOWN_MECHANISM_LABEL }, 'failed').add();
      // the detail may carry what the client sent (a user name, a token's claim): escaped and cut short
      logger.info(
        { listener, mechanism: mechanism === null || !known ? null : mechanism, clientAddress },
        `authentication from ${clientAddress} on ${listener}${mechanism === null || !known ? '' : ` with ${mechanism}`} failed: ${logText(detail)}`,
      );
    },
  };
}

/**
 * A denial logged is not logged again for this long (same principal, address, operation and
 * resource): a client retrying a refused produce would otherwise write a line per retry.
 */
const DENIAL_LOG_INTERVAL_MS = 60_000;
/** Denials remembered for that; past it the oldest is forgotten (and may be logged again sooner). */
const DENIALS_REMEMBERED_MAX = 1024;

/** Denials of what a client asked for by name are counted and logged (Kafka's authorizer log at INFO), each at most once a minute; filtering denials only counted. */
function auditOf({ metrics, log, clock }: BrokerSecurityDependencies): (decision: AuthorizationDecision) => void {
  const logger = componentLogger(log, 'security');
  const loggedAtMs = new Map<string, number>();
  return (decision) => {
    if (decision.allowed) return;
    const operation = aclOperationName(decision.operation);
    const resource = resourceTypeName(decision.resourceType);
    metrics.counter('ferry_broker_authorization_denials_total', 'Requests denied by the ACLs, by resource type and operation', { labels: { resource, operation } }).add();
    if (!decision.logIfDenied) return;
    // principals and group or transactional ids are the client's own text: escaped and cut short
    const line = `${logText(principalText(decision.session.principal))} from ${decision.session.clientAddress} denied ${operation} on ${resource}:${logText(decision.resourceName)}`;
    const nowMs = clock.monotonicMs();
    if (nowMs - (loggedAtMs.get(line) ?? Number.NEGATIVE_INFINITY) < DENIAL_LOG_INTERVAL_MS) return;
    loggedAtMs.delete(line);
    loggedAtMs.set(line, nowMs);
    if (loggedAtMs.size > DENIALS_REMEMBERED_MAX) loggedAtMs.delete(loggedAtMs.keys().next().value!);
    logger.info({ operation, resource, clientAddress: decision.session.clientAddress }, `authorization: ${line}`);
  };
}
