#!/usr/bin/env node
// Saves the graph ONNX Runtime optimizes a model into (its session option
// optimizedModelFilePath), as a user of ONNX Runtime who saves the optimized model has it: at the
// "extended" level ONNX Runtime writes its contrib operators (FusedConv, FusedMatMul, Gelu,
// QuickGelu, SkipLayerNormalization). For bench/models/export_other.py; benchmarks only.
//
//   node bench/ort/save_optimized.js ORT_DIR IN.onnx OUT.onnx [LEVEL]
'use strict';
const path = require('path');

async function main() {
  const [ortDir, input, output, level = 'extended'] = process.argv.slice(2);
  if (!output) {
    console.error('usage: node bench/ort/save_optimized.js ORT_DIR IN.onnx OUT.onnx [LEVEL]');
    process.exit(2);
  }
  const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));
  await ort.InferenceSession.create(input, {
    graphOptimizationLevel: level,
    optimizedModelFilePath: output,
    executionProviders: ['cpu'],
  });
}

main().catch((e) => {
  console.error(`save_optimized: ${e.message}`);
  process.exit(1);
});
