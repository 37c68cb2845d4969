// Entry point of the TypeScript client: connect with an API key, then use dataClient (and
// mlTrainingClient, cloud/client/ml-training-client.ts). Both share one authenticated connection.
import { CloudConnection, type CloudConnectionOptions } from './connection.js';
import { DataClient } from './data-client.js';
import { MLTrainingClient } from './ml-training-client.js';

export interface CloudClient {
  dataClient: DataClient;
  mlTrainingClient: MLTrainingClient;
  connection: CloudConnection;
  close(): void;
}

/**
 * createCloudClient({ serviceHost: 'http://127.0.0.1:8081', credentials: { type: 'api-key', authEntity: KEY_ID, payload: KEY } }).
 * Authentication happens on the first call and is renewed before the token expires.
 */
export function createCloudClient(options: CloudConnectionOptions): CloudClient {
  const connection = new CloudConnection(options);
  const dataClient = new DataClient(connection);
  const mlTrainingClient = new MLTrainingClient(connection.address, () => connection.metadata(), connection.channel);
  return {
    dataClient,
    mlTrainingClient,
    connection,
    close() {
      dataClient.close();
      mlTrainingClient.rpc.close();
      connection.close();
    },
  };
}
