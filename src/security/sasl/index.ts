export { invalidCredentials, invalidCredentialsMessage, SaslAuthenticationError, type SaslClient, type SaslServer, type SaslServerFactory, type SaslStep } from './mechanism.ts';
export { PLAIN_MECHANISM, PlainSaslClient, PlainSaslServerFactory, plainUsersFrom, type PlainUsers } from './plain.ts';
export { ScramSaslServerFactory, type ScramSaslServerOptions } from './scram-server.ts';
export { ScramSaslClient } from './scram-client.ts';
export {
  ownCredentialsOf,
  parseJaasConfigModules,
  parseJaasFile,
  parseSaslJaasConfig,
  PLAIN_LOGIN_MODULE,
  plainUsersOf,
  SCRAM_LOGIN_MODULE,
  type JaasControlFlag,
  type JaasCredentials,
  type JaasLoginModule,
} from './jaas.ts';
