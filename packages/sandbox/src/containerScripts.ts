// The shell scripts run inside a container (any image with /bin/sh, grep, GNU find, GNU
// coreutils' dd and tar: Debian's, python:*-slim). Each command runs with a marker variable naming its call; every process it
// starts inherits the marker (a fork tree, a `setsid`/`nohup` daemon), so "everything the call
// started" is "every process carrying its marker". Code that scrubs its own environment escapes
// the sweep until the sandbox is closed, which removes the container with all it runs.

/** The variable every process of one call carries. */
export const MARKER = 'OPENMANUS_EXEC';
/**
 * The variable the call's wrapper shell is started with (by the exec itself, so that it is marked
 * from its first instruction: a call stopped before it started the command still ends).
 */
export const WRAPPER_MARKER = 'OPENMANUS_CALL';

/**
 * Signals the processes carrying marker `$1` with signal `$2`: all of them, the call's wrapper
 * shell too (`$3` = all), or only those whose parent carries it too (`$3` = foreground: a Ctrl-C
 * that spares the shell itself); never the shell running the sweep.
 * KILL is repeated until none is left, so a fork loop cannot outrun it. One grep per round finds
 * them (the sweep's own processes do not carry the marker); the rest is shell builtins, so a
 * full pids limit stops it at most for that one process.
 */
const SWEEP = `sweep() {
  t=$1 sig=$2 scope=$3 n=0
  while [ $n -lt 200 ]; do
    pids=
    if [ "$scope" = all ]; then marked="(${MARKER}|${WRAPPER_MARKER})=$t"; else marked="${MARKER}=$t"; fi
    for f in $(grep -lzxE "$marked" /proc/[0-9]*/environ 2>/dev/null); do
      f=\${f#/proc/}
      pids="$pids \${f%/environ}"
    done
    found=
    for pid in $pids; do
      [ "$pid" = $$ ] && continue
      if [ "$scope" = foreground ]; then
        read -r s < "/proc/$pid/stat" 2>/dev/null || continue
        s=\${s##*) }
        set -- $s
        case " $pids " in *" $2 "*) ;; *) continue ;; esac
      fi
      kill -s "$sig" "$pid" 2>/dev/null && found=1
    done
    [ -n "$found" ] && [ "$sig" = KILL ] || return 0
    n=$((n + 1))
  done
}`;

/**
 * Runs the command (`$3`…) with marker `$1` in directory `$2`, then kills whatever it left
 * behind, and exits with its status: when the call returns, nothing it started is running. The
 * command (in a subshell it replaces) gets the call's stderr; this shell's own goes nowhere, so its
 * note on a command a signal ended ("Killed") is not taken for the command's output.
 */
export const RUN_SCRIPT = `${SWEEP}
unset ${WRAPPER_MARKER}
t=$1
cd -- "$2" || exit 126
shift 2
exec 3>&2 2>/dev/null
(export ${MARKER}=$t; exec "$@") 2>&3 3>&-
code=$?
sweep "$t" KILL all
exit $code`;

/** Signals the processes of one call: `$1` marker, `$2` signal, `$3` all | foreground. */
export const SIGNAL_SCRIPT = `${SWEEP}
sweep "$1" "$2" "$3"`;

/**
 * Enters the directory `$3` step by step, for the file operations (run as the sandbox's user,
 * each given the workspace as `$1`): `$2` says what to do with a missing directory (`make` it, or
 * fail). A symbolic
 * link on the way is followed only where it leads: once the path is in the workspace, every step
 * must land in it (checked after the step, from the directory actually entered, so a link
 * planted meanwhile cannot redirect it). Refusals are the words the provider maps to Node's codes.
 */
const ENTER = `fail() { echo "$1" >&2; exit 1; }
enter() {
  cd -P -- "$1" 2>/dev/null || fail "not found"
  real=$PWD workspace=$1 rest=\${3#/} path=
  cd /
  while [ -n "$rest" ]; do
    step=\${rest%%/*}
    case $rest in */*) rest=\${rest#*/} ;; *) rest= ;; esac
    path=$path/$step
    if [ "$2" = make ] && [ ! -e "$step" ] && [ ! -L "$step" ]; then mkdir -- "$step" 2>/dev/null || [ -d "$step" ] || fail "cannot make $path"; fi
    cd -P -- "$step" 2>/dev/null || { if [ -e "$step" ]; then fail "not a directory"; else fail "not found"; fi; }
    case $path/ in "$workspace"/*)
      case $PWD/ in "$real"/*) ;; *) fail "symbolic link out of the workspace" ;; esac ;;
    esac
  done
}
# A name that is a link is never followed.
plain() {
  if [ -L "$1" ]; then fail "symbolic link"
  elif [ -d "$1" ]; then fail "is a directory"
  elif [ -e "$1" ] && [ ! -f "$1" ]; then fail "not a regular file"
  fi
}`;

/** Prints the file \`$3\` of directory \`$2\` (at most \`$4\` bytes), never through a link. */
export const READ_SCRIPT = `${ENTER}
enter "$1" stay "$2"
[ -e "$3" ] || [ -L "$3" ] || fail "not found"
plain "$3"
exec dd if="$3" iflag=nofollow,nonblock,count_bytes count="$4" bs=65536 status=none`;

/** Writes stdin to the file \`$3\` of directory \`$2\` (made as needed), created or replaced, never through a link. */
export const WRITE_SCRIPT = `${ENTER}
enter "$1" make "$2"
plain "$3"
exec dd of="$3" oflag=nofollow,nonblock bs=65536 status=none`;

/** Lists the directory \`$2\` as \`type size name\` records separated by NUL (GNU find). */
export const LIST_SCRIPT = `${ENTER}
enter "$1" stay "$2"
exec find . -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0'`;

/** Removes the entry \`$3\` of directory \`$2\` (a link itself, not what it points to), a directory with its tree. */
export const REMOVE_SCRIPT = `${ENTER}
enter "$1" stay "$2"
[ -e "$3" ] || [ -L "$3" ] || fail "not found"
exec rm -rf -- "$3"`;

/** Writes the entry \`$3\` of directory \`$2\` (a link as a link) to stdout as a tar stream. */
export const PACK_SCRIPT = `${ENTER}
enter "$1" stay "$2"
[ -e "$3" ] || [ -L "$3" ] || fail "not found"
exec tar -c -f - -- "$3"`;

/** Unpacks the tar stream on stdin into the directory \`$2\` (made as needed). */
export const UNPACK_SCRIPT = `${ENTER}
enter "$1" make "$2"
exec tar -x -f - --no-same-owner`;
