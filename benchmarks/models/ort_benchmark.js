// ===- ort_benchmark.js - ONNX Runtime timing of one model -------------=== //
//
// node ort_benchmark.js MODEL.onnx INPUT.npy EXPECTED.npy THREADS REPS WARMUP
// Runs the model with onnxruntime-node (CPU, all graph optimizations,
// sequential execution, intra-op threads = THREADS) and prints
// "median_ms <ms> max_abs_err <err>". Needs NODE_PATH to hold
// onnxruntime-node (run_model_benchmark.py installs it).
// ===----------------------------------------------------------------=== //
const fs = require('fs');
const ort = require('onnxruntime-node');

// Reads a little-endian float32 C-order .npy file.
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.toString('latin1', major === 1 ? 10 : 12, start);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True"))
    throw new Error(path + ': expected a C-order float32 .npy file');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset + start,
                                                   bytes.byteOffset + bytes.length));
  return {shape, data};
}

async function main() {
  const [model, inputPath, expectedPath, threads, reps, warmup] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const input = readNpy(inputPath);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', input.data, input.shape)};
  const times = [];
  let output;
  for (let i = 0; i < Number(warmup) + Number(reps); i++) {
    const start = process.hrtime.bigint();
    output = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (i >= Number(warmup)) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const got = output[session.outputNames[0]].data;
  const expected = readNpy(expectedPath).data;
  let err = 0;
  for (let i = 0; i < expected.length; i++) err = Math.max(err, Math.abs(got[i] - expected[i]));
  console.log(`median_ms ${times[Math.floor(times.length / 2)]} max_abs_err ${err}`);
}
main().catch((e) => { console.error('ort_benchmark.js: error: ' + e.message); process.exit(1); });
