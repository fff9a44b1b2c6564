// The seccomp filter bubblewrap installs for sandboxed programs (`--seccomp FD`): no file they make
// or change can get setuid or setgid bits, not even for a moment, and they cannot make user
// namespaces. A classic BPF program, built here for this machine's architecture.

/** Numbers of the system calls the filter looks at, per architecture. */
interface Syscalls {
  readonly audit: number;
  /** Calls whose mode argument (by index) may not carry setuid or setgid bits. */
  readonly modes: readonly (readonly [nr: number, arg: number])[];
  /** Calls whose flags argument (index 0) may not ask for a new user namespace. */
  readonly cloneFlags: readonly number[];
  /** Calls that answer ENOSYS: their arguments cannot be inspected (openat2's mode and clone3's flags sit in structs, io_uring does calls of its own). */
  readonly unavailable: readonly number[];
  /** Numbers at or above this are another ABI of the same architecture (x32). */
  readonly foreignAbove?: number;
}

const X86_64: Syscalls = {
  audit: 0xc000003e,
  modes: [
    [90, 1], // chmod
    [91, 1], // fchmod
    [268, 2], // fchmodat
    [452, 2], // fchmodat2
    [2, 2], // open
    [85, 1], // creat
    [257, 3], // openat
    [133, 1], // mknod
    [259, 2], // mknodat
    [83, 1], // mkdir
    [258, 2], // mkdirat
  ],
  cloneFlags: [56, 272], // clone, unshare
  unavailable: [437, 435, 425, 426, 427], // openat2, clone3, io_uring_setup, _enter, _register
  foreignAbove: 0x40000000,
};

const AARCH64: Syscalls = {
  audit: 0xc00000b7,
  modes: [
    [52, 1], // fchmod
    [53, 2], // fchmodat
    [452, 2], // fchmodat2
    [56, 3], // openat
    [33, 2], // mknodat
    [34, 2], // mkdirat
  ],
  cloneFlags: [220, 97], // clone, unshare
  unavailable: [437, 435, 425, 426, 427],
};

const SETUID_SETGID = 0o6000;
const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;

// Classic BPF opcodes and seccomp's answers.
const LD_ABS_W = 0x20;
const AND_K = 0x54;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const ALLOW = 0x7fff0000;
const KILL_PROCESS = 0x80000000;
const errno = (code: number) => 0x00050000 | code;
// Offsets in struct seccomp_data: nr, arch, then the six arguments (the low half of each is
// first on these little-endian machines).
const NR = 0;
const ARCH = 4;
const argLow = (index: number) => 16 + 8 * index;

type Instruction = { code: number; k: number; jt?: string; jf?: string } | { label: string };

/** Lays out the instructions: jumps name labels, which become forward offsets. */
function assemble(program: readonly Instruction[]): Buffer {
  const code = program.filter((i): i is Exclude<Instruction, { label: string }> => !('label' in i));
  const at = new Map<string, number>();
  let n = 0;
  for (const instruction of program) {
    if ('label' in instruction) at.set(instruction.label, n);
    else n++;
  }
  const bytes = Buffer.alloc(code.length * 8);
  code.forEach((instruction, index) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const jump = (at.get(label) ?? Number.NaN) - index - 1;
      if (!(jump >= 0 && jump < 256)) throw new Error(`seccomp: cannot jump to ${label}`);
      return jump;
    };
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(offset(instruction.jt), index * 8 + 2);
    bytes.writeUInt8(offset(instruction.jf), index * 8 + 3);
    bytes.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return bytes;
}

function program(calls: Syscalls): Buffer {
  const checks: Instruction[] = [];
  const dispatch: Instruction[] = [];
  const refuseWhen = (nr: number, arg: number, bits: number) => {
    const label = `check ${nr}`;
    dispatch.push({ code: JEQ_K, k: nr, jt: label });
    checks.push(
      { label },
      { code: LD_ABS_W, k: argLow(arg) },
      { code: AND_K, k: bits },
      { code: JEQ_K, k: 0, jt: 'allow', jf: 'eperm' },
    );
  };
  for (const [nr, arg] of calls.modes) refuseWhen(nr, arg, SETUID_SETGID);
  for (const nr of calls.cloneFlags) refuseWhen(nr, 0, CLONE_NEWUSER);
  for (const nr of calls.unavailable) dispatch.push({ code: JEQ_K, k: nr, jt: 'enosys' });
  return assemble([
    { code: LD_ABS_W, k: ARCH },
    // A program of another architecture (i386 on x86_64, arm on aarch64) would have other numbers.
    { code: JEQ_K, k: calls.audit, jf: 'kill' },
    { code: LD_ABS_W, k: NR },
    ...(calls.foreignAbove === undefined ? [] : [{ code: JGE_K, k: calls.foreignAbove, jt: 'kill' }]),
    ...dispatch,
    { code: RET_K, k: ALLOW },
    ...checks,
    { label: 'allow' },
    { code: RET_K, k: ALLOW },
    { label: 'eperm' },
    { code: RET_K, k: errno(EPERM) },
    { label: 'enosys' },
    { code: RET_K, k: errno(ENOSYS) },
    { label: 'kill' },
    { code: RET_K, k: KILL_PROCESS },
  ]);
}

const ARCHITECTURES: Partial<Record<NodeJS.Architecture, Syscalls>> = { x64: X86_64, arm64: AARCH64 };

/** The compiled filter for this machine, or undefined on an architecture it does not know. */
export function sandboxSeccomp(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const calls = ARCHITECTURES[arch];
  return calls ? program(calls) : undefined;
}
