# Runs a command as root of a new user namespace whose ids 0..SIZE-1 are the host's BASE..BASE+SIZE-1
# (a job's uid range), in a given network namespace (or a new one), with new mount and PID
# namespaces (everything it leaves running ends with it), resource limits and a seccomp filter
# (python3-seccomp) that refuses new user namespaces, as the job's containers' profile does
# (src/ci/seccomp.ts): what a job's image build runs in (src/ci/image-build.ts). Started by root: only root may write a mapping
# onto ids it does not own without newuidmap. Usage:
#   userns-exec.py BASE SIZE NETNS|- MEMORY_MB PROCESSES CPU_SECONDS COMMAND [ARG...]
# Exit status: the command's, or 125 when the namespaces cannot be made.
import ctypes
import errno
import os
import resource
import sys

import seccomp

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

libc = ctypes.CDLL(None, use_errno=True)


def fail(what):
    sys.stderr.write('Image build namespaces: %s: %s\n' % (what, os.strerror(ctypes.get_errno())))
    os._exit(125)


def no_user_namespaces():
    # clone3 takes its flags in memory, out of a filter's reach: it answers ENOSYS and the C
    # library falls back to clone, whose flags the filter sees
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for call in ('clone', 'unshare'):
        f.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), 'clone3')
    f.load()


def child(base_ready, mapped, netns, limits, command):
    if netns != '-':
        fd = os.open(netns, os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            fail('joining the network namespace')
        os.close(fd)
    if libc.unshare(CLONE_NEWUSER | (CLONE_NEWNET if netns == '-' else 0)) != 0:
        fail('unshare')
    os.write(base_ready, b'x')
    if os.read(mapped, 1) != b'x':
        os._exit(125)
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    if libc.unshare(CLONE_NEWNS | CLONE_NEWPID) != 0:
        fail('unshare mount and PID')
    if libc.mount(b'none', b'/', None, MS_REC | MS_PRIVATE, None) != 0:
        fail('making mounts private')
    memory_mb, processes, cpu_seconds = limits
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_NPROC, (processes,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    no_user_namespaces()
    # the command is PID 1 of the new PID namespace: when it ends, everything it left ends too
    pid = os.fork()
    if pid == 0:
        os.execvp(command[0], command)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def main():
    base, size, netns = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    limits = tuple(int(v) for v in sys.argv[4:7])
    command = sys.argv[7:]
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(mapped_w)
        child(ready_w, mapped_r, netns, limits, command)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) == b'x':
        for name in ('uid_map', 'gid_map'):
            with open('/proc/%d/%s' % (pid, name), 'w') as f:
                f.write('0 %d %d\n' % (base, size))
        os.write(mapped_w, b'x')
    os.close(mapped_w)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)


main()
