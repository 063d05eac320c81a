# lib/server.sh: the pid bookkeeping the test-server scripts share
# (s3-server.sh, seaweedfs-server.sh, sftp-server.sh, kms-server.sh,
# toxiproxy-server.sh). Each records the pid of the server it started in
# $STATE/pid (one file per process when it starts several) and stops only
# that process, never one found by name. Sourced after the script sets STATE and
# defines log().

# recorded_pid PATTERN [ENV]: print the pid recorded in $STATE/pid if that
# process is alive, its command line matches the grep pattern PATTERN and,
# when ENV (NAME=VALUE) is given, its environment holds ENV; else fail.
recorded_pid() { recorded_pid_in "$STATE/pid" "$@"; }

# recorded_pid_in FILE PATTERN [ENV]: recorded_pid for a script that starts
# several processes and records each pid in its own FILE.
recorded_pid_in() {
	local pid file="$1"
	shift
	[ -f "$file" ] || return 1
	pid="$(cat "$file")"
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$1" || return 1
	if [ -n "${2:-}" ]; then
		grep -qz "^$2$" "/proc/$pid/environ" || return 1
	fi
	echo "$pid"
}

# stop_pid PID NAME: stop the server PID (SIGTERM, then SIGKILL if it is
# still there after 10 s) and log it as NAME.
stop_pid() {
	local pid="$1"
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	if [ -e "/proc/$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi
	log "stopped $2 pid $pid"
}
