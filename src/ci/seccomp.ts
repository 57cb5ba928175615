/**
 * The job sandbox's seccomp filter (docs/compatibility.md#gitloom-differs-untrusted-builds "a seccomp filter"): the container engines'
 * default profile (`/usr/share/containers/seccomp.json` from Debian's
 * golang-github-containers-common, the one Podman applies to every container; any profile of that
 * JSON format through `GITLOOM_JOB_SECCOMP_PROFILE`) compiled to a classic BPF program by
 * libseccomp (src/ci/seccomp-bpf.py, run by Debian's python3 with python3-seccomp), handed to
 * bubblewrap's `--seccomp FD`. Compiled once per profile and process.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Default profile: the containers-common default of Podman and Buildah. */
export const DEFAULT_SECCOMP_PROFILE = '/usr/share/containers/seccomp.json';

/** The Python that has Debian's python3-seccomp (libseccomp's bindings). */
export const SECCOMP_PYTHON = '/usr/bin/python3';

/** What to install when the filter cannot be compiled (part of the build log's failure line). */
export const SECCOMP_PACKAGES = 'python3-seccomp and golang-github-containers-common';

const compiler = fileURLToPath(new URL('./seccomp-bpf.py', import.meta.url));
const compiled = new Map<string, Promise<Buffer>>();

/**
 * The BPF program (an array of 8-byte `sock_filter` instructions) of the seccomp profile at
 * `profile`, compiled on first use and cached for the life of the process (a failure is not
 * cached: installing the packages fixes the next job).
 *
 * @throws Error with the compiler's message when the profile or libseccomp's bindings are missing
 *   or the profile is malformed.
 */
export function seccompFilter(profile: string): Promise<Buffer> {
  let program = compiled.get(profile);
  if (!program) {
    program = new Promise<Buffer>((resolve, reject) => {
      execFile(
        SECCOMP_PYTHON,
        [compiler, profile],
        { encoding: 'buffer', maxBuffer: 1024 * 1024, env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' } },
        (error, stdout, stderr) => {
          if (error) {
            const last = stderr.toString('utf8').trim().split('\n').pop();
            reject(new Error(`Unable to compile the seccomp profile ${profile}: ${last || error.message} (install ${SECCOMP_PACKAGES})`));
          } else if (stdout.length === 0 || stdout.length % 8 !== 0) {
            reject(new Error(`Unable to compile the seccomp profile ${profile}: no BPF program`));
          } else resolve(stdout);
        },
      );
    });
    compiled.set(profile, program);
    program.catch(() => compiled.delete(profile));
  }
  return program;
}

/** `CLONE_NEWUSER`: the flag of `clone(2)` and `unshare(2)` that makes a user namespace. */
const CLONE_NEWUSER = 0x10000000;

/** One rule of a containers-common seccomp profile (the JSON format Podman reads). */
interface ProfileRule {
  names?: string[];
  action: string;
  args?: Array<{ index: number; value: number; valueTwo: number; op: string }> | null;
  errnoRet?: number;
  includes?: { arches?: string[] };
  excludes?: { arches?: string[] };
  [key: string]: unknown;
}

/**
 * The seccomp profile of container steps (docs/security.md#container-steps): the profile
 * `profileText` (containers-common's JSON format) with new user namespaces refused, as the job
 * sandbox refuses them (bubblewrap's `--disable-userns`). containers-common allows `unshare`,
 * `clone` and `clone3` whatever their flags, and a process in a nested user namespace holds every
 * capability over the namespaces it makes there (mounts, a network stack, …), a kernel surface the
 * job must not reach. Here `clone` and `unshare` are allowed without `CLONE_NEWUSER` and refused
 * with `EPERM` with it; `clone3`, whose flags a filter cannot read, answers `ENOSYS`, which makes
 * the C libraries fall back to `clone` (Docker's default profile does the same). Returns the
 * profile's JSON text.
 *
 * @throws Error when `profileText` is not a profile (no `syscalls` list).
 */
export function containerSeccompProfile(profileText: string): string {
  const profile = JSON.parse(profileText) as { syscalls?: ProfileRule[] };
  if (!Array.isArray(profile.syscalls)) throw new Error('A seccomp profile must have a "syscalls" list');
  const restricted = new Set(['clone', 'clone3', 'unshare']);
  const kept = profile.syscalls
    .map((rule) => ({ ...rule, names: (rule.names ?? []).filter((name) => !restricted.has(name)) }))
    .filter((rule) => rule.names.length > 0);
  // the flags are the first argument of both, except clone's on s390 and s390x (the second)
  const s390 = ['s390', 's390x'];
  const flags = (index: number, valueTwo: number) => [{ index, value: CLONE_NEWUSER, valueTwo, op: 'SCMP_CMP_MASKED_EQ' }];
  const rules = (names: string[], index: number, arches: Pick<ProfileRule, 'includes' | 'excludes'>): ProfileRule[] => [
    { names, action: 'SCMP_ACT_ALLOW', args: flags(index, 0), ...arches },
    { names, action: 'SCMP_ACT_ERRNO', errnoRet: 1, args: flags(index, CLONE_NEWUSER), ...arches },
  ];
  const added: ProfileRule[] = [
    ...rules(['unshare'], 0, {}),
    ...rules(['clone'], 0, { excludes: { arches: s390 } }),
    ...rules(['clone'], 1, { includes: { arches: s390 } }),
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 },
  ];
  return JSON.stringify({ ...profile, syscalls: [...kept, ...added] }, null, 1);
}
