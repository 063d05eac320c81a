# bench-seq.sh: each tool's sequence of measured steps for scripts/bench.sh,
# which sources this file after defining measure, interrupted, fresh_copy,
# discard and the variables W, ROOT, CS, SMALL and PEERS_DIR.
#
# Each tool: fresh repository, 1 GB backup of a fresh copy, no-change and
# one-file-changed incrementals of it right after, 1 GB restore, 55k
# backup, no-change incremental, one-file-changed incremental, 55k restore,
# forget the three 1 GB snapshots + prune, check.
seq_cloudstic() {
	local run=$1 repo="$W/repos/cloudstic" out
	export CLOUDSTIC_STORE="local:$repo"
	"$CS" init >"$W/log/init.log" 2>&1 || die "cloudstic init failed"
	local src sids=()
	src=$(fresh_copy cloudstic)
	measure "$run" cloudstic backup1g "$repo" "$CS" backup -debug -source "local:$src"
	measure "$run" cloudstic incr1g-nochange "$repo" "$CS" backup -debug -source "local:$src"
	python3 "$ROOT/bench/gen.py" touch1g "$src"
	measure "$run" cloudstic incr1g-onefile "$repo" "$CS" backup -debug -source "local:$src"
	for step in backup1g incr1g-nochange incr1g-onefile; do
		sids+=("$(sed -n 's/^Snapshot \([0-9a-f]*\) saved.*/\1/p' "$W/log/$run-cloudstic-$step.log")")
	done
	CLOUDSTIC_STORE="local:$repo-int" "$CS" init >"$W/log/init.log" 2>&1 || die "cloudstic init failed"
	CLOUDSTIC_STORE="local:$repo-int" interrupted "$run" cloudstic "$repo-int" "$src" "$CS" backup -debug -source "local:$src"
	out="$W/restore/cloudstic-1g"
	measure "$run" cloudstic restore1g "$out" "$CS" restore -debug -output "$out"
	discard "$out"
	measure "$run" cloudstic backup55k "$repo" "$CS" backup -debug -source "local:$SMALL"
	measure "$run" cloudstic incr-nochange "$repo" "$CS" backup -debug -source "local:$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure "$run" cloudstic incr-onefile "$repo" "$CS" backup -debug -source "local:$SMALL"
	out="$W/restore/cloudstic-55k"
	measure "$run" cloudstic restore55k "$out" "$CS" restore -debug -output "$out"
	discard "$out"
	discard "$src"
	measure "$run" cloudstic prune "$repo" sh -c "'$CS' forget ${sids[*]} && '$CS' prune -debug -margin 0s"
	measure "$run" cloudstic check "$repo" "$CS" check -debug
	discard "$repo"
	unset CLOUDSTIC_STORE
}

seq_restic() {
	local run=$1 repo="$W/repos/restic" out
	restic -r "$repo" init >"$W/log/init.log" 2>&1 || die "restic init failed"
	local src sids=()
	src=$(fresh_copy restic)
	measure "$run" restic backup1g "$repo" restic -r "$repo" backup "$src"
	measure "$run" restic incr1g-nochange "$repo" restic -r "$repo" backup "$src"
	python3 "$ROOT/bench/gen.py" touch1g "$src"
	measure "$run" restic incr1g-onefile "$repo" restic -r "$repo" backup "$src"
	for step in backup1g incr1g-nochange incr1g-onefile; do
		sids+=("$(sed -n 's/^snapshot \([0-9a-f]*\) saved.*/\1/p' "$W/log/$run-restic-$step.log")")
	done
	restic -r "$repo-int" init >"$W/log/init.log" 2>&1 || die "restic init failed"
	interrupted "$run" restic "$repo-int" "$src" restic -r "$repo-int" backup "$src"
	out="$W/restore/restic-1g"
	measure "$run" restic restore1g "$out" restic -r "$repo" restore latest --target "$out"
	discard "$out"
	measure "$run" restic backup55k "$repo" restic -r "$repo" backup "$SMALL"
	measure "$run" restic incr-nochange "$repo" restic -r "$repo" backup "$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure "$run" restic incr-onefile "$repo" restic -r "$repo" backup "$SMALL"
	out="$W/restore/restic-55k"
	measure "$run" restic restore55k "$out" restic -r "$repo" restore latest --target "$out"
	discard "$out"
	discard "$src"
	measure "$run" restic prune "$repo" sh -c "restic -r '$repo' forget ${sids[*]} && restic -r '$repo' prune"
	measure "$run" restic check "$repo" restic -r "$repo" check
	discard "$repo"
}

seq_borg() {
	local run=$1 repo="$W/repos/borg" out
	borg init -e repokey "$repo" >"$W/log/init.log" 2>&1 || die "borg init failed"
	local src
	src=$(fresh_copy borg)
	measure "$run" borg backup1g "$repo" borg create "$repo::mixed" "$src"
	measure "$run" borg incr1g-nochange "$repo" borg create "$repo::mixed2" "$src"
	python3 "$ROOT/bench/gen.py" touch1g "$src"
	measure "$run" borg incr1g-onefile "$repo" borg create "$repo::mixed3" "$src"
	out="$W/restore/borg-1g"; mkdir -p "$out"
	measure "$run" borg restore1g "$out" env -C "$out" borg extract "$repo::mixed3"
	discard "$out"
	measure "$run" borg backup55k "$repo" borg create "$repo::small1" "$SMALL"
	measure "$run" borg incr-nochange "$repo" borg create "$repo::small2" "$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure "$run" borg incr-onefile "$repo" borg create "$repo::small3" "$SMALL"
	out="$W/restore/borg-55k"; mkdir -p "$out"
	measure "$run" borg restore55k "$out" env -C "$out" borg extract "$repo::small3"
	discard "$out"
	discard "$src"
	measure "$run" borg prune "$repo" sh -c "borg delete '$repo::mixed' && borg delete '$repo::mixed2' && borg delete '$repo::mixed3' && borg compact '$repo'"
	measure "$run" borg check "$repo" borg check "$repo"
	discard "$repo"
}


