/**
 * A build step's attacks on the host, shared by the escape tests of the job sandbox
 * (test/http/builds-sandbox.test.ts, builds-hostile.test.ts) and of container steps
 * (test/http/builds-container-escapes.test.ts). A script is {@link attackPrelude} and lines of
 * `attempt <name> <command…>`, each printing `ESCAPE <name>` when the command succeeded and
 * `BLOCKED <name>` when it failed; each test runs the same script on the host as a control, where
 * the attacks must work, so that `BLOCKED` in a build is not vacuous.
 *
 * The commands are those of busybox (a test image's tools, also on the host) or of the host
 * (coreutils, util-linux); only `connect` differs: node on the host, busybox's `nc` in an image.
 * Nothing an attack does on the host lasts: what it mounts, creates or writes it undoes, or a
 * test removes by its marker.
 */

/** Whose tools run the script: the host's (in the sandbox and its control) or busybox's (in a container image, or on the host with busybox's applets first on `PATH`). */
export type AttackTools = 'host' | 'busybox';

/**
 * The start of every attack script: `set +e`, `attempt NAME COMMAND…` and `connect HOST PORT`,
 * which succeeds once a TCP connection to `HOST:PORT` is established (within three seconds).
 */
export function attackPrelude(tools: AttackTools): string {
  const connect =
    tools === 'host'
      ? `connect() { node -e 'const s = require("net").connect(Number(process.argv[2]), process.argv[1]); s.on("connect", () => process.exit(0)); s.on("error", () => process.exit(1)); setTimeout(() => process.exit(1), 3000)' "$1" "$2"; }`
      : 'connect() { nc -w 3 "$1" "$2" < /dev/null > /dev/null; }';
  return ['set +e', 'attempt() { name=$1; shift; if "$@" > /dev/null 2>&1; then echo "ESCAPE $name"; else echo "BLOCKED $name"; fi; }', connect].join('\n');
}

/** A script for a build spec's `commands`, where `@` starts a variable. */
export function inSpec(script: string): string {
  return script.replace(/"\$@"/g, '"$@@"');
}

/** What a script printed, as `name → ESCAPE|BLOCKED` (a log's prefixes before the verdict are ignored). */
export function verdicts(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .split('\n')
      .map((l) => /(ESCAPE|BLOCKED) (\S+)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m[2], m[1]]),
  );
}

/** The server a build attacks: its data dir and files, its process, its port and home. */
export interface ServerTargets {
  readonly dataDir: string;
  /** Another project's bare repository. */
  readonly victimRepo: string;
  /** The pid of the server's process on the host. */
  readonly serverPid: number;
  readonly port: number;
  /** The server's home directory (`os.homedir()`), not empty on the host. */
  readonly home: string;
  /** A host directory anyone may write (0777). */
  readonly hostDir: string;
  /** Unique to the test run: names the files attacks create outside the build. */
  readonly marker: string;
  /** Whether the database is the data dir's SQLite file. */
  readonly sqlite: boolean;
}

/**
 * Attacks on the server's data and process: reading its secret key, database and repositories
 * (by path, through `/proc/<server>/root`, through a link planted in the workspace), its
 * environment and home; connecting to it and to PostgreSQL on loopback or through slirp4netns's
 * gateway; writing the data dir (also through the link), a host directory and the system.
 * Leaves the link `data-link` (to the data dir) in the working directory.
 */
export function serverAttacks(t: ServerTargets): string[] {
  return [
    `attempt read-secret-key cat ${t.dataDir}/secret.key`,
    ...(t.sqlite ? [`attempt read-database head -c 100 ${t.dataDir}/gitloom.db`] : []),
    `attempt list-repositories ls ${t.dataDir}/repos`,
    `attempt read-other-repository cat ${t.victimRepo}/HEAD`,
    `attempt read-server-environ cat /proc/${t.serverPid}/environ`,
    `attempt read-data-dir-through-proc cat /proc/${t.serverPid}/root${t.dataDir}/secret.key`,
    `ln -sfn ${t.dataDir} data-link`,
    'attempt read-data-dir-through-link cat data-link/secret.key',
    "attempt write-data-dir-through-link sh -c 'echo pwned > data-link/pwned-through-link'",
    `attempt read-server-home sh -c 'ls -A ${t.home} | grep -q .'`,
    `attempt connect-server connect 127.0.0.1 ${t.port}`,
    'attempt connect-postgres connect 127.0.0.1 5432',
    // slirp4netns's gateway is the host: with host loopback disabled it must not lead there
    `attempt connect-server-through-gateway connect 10.0.2.2 ${t.port}`,
    `attempt write-data-dir touch ${t.dataDir}/pwned`,
    `attempt write-outside-workspace touch ${t.hostDir}/pwned`,
    `attempt write-system touch /usr/pwned-${t.marker}`,
    `attempt write-root touch /pwned-${t.marker}`,
    'attempt read-shadow head -c 1 /etc/shadow',
    "attempt hook-secret-in-env sh -c 'env | grep -q GITLOOM_HOOK'",
  ];
}

