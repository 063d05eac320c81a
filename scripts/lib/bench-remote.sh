# bench-remote.sh: issue #37's "remote" profile for scripts/bench.sh, which
# sources this file after defining measure, discard, log and die and the
# variables W, ROOT, CS, MIXED, SMALL, TOOLS and PEERS_DIR.
#
# Loopback hides the network: real buckets are 20-80 ms away. Here a private
# S3 server sits behind Toxiproxy, which adds 25 ms each way and limits each
# direction to 1 Gbit/s. Rows, for cloudstic, restic and kopia against the
# same proxied server: initial and no-change backup of the 1 GB set, its
# restore, and the restore of the small-file set (backed up first, not
# timed as a row of its own). Requests are what the S3 server logged.

# toxic PROXY NAME TYPE STREAM ATTRIBUTES_JSON: add a toxic to a proxy.
toxic() {
	curl -fsS -X POST "http://$TOXIPROXY_TEST_ADDR/proxies/$1/toxics" \
		-d "{\"name\":\"$2\",\"type\":\"$3\",\"stream\":\"$4\",\"attributes\":$5}" >/dev/null ||
		die "toxiproxy: cannot add toxic $2 to $1"
}

# remote_proxy S3_ADDR LISTEN_ADDR: a proxy from LISTEN_ADDR to the S3 server
# with the remote profile's latency and bandwidth in both directions.
remote_proxy() {
	curl -fsS -X DELETE "http://$TOXIPROXY_TEST_ADDR/proxies/bench-remote" >/dev/null 2>&1 || true # none yet
	curl -fsS -X POST "http://$TOXIPROXY_TEST_ADDR/proxies" \
		-d "{\"name\":\"bench-remote\",\"listen\":\"$2\",\"upstream\":\"$1\",\"enabled\":true}" >/dev/null ||
		die "toxiproxy: cannot create the proxy to $1"
	for stream in upstream downstream; do
		toxic bench-remote "latency-$stream" latency "$stream" '{"latency":25,"jitter":0}'
		# Toxiproxy's rate is in KB/s: 1 Gbit/s is 125,000 KB/s.
		toxic bench-remote "bandwidth-$stream" bandwidth "$stream" '{"rate":125000}'
	done
}

# bench_remote: start the server and the proxy, measure every tool, stop.
bench_remote() {
	local port="${BENCH_REMOTE_S3_PORT:-7272}" listen="127.0.0.1:${BENCH_REMOTE_PORT:-7273}" s3env txenv
	s3env="$(S3_TEST_PORT="$port" S3_TEST_STATE="$W/remote-s3state" VGW_ACCESS_LOG="$W/remote-access.log" \
		timeout 300 "$ROOT/scripts/s3-server.sh" "$W/remote-s3data")" || {
		log "could not start the S3 server: remote steps skipped"
		return 0
	}
	txenv="$(TOXIPROXY_TEST_PORT="${BENCH_TOXIPROXY_PORT:-8575}" "$ROOT/scripts/toxiproxy-server.sh")" || {
		S3_TEST_PORT="$port" S3_TEST_STATE="$W/remote-s3state" "$ROOT/scripts/s3-server.sh" --stop >/dev/null 2>&1
		log "could not start toxiproxy: remote steps skipped"
		return 0
	}
	(
		eval "$s3env"
		eval "$txenv"
		remote_proxy "${S3_TEST_ENDPOINT#http://}" "$listen"
		local ep="http://$listen" prefix="bench-remote-$$" dir
		dir="$S3_TEST_DATA_DIR/$S3_TEST_BUCKET/$prefix"
		S3LOG="$W/remote-access.log"
		[ -f "$S3LOG" ] || die "the S3 server keeps no access log ($S3LOG)"
		export AWS_ACCESS_KEY_ID="$S3_TEST_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$S3_TEST_SECRET_ACCESS_KEY"
		remote_cloudstic "$ep" "$prefix" "$dir"
		remote_restic "$ep" "$prefix" "$dir"
		if [[ " ${TOOLS[*]} " == *" kopia "* ]]; then
			remote_kopia "$ep" "$prefix" "$dir"
		fi
	)
	TOXIPROXY_TEST_PORT="${BENCH_TOXIPROXY_PORT:-8575}" "$ROOT/scripts/toxiproxy-server.sh" --stop >/dev/null 2>&1 || true # already gone
	S3_TEST_PORT="$port" S3_TEST_STATE="$W/remote-s3state" "$ROOT/scripts/s3-server.sh" --stop >/dev/null 2>&1 || true # already gone
	rm -rf -- "$W/remote-s3data" "$W/trash"
}

