/**
 * One connection to a Ferry listener, as a client makes it: TCP, TLS (SSL, SASL_SSL), SCRAM
 * (SASL_SSL), then one ApiVersions request answered; then closed. For measuring what setting up a
 * connection costs per security protocol.
 */
import { readFileSync } from 'node:fs';
import { connectToBroker } from '../../src/cluster/inter-broker-connection.ts';
import { ScramSaslClient } from '../../src/security/sasl/scram-client.ts';
import { SCRAM_SHA_256 } from '../../src/security/scram/mechanism.ts';
import { systemNetwork } from '../../src/util/system-network.ts';

/** ApiVersions v0 (request header v1), correlation id 1, client id "bench": 4-byte size, then the request. */
const API_VERSIONS_V0 = Uint8Array.of(0, 0, 0, 15, 0, 18, 0, 0, 0, 0, 0, 1, 0, 5, 98, 101, 110, 99, 104);

export async function connectAndAskVersions(protocol: 'PLAINTEXT' | 'SSL' | 'SASL_SSL', port: number, caPath: string, user: string, password: string): Promise<void> {
  const answered = Promise.withResolvers<void>();
  let received = 0;
  const socket = await connectToBroker(
    systemNetwork,
    {
      listener: null,
      tls: protocol === 'PLAINTEXT' ? null : { ca: readFileSync(caPath, 'utf8'), serverName: 'localhost' },
      sasl: protocol === 'SASL_SSL' ? () => new ScramSaslClient(SCRAM_SHA_256, user, password) : null,
    },
    { host: '127.0.0.1', port },
    {
      data: (_socket, chunk) => {
        received += chunk.length;
        if (received >= 4) answered.resolve();
      },
      close: () => answered.reject(new Error(`${protocol} listener closed the connection`)),
    },
  );
  socket.write(API_VERSIONS_V0);
  await answered.promise;
  socket.end();
}
