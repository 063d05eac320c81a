#!/usr/bin/env bash
# sftp-server.sh: start a real SFTP server (Debian's OpenSSH sshd with
# internal-sftp, key authentication only) on loopback for tests, without
# systemd: `sshd -D -f CONFIG` in the background.
#
# Usage:
#   eval "$(scripts/sftp-server.sh [DATA_DIR])"  install openssh-server if missing,
#                                             start (or reuse the one already
#                                             running), print export lines
#   scripts/sftp-server.sh --stop                stop the sshd this script started
#                                             (by its recorded pid)
# Everything but the export lines goes to stderr. Must run as root.
#
# Settings (environment, all optional):
#   SFTP_TEST_PORT   listen port on 127.0.0.1              (default 2222)
#   SFTP_TEST_USER   unprivileged login user, created if missing (default sftptest)
#   SFTP_TEST_STATE  state dir: keys, config, pid, log    (default /tmp/sftp-test-$PORT)
#
# The user's sessions are forced into internal-sftp, starting in DATA_DIR
# (default: a new temp dir), which is chowned to the user. Paths given to
# the server may be absolute (SFTP_TEST_PATH) or relative to it.
set -euo pipefail

PORT="${SFTP_TEST_PORT:-2222}"
TUSER="${SFTP_TEST_USER:-sftptest}"
STATE="${SFTP_TEST_STATE:-/tmp/sftp-test-$PORT}"
SSHD=/usr/sbin/sshd