/** What {@link serverAttacks} and {@link privilegeAttacks} leave on the host when they work (the control removes them). */
export function attackLeftovers(t: Pick<ServerTargets, 'dataDir' | 'hostDir' | 'marker'>): string[] {
  return [`${t.dataDir}/pwned`, `${t.dataDir}/pwned-through-link`, `${t.hostDir}/pwned`, `/usr/pwned-${t.marker}`, `/pwned-${t.marker}`, scratchDir(t.marker)];
}

/** The directory {@link privilegeAttacks} mounts on and makes its device node in. */
function scratchDir(marker: string): string {
  return `/tmp/gitloom-attack-${marker}`;
}

/** Hosts beside the build: a listener on one of the host's own addresses, a LAN host and the metadata service (test/helpers/network.ts). */
export interface NetworkTargets {
  readonly hostAddress: string;
  readonly listenerPort: number;
  readonly lan: { readonly address: string; readonly metadataAddress: string; readonly port: number };
}

/** Attacks on the network beside the build: the host's own address, a LAN host, the cloud metadata service. */
export function networkAttacks(t: NetworkTargets): string[] {
  return [
    `attempt connect-host-address connect ${t.hostAddress} ${t.listenerPort}`,
    `attempt connect-lan-host connect ${t.lan.address} ${t.lan.port}`,
    `attempt connect-metadata-service connect ${t.lan.metadataAddress} ${t.lan.port}`,
  ];
}

/** Attacks on the host's `/etc` (files the sandbox's allow-list leaves out) and on the kernel through a new user namespace. */
export function systemAttacks(): string[] {
  return [
    'attempt read-etc-environment cat /etc/environment',
    'attempt list-etc-postgresql ls /etc/postgresql',
    'attempt read-etc-shadow head -c 1 /etc/shadow',
    'attempt nested-user-namespace unshare -U true',
  ];
}

/**
 * Attacks on becoming the host's root: root of the step being the host's uid 0 (its uid map),
 * holding capabilities, running without a seccomp filter or with new privileges allowed, and
 * what root could do — mount, make a device node, load a kernel module (busybox's `insmod` of a
 * file that is no module: refused for permission, not for its format), signal the server, write
 * a kernel setting (`/proc/sys`, its own value back) or a cgroup (`/sys`), and reach a container
 * engine's socket (`sockets`: those that exist on the host; none leaves the attack out).
 */
export function privilegeAttacks(t: { serverPid: number; marker: string; sockets: readonly string[] }): string[] {
  const scratch = scratchDir(t.marker);
  const status = (field: string, pattern: string) => `grep -qE '^${field}:[[:space:]]*${pattern}$' /proc/self/status`;
  return [
    "attempt root-is-host-root grep -qE '^[[:space:]]*0[[:space:]]+0[[:space:]]' /proc/self/uid_map",
    `attempt has-capabilities ${status('CapEff', '0*[1-9a-f][0-9a-f]*')}`,
    `attempt no-seccomp-filter ${status('Seccomp', '0')}`,
    `attempt new-privileges-allowed ${status('NoNewPrivs', '0')}`,
    `attempt mount sh -c 'mkdir -p ${scratch} && mount -t tmpfs gitloom-attack ${scratch} && umount ${scratch}'`,
    `attempt make-device-node sh -c 'mkdir -p ${scratch} && mknod ${scratch}/null c 1 3 && rm ${scratch}/null'`,
    `attempt load-kernel-module sh -c '! busybox insmod /bin/busybox 2>&1 | grep -qi "not permitted"'`,
    `attempt signal-server kill -0 ${t.serverPid}`,
    "attempt write-proc-sys sh -c 'v=$(cat /proc/sys/vm/swappiness) && echo $v > /proc/sys/vm/swappiness'",
    `attempt write-cgroup sh -c 'd=/sys/fs/cgroup/pids; [ -d $d ] || d=/sys/fs/cgroup; mkdir $d/gitloom-attack-${t.marker} && rmdir $d/gitloom-attack-${t.marker}'`,
    ...(t.sockets.length > 0 ? [`attempt reach-engine-socket sh -c 'for s in ${t.sockets.join(' ')}; do [ -S $s ] && exit 0; done; exit 1'`] : []),
  ];
}