# remote_TOOL ENDPOINT PREFIX DIR: the four rows for one tool, its
# repository under PREFIX in the bucket (DIR on the server's disk).
remote_cloudstic() {
	local ep=$1 prefix=$2 dir=$3/cloudstic out="$W/restore/remote-c"
	export CLOUDSTIC_S3_ENDPOINT="$ep" CLOUDSTIC_STORE="s3:$S3_TEST_BUCKET/$prefix/cloudstic"
	"$CS" init >"$W/log/init.log" 2>&1 || die "cloudstic init on the remote S3 failed"
	measure remote remote-cloudstic backup1g "$dir" "$CS" backup -debug -source "local:$MIXED"
	measure remote remote-cloudstic incr1g-nochange "$dir" "$CS" backup -debug -source "local:$MIXED"
	measure remote remote-cloudstic restore1g "$out" "$CS" restore -debug -output "$out"
	discard "$out"
	"$CS" backup -source "local:$SMALL" >"$W/log/remote-small.log" 2>&1 || die "cloudstic backup of the small set failed"
	measure remote remote-cloudstic restore55k "$out" "$CS" restore -debug -output "$out"
	discard "$out"
	unset CLOUDSTIC_STORE CLOUDSTIC_S3_ENDPOINT
}

remote_restic() {
	local ep=$1 prefix=$2 dir=$3/restic out="$W/restore/remote-r" rr="s3:$1/$S3_TEST_BUCKET/$2/restic"
	restic -r "$rr" init >"$W/log/init.log" 2>&1 || die "restic init on the remote S3 failed"
	measure remote remote-restic backup1g "$dir" restic -r "$rr" backup "$MIXED"
	measure remote remote-restic incr1g-nochange "$dir" restic -r "$rr" backup "$MIXED"
	measure remote remote-restic restore1g "$out" restic -r "$rr" restore latest --path "$MIXED" --target "$out"
	discard "$out"
	restic -r "$rr" backup "$SMALL" >"$W/log/remote-small.log" 2>&1 || die "restic backup of the small set failed"
	measure remote remote-restic restore55k "$out" restic -r "$rr" restore latest --path "$SMALL" --target "$out"
	discard "$out"
}

remote_kopia() {
	local ep=$1 prefix=$2 dir=$3/kopia out="$W/restore/remote-k" k="$PEERS_DIR/kopia"
	export KOPIA_CONFIG_PATH="$W/kopia/remote.config" KOPIA_CACHE_DIRECTORY="$W/cache/kopia-remote"
	"$k" repository create s3 --bucket "$S3_TEST_BUCKET" --prefix "$prefix/kopia/" --endpoint "${ep#http://}" \
		--disable-tls --access-key "$AWS_ACCESS_KEY_ID" --secret-access-key "$AWS_SECRET_ACCESS_KEY" \
		--region "$S3_TEST_REGION" >"$W/log/init.log" 2>&1 || die "kopia repository create s3 failed"
	measure remote remote-kopia backup1g "$dir" "$k" snapshot create "$MIXED"
	measure remote remote-kopia incr1g-nochange "$dir" "$k" snapshot create "$MIXED"
	measure remote remote-kopia restore1g "$out" "$k" snapshot restore "$MIXED" "$out"
	discard "$out"
	"$k" snapshot create "$SMALL" >"$W/log/remote-small.log" 2>&1 || die "kopia snapshot of the small set failed"
	measure remote remote-kopia restore55k "$out" "$k" snapshot restore "$SMALL" "$out"
	discard "$out"
	unset KOPIA_CONFIG_PATH KOPIA_CACHE_DIRECTORY
}
