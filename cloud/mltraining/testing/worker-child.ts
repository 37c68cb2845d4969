// Test program: one training worker (worker-process.ts) in a process of its own, so that a test can kill
// it with kill -9, as `platform-cloud worker` runs it. Prints `serving <pid>` once it takes jobs.
// Usage: worker-child.ts <postgres url> <s3://bucket/prefix> <s3 endpoint> <scratch dir>
// (S3 credentials from the AWS SDK's environment variables, as the cloud's processes take them).
import { pino } from 'pino';
import { runTrainingWorker } from '../worker-process.js';

const [backendStoreUri, artifactsDestination, s3Endpoint, dataDir] = process.argv.slice(2);
const worker = await runTrainingWorker({ backendStoreUri, artifactsDestination, s3Endpoint, dataDir, logger: pino({ level: 'warn' }) });
console.log(`serving ${process.pid}`);
process.on('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
