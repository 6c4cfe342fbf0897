// Public surface of the protocol core: re-exports only.
export * from './envelope.js';
export * from './errors.js';
export * from './types.js';
export * from './build.js';
