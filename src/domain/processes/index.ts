/**
 * The door of the processes area (docs/architecture.md#domain-areas): the registry of live server
 * processes, the rule telling when one is gone, and whose work a leftover is.
 */
export {
  GONE_AFTER_MS,
  HEARTBEAT_MS,
  isGone,
  ownersNow,
  ProcessRegistry,
  SWEEP_MS,
  type Owners,
  type RegisteredProcess,
  type RegistryOptions,
} from './registry.js';
