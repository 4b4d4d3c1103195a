# shellcheck shell=bash
# Helpers shared by scripts/setup, scripts/daemons and scripts/netns-hosts.
# Source this file; it does nothing on its own.  The caller sets `set -euo pipefail`.

# shellcheck disable=SC2034  # these are for the scripts that source this file
MESHCHAT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Where scripts/setup keeps the avahi config, logs and the pid files of the daemons it started.
# Machine-wide (the daemons are), not per user.
MESHCHAT_STATE_DIR=${MESHCHAT_STATE_DIR:-/tmp/meshchat-avahi}
# shellcheck disable=SC2034
DBUS_DEFAULT_SYSTEM_BUS=unix:path=/run/dbus/system_bus_socket

# The tag in front of every progress line: "setup: …", "daemons: …".
LOG_TAG=${LOG_TAG:-$(basename "$0")}

say() { printf '%s: %s\n' "$LOG_TAG" "$*" >&2; }
die() { say "error: $*"; exit 1; }

now_ms() { date +%s%3N; }

# as_root CMD...: run CMD as root: directly when we are root, else through sudo
# (non-interactive when there is no terminal to ask for a password on).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        if [ -t 0 ] || [ -t 2 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        die "this step needs root: run as root, or install sudo (it would run: $*)"
    fi
}

# alive PID: the process exists and is not a zombie.  Daemons reparented to PID 1 stay
# zombies for a while where PID 1 reaps lazily; a zombie counts as gone.
alive() {
    local st
    st=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]
}

# proc_start PID: the process's start time in clock ticks (field 22 of /proc/PID/stat),
# which tells a process apart from a later one that reuses its pid.
proc_start() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }   # drop "pid (comm) "; what is left starts at field 3
    # shellcheck disable=SC2086
    set -- $stat
    printf '%s\n' "${20}"
}

# write_pidfile FILE PID: record PID with its start time.
write_pidfile() {
    local start
    start=$(proc_start "$2") || return 1
    printf '%s %s\n' "$2" "$start" >"$1.tmp" && mv -f "$1.tmp" "$1"
}

# owned_pid FILE COMM: print the pid recorded in FILE (by write_pidfile) if that very
# process still runs and is COMM; fail otherwise.
owned_pid() {
    local pid start comm
    [ -r "$1" ] || return 1
    read -r pid start <"$1" || return 1
    case $pid in '' | *[!0-9]*) return 1 ;; esac
    alive "$pid" || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    [ "$comm" = "$2" ] || return 1
    [ -z "$start" ] || [ "$(proc_start "$pid")" = "$start" ] || return 1
    printf '%s\n' "$pid"
}

# stop_pid PID: SIGTERM, wait up to 2.5 s, then SIGKILL.  Returns once PID is gone.
stop_pid() {
    local pid=$1 _
    as_root kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$pid" || return 0; sleep 0.05; done
    as_root kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do alive "$pid" || return 0; sleep 0.05; done
}

# D-Bus / Avahi queries.  They use the system bus of the environment
# (DBUS_SYSTEM_BUS_ADDRESS when set, else /run/dbus/system_bus_socket).
dbus_answers() {
    dbus-send --system --print-reply --reply-timeout=1000 --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}

# avahi_state: Avahi's server state (2 = running), or nothing when it does not answer.
avahi_state() {
    { dbus-send --system --print-reply --reply-timeout=1000 --dest=org.freedesktop.Avahi \
        / org.freedesktop.Avahi.Server.GetState 2>/dev/null || true; } |
        sed -n 's/^ *int32 \(-*[0-9]*\)$/\1/p'
}

avahi_answers() { [ "$(avahi_state)" = 2 ]; }

# avahi_host_name: the fully qualified host name Avahi publishes (e.g. meshchat-vm.local).
avahi_host_name() {
    { dbus-send --system --print-reply --reply-timeout=1000 --dest=org.freedesktop.Avahi \
        / org.freedesktop.Avahi.Server.GetHostNameFqdn 2>/dev/null || true; } |
        sed -n 's/^ *string "\(.*\)"$/\1/p'
}

# sanitize_label TEXT: lower-case DNS label made of [a-z0-9-].
sanitize_label() {
    printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9-' '-' | sed 's/^-*//; s/-*$//'
}
