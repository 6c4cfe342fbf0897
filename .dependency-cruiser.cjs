// The layers of src/, bottom to top, one folder each. A module may import its own folder and the
// folders below it, never one above, and no chain of imports may come back to where it started.
// The order is that of the real imports (README "Where code goes" says what each folder holds):
const layers = [
  'protocol', // the wire (envelope, payloads, errors, ids) and the local ground (secret, state dir)
  'machines', // the per-session XState machines and their pure step
  'streams', // the adapter core: hook endpoint, actor host, stamping, journal, log, native-lane plumbing
  'adapters', // one folder per vendor (table, installer, ways in, options, MCP row) and what they share
  'relay', // the relay server, routing and ACL, the stores, the adapter's relay link
  'audit', // the steering fold over a stream and its findings
  'consumer', // what a sender or watcher does against the relay
  'notify', // push notices and one-tap answer links
  'inspect', // the live inspect page
  'console', // the console's page and actions
  'mcp', // the MCP server's tools and installer
  'services', // the background services of up, status, down
  'doctor', // doctor's checks
  'demo', // aep-steer demo
  'cli', // the commands, which wire every face
];
const folders = (names) => `^src/(${names.join('|')})/`;

const upward = layers.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${layer}`,
  comment: `${layer} (layer ${i}) may not import a folder above it: ${layers.slice(i + 1).join(', ')}`,
  severity: 'error',
  from: { path: folders([layer]) },
  to: { path: folders(layers.slice(i + 1)) },
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
      comment: 'every folder of src/ is a layer: add a new folder to the layers above',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folders(layers) },
      to: {},
    },
    {
      name: 'layer-known',
      comment: 'every folder of src/ is a layer: add a new folder to the layers above',
      severity: 'error',
      from: {},
      to: { path: '^src/[^/]+/', pathNot: folders(layers) },
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
