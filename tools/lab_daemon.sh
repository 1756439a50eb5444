#!/usr/bin/env bash
# Run one long-lived lab process in the background, tracked by a pid file, and stop it again.
#
#   tools/lab_daemon.sh start PIDFILE LOGFILE -- COMMAND [ARGS...]   exit 0, prints "started" or "running"
#   tools/lab_daemon.sh stop PIDFILE                                exit 0, prints "stopped" or "absent"
#   tools/lab_daemon.sh status PIDFILE                              exit 0 when running, 3 when not
#
# kwokctl manages etcd and the kube-* processes itself; this is for what runs beside them (the MPI Operator).
# A pid file is trusted only while /proc/PID/cmdline still starts with the command recorded in it, so a
# recycled pid is never signalled.
set -euo pipefail

usage() {
    echo "usage: $0 start PIDFILE LOGFILE -- COMMAND [ARGS...] | stop PIDFILE | status PIDFILE" >&2
    exit 2
}

# Print the pid from PIDFILE when that process is alive and still runs the recorded binary.
live_pid() {
    local pidfile="$1" pid exe cmd0
    [[ -f "$pidfile" ]] || return 1
    read -r pid exe < "$pidfile" || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    cmd0="$(tr '\0' '\n' < "/proc/$pid/cmdline" | head -n 1)"
    [[ "$cmd0" == "$exe" ]] || return 1
    echo "$pid"
}

[[ $# -ge 2 ]] || usage
action="$1"
pidfile="$2"

case "$action" in
    start)
        [[ $# -ge 5 && "$4" == "--" ]] || usage
        logfile="$3"
        shift 4
        if live_pid "$pidfile" > /dev/null; then
            echo "running"
            exit 0
        fi
        mkdir -p "$(dirname "$pidfile")" "$(dirname "$logfile")"
        # A fresh log per start (the previous one kept as .1), so readiness is judged on this run's lines.
        if [[ -f "$logfile" ]]; then
            mv -f "$logfile" "$logfile.1"
        fi
        # setsid: own session, so the caller's terminal or Ansible's process group does not take it down.
        setsid "$@" > "$logfile" 2>&1 < /dev/null &
        pid=$!
        echo "$pid $1" > "$pidfile"
        # The child runs the command only once setsid has exec'd it, which takes longer on a busy machine:
        # wait (up to 10 s) until it does or is gone, then a moment more to catch a command that exits at once.
        for _ in $(seq 1 200); do
            live_pid "$pidfile" > /dev/null && break
            [[ -d "/proc/$pid" ]] || break
            sleep 0.05
        done
        sleep 0.2
        if ! live_pid "$pidfile" > /dev/null; then
            echo "$1 exited at once; last lines of $logfile:" >&2
            tail -n 20 "$logfile" >&2
            rm -f "$pidfile"
            exit 1
        fi
        echo "started"
        ;;
    stop)
        [[ $# -eq 2 ]] || usage
        if ! pid="$(live_pid "$pidfile")"; then
            rm -f "$pidfile"
            echo "absent"
            exit 0
        fi
        kill -TERM "$pid" 2> /dev/null || true
        for _ in $(seq 1 50); do
            [[ -d "/proc/$pid" ]] || break
            sleep 0.1
        done
        if [[ -d "/proc/$pid" ]]; then
            kill -KILL "$pid" 2> /dev/null || true
            sleep 0.2
        fi
        rm -f "$pidfile"
        echo "stopped"
        ;;
    status)
        [[ $# -eq 2 ]] || usage
        if live_pid "$pidfile"; then
            exit 0
        fi
        exit 3
        ;;
    *)
        usage
        ;;
esac
