// What a `version_control` value asks for. SPEC.md (Versioning item 1): `stable`, `dev`, a semantic
// version, or a URL (`http(s)://...` or `file:///...`, Windows paths included). Semver ranges are also
// accepted ("pinned range allows" in SPEC.md's agent behaviour): the newest release in the range wins.
import validVersion from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { VersionSpecError } from '../serving/errors.js';
export { VersionSpecError };

export type VersionSpec =
  | { kind: 'channel'; channel: 'stable' | 'dev' }
  | { kind: 'semver'; version: string }
  | { kind: 'range'; range: string }
  | { kind: 'url'; url: string }
  | { kind: 'file'; path: string; windows: boolean };

export const VERSION_RULE = 'must be "stable", "dev", a semantic version (e.g. 0.2.1) or range (e.g. ^0.2.0), an http(s):// URL or a file:// URL';

/** Parses a version_control value; throws VersionSpecError naming the accepted forms. */
export function parseVersionSpec(value: string): VersionSpec {
  const text = value.trim();
  if (text === 'stable' || text === 'dev') return { kind: 'channel', channel: text };
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new VersionSpecError(value, 'is not a valid http(s) URL');
    }
    if (!url.hostname) throw new VersionSpecError(value, 'http(s) URL needs a host');
    return { kind: 'url', url: url.toString() };
  }
  if (/^file:/i.test(text)) return { kind: 'file', ...filePathOf(value, text) };
  const exact = validVersion(text);
  if (exact) return { kind: 'semver', version: exact };
  if (text !== '' && validRange(text)) return { kind: 'range', range: text };
  throw new VersionSpecError(value, VERSION_RULE);
}

/**
 * The local path of a file:// URL. Windows forms: file:///C:/dir/bin.exe, file://C:\dir\bin.exe,
 * file://server/share/bin.exe (UNC). A drive-letter path keeps its Windows shape on every OS, so a
 * config written for a Windows machine still validates on Linux.
 */
function filePathOf(value: string, text: string): { path: string; windows: boolean } {
  const m = /^file:(\/\/)?(.*)$/is.exec(text);
  if (!m || !m[1]) throw new VersionSpecError(value, 'file URL must start with file://');
  let rest = m[2].replace(/\\/g, '/');
  let host = '';
  if (!rest.startsWith('/')) {
    const slash = rest.indexOf('/');
    const head = slash < 0 ? rest : rest.slice(0, slash);
    if (/^[A-Za-z]:$/.test(head)) rest = `/${rest}`;
    else {
      host = head;
      rest = slash < 0 ? '' : rest.slice(slash);
    }
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw new VersionSpecError(value, 'file URL has an invalid %-escape');
  }
  if (host && host.toLowerCase() !== 'localhost') {
    if (!decoded || decoded === '/') throw new VersionSpecError(value, 'file URL names no file');
    return { path: `\\\\${host}${decoded.replace(/\//g, '\\')}`, windows: true };
  }
  const drive = /^\/([A-Za-z]:)(\/.*)?$/.exec(decoded);
  if (drive) {
    if (!drive[2] || drive[2] === '/') throw new VersionSpecError(value, 'file URL names no file');
    return { path: `${drive[1]}${drive[2].replace(/\//g, '\\')}`, windows: true };
  }
  if (!decoded || decoded.endsWith('/')) throw new VersionSpecError(value, 'file URL names no file');
  return { path: decoded, windows: false };
}
