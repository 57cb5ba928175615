/**
 * The door of the ssh area (docs/architecture.md#domain-areas): the SSH server's host keys and
 * what administrators see of it. The server itself is a transport (src/ssh/), like HTTP.
 */
export { type HostKey, hostKeyInfo, type HostKeyInfo, SSH_DIR, sshHostKeys } from './host-keys.js';
export { sshStatus, type SshStatus } from './status.js';
