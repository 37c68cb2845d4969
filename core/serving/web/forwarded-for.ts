// Who is really calling through a web port's gRPC-Web forwarder. The forwarder reaches the gRPC server
// over loopback, so every browser's call arrives from 127.0.0.1; a server that counts something per
// source address (the cloud's login back-off) would count all browsers as one, and one visitor sending
// wrong keys would lock every other visitor out. The forwarder therefore names the browser's address in
// metadata, with a proof that only this process knows, so that no other client can claim an address.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';

/** The browser's address, as the forwarder saw it. */
export const FORWARDED_FOR = 'platform-forwarded-for';
/** This process' proof that the forwarded address was set by its own forwarder. */
export const FORWARDER_PROOF = 'platform-forwarder-proof';

/** Random per process: the forwarder and the gRPC server it forwards to share it in memory only. */
const proof = randomBytes(32).toString('hex');

/** Adds the browser's address and this process' proof to a forwarded call's metadata. */
export function markForwarded(metadata: Metadata, browserAddress: string | undefined): void {
  if (!browserAddress) return;
  // An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d; the gRPC peer of the same client is a.b.c.d.
  metadata.set(FORWARDED_FOR, browserAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, ''));
  metadata.set(FORWARDER_PROOF, proof);
}

/**
 * The address a call came from: the forwarded browser address when this process' own forwarder set it,
 * otherwise `peer` (what the transport saw). Metadata without the right proof is ignored, not trusted.
 */
export function callerAddress(peer: string, metadata: Metadata | undefined): string {
  const forwarded = metadata?.get(FORWARDED_FOR)[0];
  const given = metadata?.get(FORWARDER_PROOF)[0];
  if (typeof forwarded !== 'string' || typeof given !== 'string' || given.length !== proof.length) return peer;
  return timingSafeEqual(Buffer.from(given), Buffer.from(proof)) ? forwarded : peer;
}
