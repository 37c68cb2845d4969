// Helpers of the ingest attacks (issue 27 #4, #5, #7): a machine-part client of a tenant, its bearer
// metadata, a raw gRPC client for pre-encoded requests, and the cloud's open descriptors.
import { Client, credentials, type Metadata } from '@grpc/grpc-js';
import { readdirSync } from 'node:fs';
import { createCloudClient, type CloudClient } from '../../../cloud/client/cloud-client.js';
import type { Tenant } from './harness.js';

export function partClient(address: string, tenant: Tenant): CloudClient {
  return createCloudClient({ serviceHost: `http://${address}`, credentials: { type: 'robot-secret', authEntity: tenant.partId, payload: tenant.partSecret } });
}

export const bearerOf = (client: CloudClient): Promise<Metadata> => client.connection.metadata();

/** A gRPC client of its own connection that sends requests as given bytes (up to 64 MiB). */
export function rawClient(address: string): Client {
  return new Client(address, credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * 1024 * 1024, 'grpc.use_local_subchannel_pool': 1 });
}

export function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

/** Counts outcomes by name, for the attack's summary line. */
export class Outcomes {
  private readonly counts = new Map<string, number>();
  add(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }
  toString(): string {
    return JSON.stringify(Object.fromEntries(this.counts));
  }
}