log() { echo "sftp-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/server.sh"

# The pid recorded in $STATE/pid, if that process is still our sshd.
running_pid() { recorded_pid "sshd -D -f $STATE/sshd_config"; }

if [ "${1:-}" = "--stop" ]; then
	if pid="$(running_pid)"; then
		# sshd's per-connection children outlive the listener; end them too.
		children="$(ps -o pid= --ppid "$pid" || true)"
		for c in $children; do kill "$c" 2>/dev/null || true; done
		stop_pid "$pid" sshd
	else
		log "no sshd recorded in $STATE is running"
	fi
	if [ -f "$STATE/data_is_temp" ] && [ -f "$STATE/data_dir" ]; then
		rm -rf -- "$(cat "$STATE/data_dir")"
	fi
	rm -f "$STATE/pid" "$STATE/data_dir" "$STATE/data_is_temp"
	exit 0
fi

# --- install ------------------------------------------------------------------
if [ ! -x "$SSHD" ] || [ ! -x /usr/lib/openssh/sftp-server ]; then
	log "installing openssh-server with apt-get (about 20 s)"
	t0=$(date +%s)
	# Keep the package's init script from starting a system sshd on port 22.
	made_policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		made_policy=1
	fi
	apt_install() {
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			openssh-server openssh-client >&2
	}
	if ! apt_install; then
		log "apt-get install failed; running apt-get update and retrying"
		apt-get update -q >&2 && apt_install || { [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d; die "cannot install openssh-server"; }
	fi
	[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
	log "installed in $(( $(date +%s) - t0 ))s"
fi

# --- user, keys, data dir -------------------------------------------------------
if ! id -u "$TUSER" >/dev/null 2>&1; then
	useradd --create-home --shell /usr/sbin/nologin "$TUSER"
	log "created user $TUSER"
fi
# '!' (locked) would make sshd refuse even key logins with UsePAM no; '*' only
# rules out passwords.
[ "$(getent shadow "$TUSER" | cut -d: -f2)" = "*" ] || usermod -p '*' "$TUSER"

mkdir -p "$STATE"
# Two callers starting at once (parallel test runs) must not both start a
# server: hold a lock until the server is up or reused.
exec 9>"$STATE/start.lock"
flock 9
chmod 755 "$STATE" # sshd reads authorized_keys as the user
[ -f "$STATE/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C sftp-test-host -f "$STATE/ssh_host_ed25519_key"
[ -f "$STATE/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C sftp-test-client -f "$STATE/id_ed25519"
cp "$STATE/id_ed25519.pub" "$STATE/authorized_keys"
chmod 644 "$STATE/authorized_keys"
HOSTPUB="$(cut -d' ' -f1,2 "$STATE/ssh_host_ed25519_key.pub")"
echo "[127.0.0.1]:$PORT $HOSTPUB" >"$STATE/known_hosts"

WANT_DATA=""
if [ -n "${1:-}" ]; then
	WANT_DATA="$(realpath -m -- "$1")"
fi

if pid="$(running_pid)"; then
	DATA="$(cat "$STATE/data_dir")"
	if [ -n "$WANT_DATA" ] && [ "$WANT_DATA" != "$DATA" ]; then
		die "sshd pid $pid already serves $DATA on port $PORT; run '$0 --stop' first"
	fi
	log "reusing running sshd pid $pid (data $DATA)"
else
	rm -f "$STATE/pid" "$STATE/data_is_temp"
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
		die "port $PORT on 127.0.0.1 is taken by another process; set SFTP_TEST_PORT"
	fi
	if [ -n "$WANT_DATA" ]; then
		DATA="$WANT_DATA"
		mkdir -p -- "$DATA"
	else
		DATA="$(mktemp -d /tmp/sftp-test-data.XXXXXX)"
		touch "$STATE/data_is_temp"
	fi
	case "$DATA" in *[[:space:]]*) die "data dir must not contain spaces: $DATA" ;; esac
	chown -R "$TUSER:" "$DATA"
	runuser -u "$TUSER" -- test -w "$DATA" -a -x "$DATA" \
		|| die "user $TUSER cannot write $DATA (is a parent directory closed to it?)"
	echo "$DATA" >"$STATE/data_dir"

	cat >"$STATE/sshd_config" <<EOF
# Test-only sshd: loopback, key auth for $TUSER, sftp only.
Port $PORT
ListenAddress 127.0.0.1
HostKey $STATE/ssh_host_ed25519_key
PidFile $STATE/sshd.pid
AuthorizedKeysFile $STATE/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $TUSER
UsePAM no
UseDNS no
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTTY no
PrintMotd no
MaxStartups 64:30:128
MaxSessions 64
LogLevel INFO
Subsystem sftp internal-sftp
ForceCommand internal-sftp -d $DATA
EOF
	mkdir -p /run/sshd && chmod 755 /run/sshd # privilege separation dir
	"$SSHD" -t -f "$STATE/sshd_config" || die "sshd rejected $STATE/sshd_config"

	: >"$STATE/sshd.log"
	# 9>&-: the server must not inherit (and so hold forever) the start lock.
	"$SSHD" -D -f "$STATE/sshd_config" -E "$STATE/sshd.log" </dev/null >>"$STATE/sshd.log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$STATE/pid"

	t0=$(date +%s%N)
	ready=""
	for _ in $(seq 1 100); do
		[ -e "/proc/$pid" ] || break
		if ssh-keyscan -T 2 -t ed25519 -p "$PORT" 127.0.0.1 2>/dev/null | grep -qF "$HOSTPUB"; then
			ready=1
			break
		fi
		sleep 0.1
	done
	if [ -z "$ready" ]; then
		[ -e "/proc/$pid" ] && kill "$pid"
		cat "$STATE/sshd.log" >&2
		die "sshd did not start"
	fi
	log "sshd pid $pid answered after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
fi

# --- end-to-end check with the OpenSSH sftp client --------------------------------
if ! out="$(printf 'pwd\n' | sftp -q -b - -i "$STATE/id_ed25519" -P "$PORT" \
	-o BatchMode=yes -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes \
	-o UserKnownHostsFile="$STATE/known_hosts" -o GlobalKnownHostsFile=/dev/null \
	"$TUSER@127.0.0.1" 2>&1)"; then
	echo "$out" >&2
	tail -20 "$STATE/sshd.log" >&2
	die "sftp login as $TUSER failed"
fi
echo "$out" | grep -qF "$DATA" || log "warning: unexpected sftp pwd output: $out"
log "ready: sftp://$TUSER@127.0.0.1:$PORT$DATA pid $pid log $STATE/sshd.log"

cat <<EOF
export SFTP_TEST_HOST=127.0.0.1
export SFTP_TEST_PORT=$PORT
export SFTP_TEST_ADDR=127.0.0.1:$PORT
export SFTP_TEST_USER=$TUSER
export SFTP_TEST_KEY=$STATE/id_ed25519
export SFTP_TEST_KNOWN_HOSTS=$STATE/known_hosts
export SFTP_TEST_HOST_PUBKEY='$HOSTPUB'
export SFTP_TEST_PATH=$DATA
export SFTP_TEST_PID=$pid
EOF
