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

/** What one capture produced. */
export type Captured = { kind: 'tabular'; data: Record<string, unknown> } | { kind: 'binary'; binary: CapturedBinary };

/** A driver call of a capture: made in the captured resource's own worker (core/workers/port-sampler.ts). */
export interface CaptureCall {
  method: string;
  args: unknown[];
}

/**
 * A capture method that an API declares for every resource of it (plugins/apis/): the driver calls one
 * capture makes, and how their results become what is stored. Plain functions with no runtime imports:
 * they run on the main thread (to validate configs) and in the data manager's worker.
 */
export interface ApiCaptureMethod {
  kind: CaptureKind;
  /** Checks additional_params on the main thread; returns the rule that is broken, if any. */
  checkParams?(params: Record<string, unknown>): string | undefined;
  /** The driver calls one capture makes, in order. */
  calls(params: Record<string, unknown>): CaptureCall[];
  /** Turns the calls' results (in the same order) into what is stored. */
  shape(values: unknown[], params: Record<string, unknown>): Captured;
}

/** One driver call with these arguments. */
export const callOf = (method: string, ...args: unknown[]): CaptureCall[] => [{ method, args }];

/** A tabular capture result. */
export const tabular = (data: Record<string, unknown>): Captured => ({ kind: 'tabular', data });
