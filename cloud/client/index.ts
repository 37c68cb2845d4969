// The platform's TypeScript cloud client.
export { createCloudClient, type CloudClient } from './cloud-client.js';
export { CloudConnection, parseServiceHost, type ApiKeyCredentials, type CloudConnectionOptions, type PartSecretCredentials } from './connection.js';
export * from './data-client.js';
export { FileNotFoundError, ValueError } from './errors.js';
export { MLTrainingClient } from './ml-training-client.js';
