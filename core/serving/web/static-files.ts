// Serves a page's static files from one folder (the built page, or platform-server's -shareddir). The
// folder is the boundary: neither `..` in the path nor a symbolic link inside the folder may reach a
// file outside it, so the real path of the file (all links resolved) must lie inside the real path of
// the folder. A path whose percent-encoding is malformed is the client's mistake: 400, not 500.
import type { ServerResponse } from 'node:http';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
  '.ico': 'image/x-icon',
};

/** Longest path echoed in an answer; a longer one is cut (the rest is of no use to the reader). */
const ECHO_CHARS = 200;

export function echoPath(pathname: string): string {
  return pathname.length > ECHO_CHARS ? `${pathname.slice(0, ECHO_CHARS)}…` : pathname;
}

/** A URL path component decoded, or undefined when its percent-encoding is malformed (`%zz`, `%e9`). */
export function decodePath(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Answers 400 naming the rule, for a path that decodePath refused. */
export function badPercentEncoding(res: ServerResponse, pathname: string): void {
  res
    .writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
    .end(`${echoPath(pathname)}: malformed percent-encoding in the URL path (each % must start a %XX escape of UTF-8 bytes)\n`);
}

const inside = (root: string, path: string) => path === root || path.startsWith(root + sep);

export async function serveFile(dir: string, pathname: string, res: ServerResponse): Promise<void> {
  const decoded = decodePath(pathname === '/' ? '/index.html' : pathname);
  if (decoded === undefined) return badPercentEncoding(res, pathname);
  const root = resolve(dir);
  const wanted = resolve(root, '.' + decoded);
  // Never outside the assets folder, whatever the path says.
  if (!inside(root, wanted)) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('outside the assets folder\n');
    return;
  }
  const notFound = () => {
    const hint = pathname === '/' ? ` (the page is not built in ${root}: run npm run build, or give -shareddir)` : '';
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`${echoPath(pathname)}: not found${hint}\n`);
  };
  // Nor through a symbolic link: compare real paths (the folder itself may be reached through links).
  const [realRoot, realWanted] = await Promise.all([realpath(root).catch(() => undefined), realpath(wanted).catch(() => undefined)]);
  if (!realRoot || !realWanted) return notFound();
  if (!inside(realRoot, realWanted)) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('outside the assets folder (through a symbolic link)\n');
    return;
  }
  const info = await stat(realWanted).catch(() => undefined);
  if (!info?.isFile()) return notFound();
  res.writeHead(200, { 'content-type': TYPES[extname(wanted)] ?? 'application/octet-stream', 'content-length': info.size, 'cache-control': 'no-cache' });
  res.end(await readFile(realWanted));
}
