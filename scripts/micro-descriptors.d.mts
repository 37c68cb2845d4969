// Types of scripts/micro-descriptors.mjs, for the tests that read the bundle's descriptor set.
export interface DescriptorFile {
  name: string;
  dependencies: string[];
  entry: Uint8Array;
}
export function descriptorFiles(set: Uint8Array): DescriptorFile[];
export function descriptorSubset(set: Uint8Array, wanted: Iterable<string>): Buffer;
export function protosLinked(metafile: { inputs: Record<string, unknown> }): string[];
