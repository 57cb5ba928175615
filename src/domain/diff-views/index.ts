/**
 * The door of the diff-views area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { type DiffLayout, getDiffLayout, parseDiffLayout, setDiffLayout, setFileViewed, viewedFiles } from './diff-views.js';
