/**
 * The git layer's API for bare repositories in one import: creation and refs (`refs.ts`),
 * commits (`commits.ts`), merges (`merge.ts`) and name validation (`names.ts`).
 * Every function takes the absolute path of a bare repository and runs git through
 * `command.ts`; see each module for the docs/ sections implemented.
 */
export * from './refs.js';
export * from './commits.js';
export * from './merge.js';
export * from './names.js';
