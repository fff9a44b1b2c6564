// The shell scripts run inside a container (any image with /bin/sh, grep and find: Debian's,
// python:*-slim). Each command runs with a marker variable naming its call; every process it
// starts inherits the marker (a fork tree, a `setsid`/`nohup` daemon), so "everything the call
// started" is "every process carrying its marker". Code that scrubs its own environment escapes
// the sweep until the sandbox is closed, which removes the container with all it runs.

/** The variable every process of one call carries. */
export const MARKER = 'OPENMANUS_EXEC';

/**
 * Signals the processes carrying marker `$1` with signal `$2`: all of them (`$3` = all), or only
 * those whose parent carries it too (`$3` = foreground: a Ctrl-C that spares the shell itself).
 * KILL is repeated until none is left, so a fork loop cannot outrun it. One grep per round finds
 * them (the sweep's own processes do not carry the marker); the rest is shell builtins, so a
 * full pids limit stops it at most for that one process.
 */
const SWEEP = `sweep() {
  t=$1 sig=$2 scope=$3 n=0
  while [ $n -lt 200 ]; do
    pids=
    for f in $(grep -lzx "${MARKER}=$t" /proc/[0-9]*/environ 2>/dev/null); do
      f=\${f#/proc/}
      pids="$pids \${f%/environ}"
    done
    found=
    for pid in $pids; do
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

/** Lists a directory's entries as `type size name` records separated by NUL (GNU find). */
export const LIST_SCRIPT = `[ -d "$1" ] || { if [ -e "$1" ]; then echo "not a directory" >&2; else echo "not found" >&2; fi; exit 1; }
exec find "$1" -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0'`;

/** Removes a file or a directory tree. */
export const REMOVE_SCRIPT = `[ -e "$1" ] || [ -L "$1" ] || { echo "not found" >&2; exit 1; }
exec rm -rf -- "$1"`;

/** Creates a directory and its parents. */
export const MKDIR_SCRIPT = 'exec mkdir -p -- "$1"';
