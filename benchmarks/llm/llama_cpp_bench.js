// ===- llama_cpp_bench.js - llama.cpp prefill/decode of a GGUF, by token ids ---=== //
//
// node llama_cpp_bench.js MODEL.gguf --prompt=ID,ID,... [--threads=1] [--new-tokens=64]
//     [--rounds=1] [--warmup=0] [--kv-type=F16] [--top-logits=0] [--batch=512]
//
// Loads MODEL.gguf with llama.cpp through the npm package node-llama-cpp (CPU
// build: getLlama({gpu: false, build: "never"}) — it never compiles or
// downloads), then per round, on a cleared sequence:
//   prefill: the prompt ids evaluated in one batch, the next token chosen
//            greedily from the last position's logits (temperature 0);
//   decode:  new-tokens - 1 steps, each feeding the previous token and
//            choosing the next greedily.
// No text is tokenized: ids go in, ids come out (controlledEvaluate).
// Prints one JSON line: {"tokens": [...] (of the last round), "prefill_s":
// [per round], "decode_s": [per round], "threads", "kv_type", "top_logits":
// [per step: [[id, logit], ...]] when --top-logits=K > 0, "system_info"}.
// The module directory comes from LLAMA_NODE_MODULES (the node_modules folder
// holding node-llama-cpp and @node-llama-cpp/linux-x64; run_llm_benchmark.py
// installs it). Errors: a message on stderr and exit status 1.
// ===------------------------------------------------------------------------=== //
'use strict';
const path = require('path');
const {pathToFileURL} = require('url');

function parseArgs(argv) {
  const args = {threads: 1, newTokens: 64, rounds: 1, warmup: 0, kvType: 'F16', topLogits: 0,
                batch: 512, prompt: null, model: null};
  for (const arg of argv) {
    const match = arg.match(/^--([a-z-]+)=(.*)$/);
    if (!match) {
      if (args.model !== null) throw new Error('unexpected argument ' + arg);
      args.model = arg;
      continue;
    }
    const [, key, value] = match;
    const number = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`--${key} needs a non-negative integer, got '${value}'`);
      return n;
    };
    if (key === 'prompt') {
      args.prompt = value.split(',').map((s) => {
        const n = Number(s);
        if (s === '' || !Number.isInteger(n) || n < 0) throw new Error(`--prompt: '${s}' is not a token id`);
        return n;
      });
    } else if (key === 'threads') args.threads = number();
    else if (key === 'new-tokens') args.newTokens = number();
    else if (key === 'rounds') args.rounds = number();
    else if (key === 'warmup') args.warmup = number();
    else if (key === 'top-logits') args.topLogits = number();
    else if (key === 'batch') args.batch = number();
    else if (key === 'kv-type') args.kvType = value.toUpperCase();
    else throw new Error('unknown option --' + key);
  }
  if (args.model === null) throw new Error('usage: llama_cpp_bench.js MODEL.gguf --prompt=ID,... [options]');
  if (args.prompt === null || args.prompt.length === 0) throw new Error('--prompt=ID,ID,... is required');
  if (args.threads < 1 || args.newTokens < 1 || args.rounds < 1) throw new Error('--threads, --new-tokens and --rounds must be >= 1');
  return args;
}

async function loadLlamaCpp() {
  const modules = process.env.LLAMA_NODE_MODULES;
  if (!modules) throw new Error('LLAMA_NODE_MODULES is not set (the node_modules folder with node-llama-cpp)');
  const entry = path.join(modules, 'node-llama-cpp', 'dist', 'index.js');
  return import(pathToFileURL(entry).href);
}

// One generation: returns {tokens, prefillSeconds, decodeSeconds, topLogits}.
async function generate(sequence, args) {
  const greedy = {temperature: 0};
  const wantLogits = args.topLogits > 0;
  const next = wantLogits ? {token: true, options: greedy, logits: {filter: {tokens: [], includeTop: args.topLogits}}}
                          : {token: true, options: greedy};
  const topLogits = [];
  const record = (output) => {
    if (!output || output.next.token === undefined || output.next.token === null)
      throw new Error('llama.cpp returned no next token');
    if (wantLogits) topLogits.push(Array.from(output.next.logits.entries()));
    return output.next.token;
  };
  await sequence.clearHistory();
  const input = args.prompt.slice(0, -1);
  input.push([args.prompt[args.prompt.length - 1], {generateNext: next}]);
  let start = process.hrtime.bigint();
  let results = await sequence.controlledEvaluate(input);
  const tokens = [record(results[input.length - 1])];
  const prefillSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  start = process.hrtime.bigint();
  for (let i = 1; i < args.newTokens; i++) {
    results = await sequence.controlledEvaluate([[tokens[tokens.length - 1], {generateNext: next}]]);
    tokens.push(record(results[0]));
  }
  const decodeSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  return {tokens, prefillSeconds, decodeSeconds, topLogits};
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const {getLlama, LlamaLogLevel} = await loadLlamaCpp();
  const llama = await getLlama({gpu: false, build: 'never', logLevel: LlamaLogLevel.error,
                                maxThreads: args.threads});
  const model = await llama.loadModel({modelPath: path.resolve(args.model), gpuLayers: 0,
                                       useMmap: true});
  const contextSize = args.prompt.length + args.newTokens;
  const context = await model.createContext({
    contextSize: Math.max(contextSize, 64), batchSize: Math.max(args.batch, args.prompt.length),
    threads: {ideal: args.threads, min: args.threads}, sequences: 1,
    experimentalKvCacheKeyType: args.kvType, experimentalKvCacheValueType: args.kvType});
  const sequence = context.getSequence();
  const prefill = [];
  const decode = [];
  let last = null;
  for (let round = 0; round < args.warmup + args.rounds; round++) {
    last = await generate(sequence, args);
    if (round >= args.warmup) {
      prefill.push(last.prefillSeconds);
      decode.push(last.decodeSeconds);
    }
  }
  const out = {tokens: last.tokens, prefill_s: prefill, decode_s: decode, threads: args.threads,
               kv_type: args.kvType, prompt_len: args.prompt.length, new_tokens: args.newTokens,
               system_info: llama.systemInfo};
  if (args.topLogits > 0) out.top_logits = last.topLogits;
  console.log(JSON.stringify(out));
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((e) => {
  console.error('llama_cpp_bench.js: error: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
