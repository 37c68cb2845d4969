// $geoNear, which mingo lacks. With no geospatial index to pick the field, `key` names the location field
// (a GeoJSON Point or a legacy [x, y] pair). Distances are metres on the Earth for a GeoJSON `near`,
// radians for a legacy pair with spherical: true, and plane units for a legacy pair otherwise, as in MongoDB.
import { Query } from 'mingo';
import { invalidArgument } from '../../../core/serving/status-error.js';
import { isPlainObject } from './sql-literals.js';

const EARTH_RADIUS_M = 6378100;

type Point = [number, number];

function toPoint(value: unknown): Point | null {
  if (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === 'number' && Number.isFinite(n))) return value as Point;
  if (isPlainObject(value) && value.type === 'Point') return toPoint(value.coordinates);
  return null;
}

const getPath = (doc: unknown, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), doc);

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let target = doc;
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(target[k])) target[k] = {};
    target = target[k] as Record<string, unknown>;
  }
  target[keys[keys.length - 1]] = value;
}

function haversine(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLng = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function geoNear(docs: Record<string, unknown>[], spec: unknown): Record<string, unknown>[] {
  if (!isPlainObject(spec)) throw invalidArgument('query[0].$geoNear: must be a document');
  const near = toPoint(spec.near);
  if (!near) throw invalidArgument('query[0].$geoNear.near: must be a GeoJSON Point or an [x, y] pair');
  if (typeof spec.distanceField !== 'string' || spec.distanceField === '') throw invalidArgument('query[0].$geoNear.distanceField: is required');
  if (typeof spec.key !== 'string' || spec.key === '') throw invalidArgument('query[0].$geoNear.key: is required (the location field, e.g. "data.location")');
  const geoJson = isPlainObject(spec.near);
  const spherical = geoJson || spec.spherical === true;
  const multiplier = typeof spec.distanceMultiplier === 'number' ? spec.distanceMultiplier : 1;
  const min = typeof spec.minDistance === 'number' ? spec.minDistance : 0;
  const max = typeof spec.maxDistance === 'number' ? spec.maxDistance : Infinity;
  const query = isPlainObject(spec.query) ? new Query(spec.query, { scriptEnabled: false }) : null;
  const found: { doc: Record<string, unknown>; distance: number }[] = [];
  for (const doc of docs) {
    const location = getPath(doc, spec.key);
    const point = toPoint(location);
    if (!point || (query && !query.test(doc))) continue;
    const angle = haversine(near, point);
    const distance = geoJson ? angle * EARTH_RADIUS_M : spherical ? angle : Math.hypot(point[0] - near[0], point[1] - near[1]);
    if (distance < min || distance > max) continue;
    found.push({ doc, distance });
  }
  found.sort((a, b) => a.distance - b.distance);
  return found.map(({ doc, distance }) => {
    const out = structuredClone(doc);
    setPath(out, spec.distanceField as string, distance * multiplier);
    if (typeof spec.includeLocs === 'string') setPath(out, spec.includeLocs, getPath(doc, spec.key as string));
    return out;
  });
}
