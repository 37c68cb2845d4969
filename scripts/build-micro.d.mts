// Types of scripts/build-micro.mjs, for the tests and the benchmark that build the bundle.
import type { Metafile } from 'esbuild';

export function buildMicro(outfile?: string): Promise<Metafile>;
/** The generated codecs' methods the bundle leaves out (nothing in it calls them). */
export const GENERATED_UNUSED: readonly string[];
export function withoutUnusedCodecMethods(source: string, path: string): string;
