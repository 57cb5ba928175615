# Compiles a container engine's seccomp profile (the JSON format of containers-common's and
# Docker's default profiles) into a classic BPF program for bubblewrap's `--seccomp FD`, with
# libseccomp's own compiler (Debian's python3-seccomp). Usage: seccomp-bpf.py PROFILE > FILTER
#
# The profile is applied as runc applies it to a container without capabilities: rules whose
# `includes` name capabilities are left out (a job has none), rules whose `excludes` name
# capabilities are kept; `arches` and `minKernel` are matched against this machine; a rule whose
# arguments name one index twice becomes one rule per argument (runc's "old behaviour"),
# otherwise one rule with all of them; syscalls libseccomp does not know are skipped.
import errno
import json
import platform
import sys

import seccomp

GOARCH = {'x86_64': 'amd64', 'aarch64': 'arm64', 'armv7l': 'arm', 'i686': '386', 'ppc64le': 'ppc64le', 's390x': 's390x', 'riscv64': 'riscv64'}
OPS = {'SCMP_CMP_NE': seccomp.NE, 'SCMP_CMP_LT': seccomp.LT, 'SCMP_CMP_LE': seccomp.LE, 'SCMP_CMP_EQ': seccomp.EQ,
       'SCMP_CMP_GE': seccomp.GE, 'SCMP_CMP_GT': seccomp.GT, 'SCMP_CMP_MASKED_EQ': seccomp.MASKED_EQ}


def action(name, ret):
    if name == 'SCMP_ACT_ALLOW':
        return seccomp.ALLOW
    if name == 'SCMP_ACT_ERRNO':
        return seccomp.ERRNO(errno.EPERM if ret is None else ret)
    if name in ('SCMP_ACT_KILL', 'SCMP_ACT_KILL_THREAD'):
        return seccomp.KILL
    if name == 'SCMP_ACT_KILL_PROCESS':
        return seccomp.KILL_PROCESS
    if name == 'SCMP_ACT_TRAP':
        return seccomp.TRAP
    if name == 'SCMP_ACT_LOG':
        return seccomp.LOG
    raise ValueError('unsupported seccomp action ' + name)


def kernel_at_least(version):
    have = [int(p) for p in platform.release().split('-')[0].split('.')[:2]]
    return have >= [int(p) for p in version.split('.')[:2]]


def applies(rule, arch):
    includes, excludes = rule.get('includes') or {}, rule.get('excludes') or {}
    if includes.get('caps'):
        return False
    if includes.get('arches') and arch not in includes['arches']:
        return False
    if includes.get('minKernel') and not kernel_at_least(includes['minKernel']):
        return False
    return not (excludes.get('arches') and arch in excludes['arches'])


def native_arch():
    token = seccomp.system_arch() & 0xffffffff
    return next(name for name in dir(seccomp.Arch)
                if not name.startswith('_') and name != 'NATIVE' and getattr(seccomp.Arch, name) & 0xffffffff == token)


def main(path):
    with open(path) as f:
        profile = json.load(f)
    arch = GOARCH.get(platform.machine(), platform.machine())
    bpf = seccomp.SyscallFilter(defaction=action(profile['defaultAction'], profile.get('defaultErrnoRet')))
    native = 'SCMP_ARCH_' + native_arch()
    for entry in profile.get('archMap') or []:
        if entry['architecture'] == native:
            for sub in entry.get('subArchitectures') or []:
                bpf.add_arch(getattr(seccomp.Arch, sub[len('SCMP_ARCH_'):]))
    for rule in profile['syscalls']:
        if not applies(rule, arch):
            continue
        act = action(rule['action'], rule.get('errnoRet'))
        args = rule.get('args') or []
        conditions = [seccomp.Arg(a['index'], OPS[a['op']], a['value'], a.get('valueTwo', 0)) for a in args]
        indexes = [a['index'] for a in args]
        groups = [[c] for c in conditions] if len(set(indexes)) < len(indexes) else [conditions]
        for name in rule['names']:
            for group in groups:
                try:
                    bpf.add_rule(act, name, *group)
                except (RuntimeError, ValueError, OSError):
                    pass  # a syscall this libseccomp (or architecture) does not know
    bpf.export_bpf(sys.stdout)


if __name__ == '__main__':
    main(sys.argv[1])
