#!/usr/bin/env python3
"""MPICH-ABI check of mpi.h's constants: every object-like MPI_* macro of weft's mpi.h is printed
by one C program built twice, against weft's mpi.h and with MPICH's compiler wrapper against
MPICH's mpi.h; integer values and the sizes of MPI_Count, MPI_Offset, MPI_Aint, MPI_Status and
MPI_Fint must agree (MPICH's MPI_T enumerators too). A macro (or enumerator) MPICH's header lacks, or defines to MPI_DATATYPE_NULL where weft
has a real type (a Fortran type MPICH's build left out), is listed, not failed.

usage: abi_constants.py WEFT_MPI_H CC MPICC_MPICH WORKDIR
"""
import os
import re
import subprocess
import sys

DATATYPE_NULL = 0x0c000000
# MPICH declares these MPI_T constants as enumerators, not macros: shown without #ifdef.
ENUM_PREFIXES = ('MPI_T_VERBOSITY_', 'MPI_T_BIND_', 'MPI_T_SCOPE_', 'MPI_T_PVAR_CLASS_')


def macro_names(header):
    names = set()
    with open(header) as f:
        for line in f:
            m = re.match(r'\s*#\s*define\s+(MPI_[A-Za-z0-9_]+)\s+\S', line)
            if m:
                names.add(m.group(1))
    return sorted(names)


def program(names):
    lines = ['#include <mpi.h>', '#include <stdio.h>',
             '#define SHOW(n) printf("%s %lld\\n", #n, _Generic((n), int: (long long)(n), '
             'unsigned: (long long)(n), long: (long long)(n), unsigned long: (long long)(n), '
             'long long: (long long)(n), default: 0x7fffffffffffLL))',
             'int main(void) {']
    for n in names:
        if n.startswith(ENUM_PREFIXES):
            lines.append(f'  SHOW({n});')
        else:
            lines.append(f'#ifdef {n}\n  SHOW({n});\n#endif')
    for t in ('MPI_Count', 'MPI_Offset', 'MPI_Aint', 'MPI_Status', 'MPI_Fint'):
        lines.append(f'  printf("sizeof({t}) %zu\\n", sizeof({t}));')
    lines.append('  return 0;\n}')
    return '\n'.join(lines) + '\n'


def values(cmd, exe):
    subprocess.run(cmd + ['-o', exe], check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict(line.split(' ', 1) for line in out.splitlines())


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    weft_h, cc, mpicc, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, 'abi_constants.c')
    names = macro_names(weft_h)
    with open(src, 'w') as f:
        f.write(program(names))
    weft = values([cc, '-std=c11', '-w', '-I', os.path.dirname(weft_h), src], os.path.join(work, 'constants_weft'))
    # An enumerator MPICH's version lacks (e.g. MPI_T_BIND_MPI_SESSION before MPICH 4.1) cannot
    # be tested with #ifdef: the compiler names it, and the program is built again without it.
    mpich_names = list(names)
    for _ in range(5):
        with open(src, 'w') as f:
            f.write(program(mpich_names))
        build = subprocess.run([mpicc, '-std=c11', '-w', src, '-o', os.path.join(work, 'constants_mpich')],
                               capture_output=True, text=True)
        missing = set(re.findall(r"['\u2018](MPI_T_[A-Z_]+)['\u2019] undeclared", build.stderr))
        if build.returncode == 0 or not missing:
            break
        mpich_names = [n for n in mpich_names if n not in missing]
    mpich = values([mpicc, '-std=c11', '-w', src], os.path.join(work, 'constants_mpich'))
    bad, absent, left_out = [], [], []
    for key, v in weft.items():
        if key not in mpich:
            absent.append(key)
        elif mpich[key] != v:
            if int(mpich[key]) == DATATYPE_NULL:
                left_out.append(key)
            else:
                bad.append(f'{key}: weft {v}, MPICH {mpich[key]}')
    print(f'abi_constants: {len(weft)} values compared; {len(absent)} not in MPICH\'s mpi.h; '
          f'{len(left_out)} MPI_DATATYPE_NULL in MPICH\'s build')
    for key in absent + left_out:
        print(f'  note: {key}')
    for line in bad:
        print(f'  MISMATCH {line}')
    if bad or len(weft) < 100:
        sys.exit(1)
    print('abi_constants: OK')


if __name__ == '__main__':
    main()
