// Public surface of the protocol core: re-exports only.
export * from './envelope.js';
export * from './errors.js';
export * from './types.js';
export * from './build.js';
export * from './shape.js';
export * from './payloads.js';
export * from './validate.js';
export * from './capture.js';
export * from './redact.js';
export * from './filter.js';
export * from './stream-checks.js';
export * from './text.js';
