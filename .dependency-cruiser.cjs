// The layers of src/, bottom to top. A module may import its own layer and the layers below it,
// never one above, and no chain of imports may come back to where it started.
//   0 protocol: the wire (envelope, payloads, errors, ids) and the local ground (secret, state dir)
//   1 machines: the per-session XState machines and their pure step
//   2 adapters, lanes, streams, relay, audit: the vendors, the adapter core, the relay, the audit
//   3 consumer: what a sender or watcher does against the relay
//   4 console, inspect, mcp, demo, services, doctor, notify: the faces a person or a script uses
//   5 cli: the commands, which wire every face
const layers = [
  ['protocol'],
  ['machines'],
  ['adapters', 'lanes', 'streams', 'relay', 'audit'],
  ['consumer'],
  ['console', 'inspect', 'mcp', 'demo', 'services', 'doctor', 'notify'],
  ['cli'],
];
const folders = (names) => `^src/(${names.join('|')})/`;

const upward = layers.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${layer.join('-')}`,
  comment: `${layer.join(', ')} (layer ${i}) may not import a layer above it`,
  severity: 'error',
  from: { path: folders(layer) },
  to: { path: folders(layers.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'a cycle of imports makes the modules in it one module; break it with a leaf module',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'layer-known',
      comment: 'every folder of src/ belongs to a layer: add a new folder to the layers above',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folders(layers.flat()) },
      to: {},
    },
    {
      name: 'layer-known',
      comment: 'every folder of src/ belongs to a layer: add a new folder to the layers above',
      severity: 'error',
      from: {},
      to: { path: '^src/[^/]+/', pathNot: folders(layers.flat()) },
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
