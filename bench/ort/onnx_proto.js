// The few ONNX protobuf facts the benchmark needs, read without a protobuf library: TensorProto
// files (.pb, the layout of ONNX's backend test data and of data/models/*.input_0.pb) read and
// written for dense tensors, and the node count of a model's main graph.
'use strict';

const fs = require('fs');

// onnx.proto TensorProto.DataType -> [ORT type name, typed-array constructor].
const DATA_TYPES = {
  1: ['float32', Float32Array],
  3: ['int8', Int8Array],
  2: ['uint8', Uint8Array],
  6: ['int32', Int32Array],
  7: ['int64', BigInt64Array],
  9: ['bool', Uint8Array],
  11: ['float64', Float64Array],
};
// TensorProto field numbers.
const F_DIMS = 1, F_DATA_TYPE = 2, F_FLOAT_DATA = 4, F_INT32_DATA = 5, F_INT64_DATA = 7, F_NAME = 8,
      F_RAW_DATA = 9, F_DOUBLE_DATA = 10;

class Reader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  done() {
    return this.pos >= this.buf.length;
  }
  varint() {  // as a BigInt: int64 dims and negative int32 values need all 64 bits
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return BigInt.asIntN(64, result);
      shift += 7n;
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0)
      this.varint();
    else if (wire === 1)
      this.pos += 8;
    else if (wire === 2)
      this.bytes();
    else if (wire === 5)
      this.pos += 4;
    else
      throw new Error(`unsupported wire type ${wire}`);
  }
}

// A repeated scalar field, packed (wire 2) or not: appends its values to `out`.
function readRepeated(r, wire, out, scalarWire, readPacked) {
  if (wire === 2) {
    const sub = new Reader(r.bytes());
    while (!sub.done()) out.push(readPacked(sub));
  } else if (wire === scalarWire) {
    out.push(readPacked(r));
  } else {
    r.skip(wire);
  }
}

function readFixed(sub, size, get) {
  const view = new DataView(sub.buf.buffer, sub.buf.byteOffset + sub.pos, size);
  sub.pos += size;
  return get(view);
}

// Returns {name, type, dims: number[], data: TypedArray}.
function decodeTensor(buf) {
  const r = new Reader(buf);
  const dims = [], floats = [], ints = [], doubles = [];
  let dataType = 0, name = '', raw = null;
  while (!r.done()) {
    const key = Number(r.varint());
    const field = key >> 3, wire = key & 7;
    if (field === F_DIMS) {
      readRepeated(r, wire, dims, 0, (s) => Number(s.varint()));
    } else if (field === F_DATA_TYPE && wire === 0) {
      dataType = Number(r.varint());
    } else if (field === F_FLOAT_DATA) {
      readRepeated(r, wire, floats, 5, (s) => readFixed(s, 4, (v) => v.getFloat32(0, true)));
    } else if (field === F_INT32_DATA || field === F_INT64_DATA) {
      readRepeated(r, wire, ints, 0, (s) => s.varint());
    } else if (field === F_DOUBLE_DATA) {
      readRepeated(r, wire, doubles, 1, (s) => readFixed(s, 8, (v) => v.getFloat64(0, true)));
    } else if (field === F_NAME && wire === 2) {
      name = Buffer.from(r.bytes()).toString('utf8');
    } else if (field === F_RAW_DATA && wire === 2) {
      raw = r.bytes();
    } else {
      r.skip(wire);
    }
  }
  const entry = DATA_TYPES[dataType];
  if (!entry) throw new Error(`unsupported TensorProto data_type ${dataType}`);
  const [type, Ctor] = entry;
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (raw) {
    if (raw.length !== count * Ctor.BYTES_PER_ELEMENT)
      throw new Error(
          `raw_data holds ${raw.length} bytes, dims [${dims}] need ` +
          `${count * Ctor.BYTES_PER_ELEMENT}`);
    data = new Ctor(count);  // a copy: raw_data need not be aligned
    new Uint8Array(data.buffer).set(raw);
  } else {
    const src = type === 'float32' ? floats : type === 'float64' ? doubles : ints;
    if (src.length !== count)
      throw new Error(`tensor holds ${src.length} values, dims [${dims}] need ${count}`);
    data = Ctor === BigInt64Array ? BigInt64Array.from(src) : Ctor.from(src, (v) => Number(v));
  }
  return {name, type, dims, data};
}

function readTensorFile(path) {
  try {
    return decodeTensor(fs.readFileSync(path));
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
}

function varintBytes(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

function encodeTensor({name, type, dims, data}) {
  const code = Object.keys(DATA_TYPES).find((k) => DATA_TYPES[k][0] === type);
  if (code === undefined) throw new Error(`cannot write a tensor of type ${type}`);
  const parts = [];
  const lengthDelimited = (field, bytes) => {
    parts.push(Buffer.from([...varintBytes((field << 3) | 2), ...varintBytes(bytes.length)]));
    parts.push(Buffer.from(bytes));
  };
  lengthDelimited(F_DIMS, dims.flatMap((d) => varintBytes(d)));
  parts.push(Buffer.from([...varintBytes(F_DATA_TYPE << 3), ...varintBytes(Number(code))]));
  if (name) lengthDelimited(F_NAME, Buffer.from(name, 'utf8'));
  lengthDelimited(F_RAW_DATA, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return Buffer.concat(parts);
}

function writeTensorFile(path, tensor) {
  const tmp = path + '.tmp';
  fs.writeFileSync(tmp, encodeTensor(tensor));
  fs.renameSync(tmp, path);
}

// ModelProto.graph (7) -> GraphProto.node (1): the nodes of the main graph, without subgraphs.
function countOnnxNodes(path) {
  const count = (buf, field) => {
    const r = new Reader(buf);
    const found = [];
    while (!r.done()) {
      const key = Number(r.varint());
      if (key >> 3 === field && (key & 7) === 2)
        found.push(r.bytes());
      else
        r.skip(key & 7);
    }
    return found;
  };
  try {
    const graphs = count(fs.readFileSync(path), 7);
    if (graphs.length !== 1) throw new Error('no graph');
    return count(graphs[0], 1).length;
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
}

// Largest absolute difference, and that difference relative to the reference's largest
// magnitude (element-wise relative errors explode on values near zero, e.g. random logits).
function compareTensors(actual, reference) {
  if (actual.dims.join(',') !== reference.dims.join(','))
    return {error: `shape [${actual.dims}] differs from [${reference.dims}]`};
  let maxAbs = 0, maxRef = 0;
  for (let i = 0; i < reference.data.length; ++i) {
    const a = Number(actual.data[i]), b = Number(reference.data[i]);
    const d = Math.abs(a - b);
    if (!(d <= maxAbs)) maxAbs = d;  // NaN propagates
    maxRef = Math.max(maxRef, Math.abs(b));
  }
  return {maxAbs, maxRel: maxRef > 0 ? maxAbs / maxRef : maxAbs};
}

module.exports = {
  countOnnxNodes,
  readTensorFile,
  writeTensorFile,
  decodeTensor,
  encodeTensor,
  compareTensors
};
