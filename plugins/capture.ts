// Data capture methods a model declares for the data manager (core/datamanager), beyond the built-in
// ones of its api (sensor Readings, camera GetImage, ...). A declaration names the driver method the data
// manager calls, in the driver's worker, at each capture tick. Kept apart from contract.ts so that this
// optional part of the contract stays small and has no runtime imports.
//
//   defineModel({ api: 'acme:component:weather', model: 'acme:weather:station', ...,
//     captureMethods: { Wind: { kind: 'tabular', driverMethod: 'captureWind' } } });
//   // driver: async captureWind(additionalParams) { return { speed_mps: 3.2, heading_deg: 270 }; }

/** How the data manager stores what a capture method returns. */
export type CaptureKind = 'tabular' | 'binary';

export interface CaptureMethodDeclaration {
  /**
   * `tabular`: the driver method returns a JSON object, stored as one tabular point.
   * `binary`: it returns a CapturedBinary, stored as one binary datum.
   */
  readonly kind: CaptureKind;
  /** The driver method to call; it receives the capture method's `additional_params` object. */
  readonly driverMethod: string;
}

/** What a `binary` capture method returns. */
export interface CapturedBinary {
  data: Uint8Array;
  /** Decides the file extension the data is stored with (image/jpeg: .jpg, image/png: .png, pointcloud/pcd: .pcd). */
  mimeType: string;
}

/** Capture method names look like gRPC method names: `Readings`, `GetImage`. */
export const CAPTURE_METHOD_NAME = /^[A-Z][A-Za-z0-9]*$/;