# seq_kopia: kopia from $PEERS_DIR on a filesystem repository, with its
# defaults, auto-maintenance included (kopia runs it after a snapshot when
# one is due: the first snapshot of a new repository pays for one). Its
# prune row deletes the three 1 GB snapshots and runs full maintenance with
# --safety=none (by default kopia keeps unreferenced data for 24 h); check is
# `snapshot verify` (every object's existence, no content read), as
# restic check and ours without -read-data.
seq_kopia() {
	local run=$1 repo="$W/repos/kopia" out k="$PEERS_DIR/kopia"
	export KOPIA_CONFIG_PATH="$W/kopia/repo.config" KOPIA_CACHE_DIRECTORY="$W/cache/kopia"
	"$k" repository create filesystem --path "$repo" >"$W/log/init.log" 2>&1 || die "kopia repository create failed"
	local src sids
	src=$(fresh_copy kopia)
	measure "$run" kopia backup1g "$repo" "$k" snapshot create "$src"
	measure "$run" kopia incr1g-nochange "$repo" "$k" snapshot create "$src"
	python3 "$ROOT/bench/gen.py" touch1g "$src"
	measure "$run" kopia incr1g-onefile "$repo" "$k" snapshot create "$src"
	sids=$("$k" snapshot list "$src" --json | python3 -c 'import json, sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))')
	KOPIA_CONFIG_PATH="$W/kopia/int.config" "$k" repository create filesystem --path "$repo-int" >"$W/log/init.log" 2>&1 ||
		die "kopia repository create failed"
	KOPIA_CONFIG_PATH="$W/kopia/int.config" interrupted "$run" kopia "$repo-int" "$src" "$k" snapshot create "$src"
	out="$W/restore/kopia-1g"
	measure "$run" kopia restore1g "$out" "$k" snapshot restore "$src" "$out"
	discard "$out"
	measure "$run" kopia backup55k "$repo" "$k" snapshot create "$SMALL"
	measure "$run" kopia incr-nochange "$repo" "$k" snapshot create "$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure "$run" kopia incr-onefile "$repo" "$k" snapshot create "$SMALL"
	out="$W/restore/kopia-55k"
	measure "$run" kopia restore55k "$out" "$k" snapshot restore "$SMALL" "$out"
	discard "$out"
	discard "$src"
	# shellcheck disable=SC2086 # sids is a list of ids
	measure "$run" kopia prune "$repo" sh -c "'$k' snapshot delete --delete $sids && '$k' maintenance run --full --safety=none"
	measure "$run" kopia check "$repo" "$k" snapshot verify
	discard "$repo"
	unset KOPIA_CONFIG_PATH KOPIA_CACHE_DIRECTORY
}

# seq_Cloudstic: the Cloudstic CLI from $PEERS_DIR (the tool ours is a
# drop-in for; named with a capital C in the results). Its restore writes a
# directory (-format dir). `forget <id>` fails on its packed snapshots, so
# its prune row forgets with -keep-last 1 on the 1 GB source: it keeps one
# of the three 1 GB snapshots where the others forget all three.
seq_Cloudstic() {
	local run=$1 repo="$W/repos/Cloudstic" out c="$PEERS_DIR/cloudstic"
	export CLOUDSTIC_STORE="local:$repo"
	"$c" init >"$W/log/init.log" 2>&1 || die "Cloudstic init failed"
	local src
	src=$(fresh_copy Cloudstic)
	measure "$run" Cloudstic backup1g "$repo" "$c" backup -quiet -source "local:$src"
	measure "$run" Cloudstic incr1g-nochange "$repo" "$c" backup -quiet -source "local:$src"
	python3 "$ROOT/bench/gen.py" touch1g "$src"
	measure "$run" Cloudstic incr1g-onefile "$repo" "$c" backup -quiet -source "local:$src"
	CLOUDSTIC_STORE="local:$repo-int" "$c" init >"$W/log/init.log" 2>&1 || die "Cloudstic init failed"
	CLOUDSTIC_STORE="local:$repo-int" interrupted "$run" Cloudstic "$repo-int" "$src" "$c" backup -quiet -source "local:$src"
	out="$W/restore/Cloudstic-1g"
	measure "$run" Cloudstic restore1g "$out" "$c" restore -quiet -format dir -output "$out"
	discard "$out"
	measure "$run" Cloudstic backup55k "$repo" "$c" backup -quiet -source "local:$SMALL"
	measure "$run" Cloudstic incr-nochange "$repo" "$c" backup -quiet -source "local:$SMALL"
	python3 "$ROOT/bench/gen.py" touch "$SMALL"
	measure "$run" Cloudstic incr-onefile "$repo" "$c" backup -quiet -source "local:$SMALL"
	out="$W/restore/Cloudstic-55k"
	measure "$run" Cloudstic restore55k "$out" "$c" restore -quiet -format dir -output "$out"
	discard "$out"
	measure "$run" Cloudstic prune "$repo" sh -c "'$c' forget -keep-last 1 -source 'local:$src' && '$c' prune"
	discard "$src"
	measure "$run" Cloudstic check "$repo" "$c" check
	discard "$repo"
	unset CLOUDSTIC_STORE
}
