// V8 settings of platform-micro-server, set inside its one file (so `node platform-micro-server.mjs` runs
// with them, as the benchmark does) and first, before the rest of the bundle is evaluated.
//
// The young generation: V8 sizes its two semi-spaces from the machine's physical memory, up to 16 MB
// each on a desktop and about 1 MB on a 512 MB board. A semi-space that has grown stays committed, so a
// start-up burst of allocation left about 6 MB more resident on x86-64 than on the boards this runtime is
// for. A growth factor of 1 keeps the semi-spaces at their initial size (1 MB) everywhere: more frequent
// scavenges of a small young generation, which is what V8 does on such a board anyway
// (`npm run bench:micro` shows the capture figure under it).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
