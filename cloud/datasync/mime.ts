// The file extension decides the MIME type, and the MIME type decides where data appears: images
// (.jpg, .jpeg, .png), point clouds (.pcd) or files (everything else). Tabular data is sensor data.
const byExtension: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.pcd': 'pointcloud/pcd',
  '.gif': 'image/gif',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.log': 'text/plain',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.mp4': 'video/mp4',
  '.wav': 'audio/wav',
  '.onnx': 'application/onnx',
  '.tflite': 'application/x-tflite',
};

export const defaultMimeType = 'application/octet-stream';

export type DataCategory = 'image' | 'pointcloud' | 'file';

/** The extension with its leading dot, lower-cased ('' for none), from an explicit extension or a file name. */
export function extensionOf(fileExtension: string, fileName = ''): string {
  if (fileExtension) return (fileExtension.startsWith('.') ? fileExtension : `.${fileExtension}`).toLowerCase();
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

/** MIME type from the extension; an unknown extension falls back to the uploader's mime_type, then octet-stream. */
export function mimeTypeFor(extension: string, declared = ''): string {
  return byExtension[extension.toLowerCase()] ?? (declared || defaultMimeType);
}

export function categoryOf(mimeType: string): DataCategory {
  if (mimeType === 'image/jpeg' || mimeType === 'image/png') return 'image';
  if (mimeType === 'pointcloud/pcd') return 'pointcloud';
  return 'file';
}
