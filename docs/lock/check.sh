#!/bin/sh
# Verify docs/lock/lock.pml with spin: the protocol's variants must keep
# mutual exclusion; the seed's reference ordering and the fallback without
# its timing assumption must produce a counterexample. Exits non-zero
# otherwise. Needs spin (Debian package "spin") and a C compiler.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
command -v spin >/dev/null || { echo "check.sh: spin not found (apt-get install spin)" >&2; exit 2; }
command -v cc >/dev/null || { echo "check.sh: no C compiler (cc) found" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/lock.pml" "$work/"
cd "$work"

status=0
# name expect defines
run() {
	name=$1 expect=$2; shift 2
	rm -f pan pan.* lock.pml.trail
	spin "$@" -a lock.pml >spin.out 2>&1 || { cat spin.out; echo "FAIL $name: spin -a"; status=1; return; }
	cc -O2 -DNOREDUCE -o pan pan.c 2>cc.out || { cat cc.out; echo "FAIL $name: cc"; status=1; return; }
	./pan -a -m100000 >pan.out 2>&1 || true
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | head -n 1)
	states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' pan.out | head -n 1)
	if [ -z "$errors" ]; then
		cat pan.out; echo "FAIL $name: no verdict from pan"; status=1; return
	fi
	if grep -q 'depth too small\|max search depth too small' pan.out; then
		echo "FAIL $name: search depth too small (incomplete search)"; status=1; return
	fi
	case $expect in
	safe)
		if [ "$errors" -eq 0 ]; then
			echo "ok   $name: mutual exclusion holds ($states states)"
		else
			echo "FAIL $name: counterexample found:"; spin -t -p "$@" lock.pml | tail -n 40; status=1
		fi ;;
	unsafe)
		if [ "$errors" -gt 0 ]; then
			echo "ok   $name: counterexample found, as expected"
		else
			echo "FAIL $name: expected a counterexample, none found"; status=1
		fi ;;
	esac
}

run "protocol, create-if-absent"           safe   -DCIA=1 -DRELIST=1 -DSETTLE=0
run "protocol, fallback with settle delay" safe   -DCIA=0 -DRELIST=1 -DSETTLE=1
run "seed reference ordering"              unsafe -DCIA=0 -DRELIST=0 -DSETTLE=0
run "seed ordering with create-if-absent"  unsafe -DCIA=1 -DRELIST=0 -DSETTLE=0
run "fallback, settle delay too short"     unsafe -DCIA=0 -DRELIST=1 -DSETTLE=0
exit $status
