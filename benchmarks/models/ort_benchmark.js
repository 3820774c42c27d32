// ===- ort_benchmark.js - ONNX Runtime timing of one model -------------=== //
//
// node ort_benchmark.js MODEL.onnx INPUTS EXPECTED.npy THREADS REPS WARMUP
// Runs the model with onnxruntime-node (CPU, all graph optimizations,
// sequential execution, intra-op threads = THREADS) and prints
// "median_ms <ms> max_abs_err <err> max_abs_ref <max |expected|>".
// INPUTS is one .npy file, or several separated by commas, given to the
// session's inputs in order (float32, int64, int32 or bool; C order).
// EXPECTED.npy is compared with the first output; "-" skips the check.
// Needs NODE_PATH to hold onnxruntime-node (run_model_benchmark.py and
// benchmarks/zoo/run_zoo.py install it).
// ===----------------------------------------------------------------=== //
const fs = require('fs');
const ort = require('onnxruntime-node');

// dtype string of the .npy header -> [ort type, typed array constructor].
const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
  '|b1': ['bool', Uint8Array],
};

// Reads a little-endian C-order .npy file of one of NPY_TYPES.
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = header.match(/'descr': '([^']*)'/);
  if (!descr || !NPY_TYPES[descr[1]] || header.includes("'fortran_order': True"))
    throw new Error(path + ': expected a C-order .npy file of float32, int64, int32 or bool');
  const [type, Array] = NPY_TYPES[descr[1]];
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const copy = bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length);
  return {type, shape, data: new Array(copy)};
}

async function main() {
  const [model, inputPaths, expectedPath, threads, reps, warmup] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const paths = inputPaths.split(',');
  if (paths.length !== session.inputNames.length)
    throw new Error(`${model} has ${session.inputNames.length} inputs, ${paths.length} given`);
  const feeds = {};
  paths.forEach((path, i) => {
    const input = readNpy(path);
    feeds[session.inputNames[i]] = new ort.Tensor(input.type, input.data, input.shape);
  });
  const times = [];
  let output;
  for (let i = 0; i < Number(warmup) + Number(reps); i++) {
    const start = process.hrtime.bigint();
    output = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (i >= Number(warmup)) times.push(ms);
  }
  times.sort((a, b) => a - b);
  let err = 0, ref = 0;
  if (expectedPath !== '-') {
    const got = output[session.outputNames[0]].data;
    const expected = readNpy(expectedPath).data;
    for (let i = 0; i < expected.length; i++) {
      err = Math.max(err, Math.abs(Number(got[i]) - Number(expected[i])));
      ref = Math.max(ref, Math.abs(Number(expected[i])));
    }
  }
  console.log(`median_ms ${times[Math.floor(times.length / 2)]} max_abs_err ${err} ` +
              `max_abs_ref ${ref}`);
}
main().catch((e) => { console.error('ort_benchmark.js: error: ' + e.message); process.exit(1); });
