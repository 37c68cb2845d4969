// Test fixture: a tiny ONNX classifier built with the python `onnx` package (no torch, so it takes well
// under a second): probabilities = softmax(mean of each colour channel of `image` [N, 3, H, W]).
// Channel k's mean decides class k, so the expected output is known in closed form.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const script = `
import sys, onnx
from onnx import helper, TensorProto
size = int(sys.argv[2])
nodes = [
    helper.make_node("ReduceMean", ["image"], ["means"], axes=[2, 3], keepdims=0),
    helper.make_node("Softmax", ["means"], ["probabilities"], axis=1),
]
graph = helper.make_graph(nodes, "channel_means",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, size, size])],
    [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
`;

export const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Writes the channel-means classifier for size x size images to `path`. */
export function writeChannelMeansModel(path: string, size = 4): void {
  execFileSync(python, ['-c', script, path, String(size)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The expected output for one image: softmax of its channel means. */
export function channelMeansSoftmax(chw: Float32Array, size: number): number[] {
  const plane = size * size;
  const means = [0, 1, 2].map((c) => chw.subarray(c * plane, (c + 1) * plane).reduce((a, b) => a + b, 0) / plane);
  const max = Math.max(...means);
  const e = means.map((m) => Math.exp(m - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}
