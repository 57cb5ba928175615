/**
 * The door of the mirrors area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  createMirror,
  DEFAULT_INTERVAL_MINUTES,
  deleteMirror,
  getMirror,
  listMirrors,
  MAX_INTERVAL_MINUTES,
  MAX_PUSH_MIRRORS,
  MIN_INTERVAL_MINUTES,
  type MirrorDirection,
  type MirrorInput,
  type MirrorView,
  projectHasPullMirror,
  syncMirrorNow,
  updateMirror,
} from './mirror-settings.js';
export { markPushMirrorsPending, MirrorWorker } from './mirror-worker.js';
