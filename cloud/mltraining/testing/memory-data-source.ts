// A TrainingDataSource held in memory, for tests of the training core without a cloud.
import { randomUUID } from 'node:crypto';
import type { TrainingDataSource, TrainingImage } from '../data-source.js';
import type { ShapeImage } from './shapes.js';

export class MemoryDataSource implements TrainingDataSource {
  private readonly datasets = new Map<string, { organizationId: string; images: TrainingImage[] }>();
  private readonly bytes = new Map<string, Uint8Array>();

  addDataset(organizationId: string, images: { png: Uint8Array; tags: string[]; boxes?: TrainingImage['boundingBoxes'] }[]): string {
    const id = randomUUID();
    const entries = images.map((image) => {
      const binaryDataId = randomUUID();
      this.bytes.set(binaryDataId, image.png);
      return { binaryDataId, fileExt: '.png', tags: image.tags, boundingBoxes: image.boxes ?? [] };
    });
    this.datasets.set(id, { organizationId, images: entries });
    return id;
  }

  /** Adds shape images, tagged with their colours and boxed per shape. */
  addShapes(organizationId: string, shapes: ShapeImage[]): string {
    return this.addDataset(
      organizationId,
      shapes.map((s) => ({
        png: s.png,
        tags: s.labels,
        boxes: s.objects.map((o) => ({
          label: o.label,
          xMinNormalized: o.box[0],
          yMinNormalized: o.box[1],
          xMaxNormalized: o.box[2],
          yMaxNormalized: o.box[3],
        })),
      })),
    );
  }

  async datasetOrganization(datasetId: string): Promise<string | undefined> {
    return this.datasets.get(datasetId)?.organizationId;
  }

  async listImages(organizationId: string, datasetId: string): Promise<TrainingImage[]> {
    const dataset = this.datasets.get(datasetId);
    return dataset && dataset.organizationId === organizationId ? dataset.images : [];
  }

  async readImage(_organizationId: string, binaryDataId: string): Promise<Uint8Array> {
    const found = this.bytes.get(binaryDataId);
    if (!found) throw new Error(`no image ${binaryDataId}`);
    return found;
  }
}
