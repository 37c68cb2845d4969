// Types of scripts/build-micro.mjs, for the tests and the benchmark that build the bundle.
import type { Metafile } from 'esbuild';

export function buildMicro(outfile?: string): Promise<Metafile>;
