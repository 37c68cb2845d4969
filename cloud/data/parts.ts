// Resolves a machine part id to where its data belongs (organization, location, machine) and to the
// names that capture metadata carries. Parts never move, so lookups are cached.
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import type { PartPrincipal } from '../auth/principal.js';
import type { TabularStore } from '../store/tabular.js';

export interface PartInfo extends PartPrincipal {
  partName: string;
  robotName: string;
}

export class PartDirectory {
  private readonly cache = new Map<string, PartInfo>();

  constructor(private readonly store: TabularStore) {}

  /** The part, or INVALID_ARGUMENT (empty id) / NOT_FOUND (unknown id) naming `field`. */
  async require(partId: string, field = 'part_id'): Promise<PartInfo> {
    if (!partId) throw invalidArgument(`${field} is required`);
    const cached = this.cache.get(partId);
    if (cached) return cached;
    const rows = await this.store.query(
      `SELECT p.name AS part_name, p.location_id, p.organization_id, m.id AS robot_id, m.name AS robot_name
       FROM machine_parts p JOIN machines m ON m.id = p.machine_id WHERE p.id = ?`,
      [partId],
    );
    if (rows.length === 0) throw notFound(`${field} "${partId}" names no machine part`);
    const r = rows[0];
    const info: PartInfo = {
      kind: 'part',
      partId,
      partName: String(r.part_name),
      machineId: String(r.robot_id),
      robotName: String(r.robot_name),
      locationId: String(r.location_id),
      organizationId: String(r.organization_id),
    };
    this.cache.set(partId, info);
    return info;
  }
}
