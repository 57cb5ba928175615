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
