# shellcheck shell=bash
# swift_build: the one way scripts/setup and scripts/test run `swift build`.  Source after
# common.bash; it does nothing on its own.
#
# Its output goes to a log file, never to a terminal: SwiftPM passes -color-diagnostics to
# every compiler job when its stdout is a terminal and not otherwise, so a build from a
# terminal and one from a script (or CI) would have different command lines and each would
# recompile everything the other built.  With the output always in a file, every build of a
# scratch path has the same flags.  The user sees one progress line instead (updated in place
# on a terminal, a line every 30 s otherwise), no compiler warnings, and on failure the errors
# with the log's path.

# The build log of a scratch path: .build/meshchat-build.log (or $MESHCHAT_SCRATCH_PATH/…).
build_log() { printf '%s/meshchat-build.log\n' "${MESHCHAT_SCRATCH_PATH:-$MESHCHAT_ROOT/.build}"; }

# swift_build ARGS...: `swift build ARGS...` from $MESHCHAT_ROOT with its output in build_log.
# Prints how many files it compiled; returns swift build's status.
swift_build() {
    local log pid status=0 step last_said=0 now what
    log=$(build_log)
    what="swift build${*:+ $*}"
    mkdir -p "$(dirname "$log")"
    ( cd "$MESHCHAT_ROOT" && exec swift build "$@" </dev/null >"$log" 2>&1 ) &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        step=$(tail -n 40 "$log" 2>/dev/null | grep -o '^\[[0-9]*/[0-9]*\]' | tail -n 1 || true)
        if [ -t 2 ]; then
            printf '\r\033[K%s: %s %s' "$LOG_TAG" "$what" "${step:-(planning)}" >&2
        else
            now=$(date +%s)
            if [ -n "$step" ] && [ $((now - last_said)) -ge 30 ]; then say "$what $step"; last_said=$now; fi
        fi
        sleep 1
    done
    [ -t 2 ] && printf '\r\033[K' >&2
    wait "$pid" || status=$?
    if [ "$status" != 0 ]; then
        grep -E '(error|fatal error): ' "$log" | sort -u | head -n 40 >&2 || true
        say "$what failed (exit $status); its whole output is in $log"
        return "$status"
    fi
    say "$what: $(grep '\] Compiling ' "$log" | grep -vc '\] Compiling plugin ' || true) files compiled (output in $log)"
}
