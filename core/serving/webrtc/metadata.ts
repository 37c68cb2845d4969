// gRPC metadata to and from the framing's Metadata message. Keys ending in "-bin" carry binary values,
// sent as base64 (as gRPC does over HTTP/2).
import { Metadata as GrpcMetadata } from '@grpc/grpc-js';
import type { Metadata } from '../../../gen/platform/rpc/webrtc/v1/grpc.js';

export function toWireMetadata(metadata: GrpcMetadata): Metadata {
  const md: Metadata['md'] = {};
  for (const key of Object.keys(metadata.getMap())) {
    md[key] = { values: metadata.get(key).map((value) => (typeof value === 'string' ? value : Buffer.from(value).toString('base64'))) };
  }
  return { md };
}

/** Rebuilds gRPC metadata; a key or value gRPC would refuse throws an error naming the key. */
export function fromWireMetadata(wire: Metadata | undefined): GrpcMetadata {
  const metadata = new GrpcMetadata();
  for (const [key, strings] of Object.entries(wire?.md ?? {})) {
    for (const value of strings.values ?? []) {
      try {
        metadata.add(key, key.endsWith('-bin') ? Buffer.from(value, 'base64') : value);
      } catch (err) {
        throw new Error(`metadata key ${JSON.stringify(key.slice(0, 100))}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
  return metadata;
}
