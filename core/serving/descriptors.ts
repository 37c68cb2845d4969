// The platform's protobuf descriptor set (gen/descriptors.binpb, written by `npm run gen`), which
// server reflection serves. A file of its own so that platform-micro-server's single-file bundle can
// carry the bytes inside (scripts/build-micro.mjs swaps this module) instead of a file beside it.
import { readFileSync } from 'node:fs';

// dist/ carries a copy of gen/ next to dist/core.
const descriptorsUrl = new URL('../../gen/descriptors.binpb', import.meta.url);

export function platformDescriptors(): Buffer {
  return readFileSync(descriptorsUrl);
}
