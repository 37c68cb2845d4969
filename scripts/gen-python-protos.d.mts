// Types of scripts/gen-python-protos.mjs, for its test.
export function findTool(name: string, searchPath?: string): string | undefined;
export function generatePython(root: string, descriptorSet: string, out?: string, searchPath?: string): boolean;
