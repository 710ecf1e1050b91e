// Jest runs tests in a separate VM realm with its own typed-array constructors. Native addons such
// as onnxruntime-node create tensors with the host realm's Float32Array, and onnxruntime-common's
// `instanceof` checks (evaluated in the test realm) then reject them. Sharing the host's
// constructors makes both realms agree.
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class HostTypedArraysEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = HostTypedArraysEnvironment;
