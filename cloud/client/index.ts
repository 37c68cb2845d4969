// The platform's TypeScript cloud client.
export { createCloudClient, type CloudClient } from './cloud-client.js';
export { CloudConnection, parseServiceHost, type ApiKeyCredentials, type CloudConnectionOptions, type PartSecretCredentials } from './connection.js';
export * from './data-client.js';
export { FileNotFoundError, ValueError } from './errors.js';
export { MLTrainingClient } from './ml-training-client.js';
export { MAX_MESSAGE_BYTES, RobotClient, SESSION_METADATA, type RobotClientOptions } from './robot-client.js';
export { discoverMachines, type DiscoveredMachine, type DiscoveryOptions } from './discovery.js';
