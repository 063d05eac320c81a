/*
 * Promela model of the cloudstic repository lock (internal/repo/lock).
 * docs/lock/check.sh verifies each variant with spin; docs/lock.md explains.
 *
 * The store is linearizable: every store request is one atomic step. Time
 * is abstracted to the lease rule the implementation enforces with its
 * watchdog: a holder stops working (leaves its critical section) before its
 * lease can be judged expired by anyone, so "the lease expired" is an event
 * that only happens to a lock whose holder is outside its critical section.
 *
 * Compile-time switches (spin -DNAME=0|1):
 *   CIA     store has atomic create-if-absent (else: check, plain write)
 *   SETTLE  without CIA: the settle delay outlasts every other acquirer's
 *           check-to-write gap (the timing assumption of the fallback)
 *   RELIST  exclusive lists the shared locks AFTER writing its key (our
 *           protocol); 0 = the seed's reference ordering, which lists them
 *           only BEFORE writing.
 */
#ifndef CIA
#define CIA 1
#endif
#ifndef SETTLE
#define SETTLE 1
#endif
#ifndef RELIST
#define RELIST 1
#endif

#define NE 2      /* exclusive acquirers (prune) */
#define NS 1      /* shared acquirers: one suffices, shared locks never conflict */
#define ROUNDS 2  /* acquisition attempts per process (bounds versions) */

byte X = 0;        /* index/lock.exclusive: 0 absent, else writer id 1..NE */
byte XV = 0;       /* its version (ETag): bumped by every write */
bool Xstale = 0;   /* the lease written in the current version expired */
bool S[NS];        /* index/lock.shared/<key of shared process i> exists */
bool Sstale[NS];   /* ... and its lease expired */
byte pending = 0;  /* fallback acquirers between their check and their write */

byte inE = 0;      /* processes working under an exclusive lock */
byte inS = 0;      /* processes working under a shared lock */

ltl mutex { [] (inE <= 1 && (inE == 0 || inS == 0)) }

inline liveX()    { (X != 0 && !Xstale) }

proctype Exclusive(byte id) {
	byte v;         /* version we wrote */
	byte seen;      /* version judged stale */
	byte i;
	byte round = 0;
	bool stale;
	bool lost;
again:
	if
	:: round >= ROUNDS -> goto end
	:: round < ROUNDS -> round++
	fi;
#if !RELIST
	/* seed: look at the shared locks before writing, never after */
	i = 0;
	do
	:: i < NS && S[i] && !Sstale[i] -> goto again
	:: i < NS && !(S[i] && !Sstale[i]) -> i++
	:: i >= NS -> break
	od;
#endif
#if CIA
	/* Put(IfAbsent) */
	atomic {
		if
		:: X == 0 -> X = id; XV++; Xstale = 0; v = XV; goto verify
		:: else -> skip
		fi
	}
	/* ErrExists: Stat then Get; live -> conflict */
	atomic {
		if
		:: X == 0 -> goto again
		:: else -> seen = XV; stale = Xstale
		fi
	}
	if
	:: !stale -> goto again
	:: else -> skip
	fi;
	/* stale: take over with compare-and-swap on the version judged */
	atomic {
		if
		:: X != 0 && XV == seen -> X = id; XV++; Xstale = 0; v = XV
		:: else -> goto again
		fi
	}
#else
	/* no create-if-absent: check, then a plain write */
	atomic {
		if
		:: X != 0 && !Xstale -> goto again
		:: else -> pending++
		fi
	}
	atomic { X = id; XV++; Xstale = 0; v = XV; pending-- }
#if SETTLE
	(pending == 0);  /* wait SettleDelay */
#endif
#endif
verify:
	/* re-read: still our write? */
	if
	:: X == id && XV == v -> skip
	:: !(X == id && XV == v) -> goto again
	fi;
#if RELIST
	/* symmetric write-then-check: list the shared locks */
	i = 0;
	do
	:: i < NS && S[i] && !Sstale[i] ->
		/* withdraw, only if still ours */
		atomic { if :: X == id && XV == v -> X = 0 :: else -> skip fi };
		goto again
	:: i < NS && !(S[i] && !Sstale[i]) -> i++
	:: i >= NS -> break
	od;
#endif
	inE++;
	/* work; refresh = compare-and-swap on our version */
	if
	:: atomic { X == id && XV == v -> XV++; v = XV }  /* one refresh */
	:: skip
	fi;
	inE--;
	if
	:: lost = 0  /* done: release (delete only if still ours) */
	:: lost = 1  /* lease lost (refresh failures, sleep): the watchdog
	                stopped the work above; the key stays and expires */
	fi;
	atomic {
		if
		:: X == id && XV == v && !lost -> X = 0
		:: X == id && XV == v && lost -> Xstale = 1
		:: !(X == id && XV == v) -> skip
		fi
	}
	goto again;
end:
	skip
}

proctype Shared(byte id) {
	byte round = 0;
again:
	if
	:: round >= ROUNDS -> goto end
	:: round < ROUNDS -> round++
	fi;
	/* Get exclusive */
	if
	:: liveX() -> goto again
	:: else -> skip
	fi;
	/* Put our own (uniquely named) key */
	atomic { S[id] = 1; Sstale[id] = 0 };
	/* re-read exclusive: a live one wins, we withdraw */
	if
	:: liveX() -> S[id] = 0; goto again
	:: else -> skip
	fi;
	inS++;
	inS--;
	if
	:: S[id] = 0            /* release */
	:: Sstale[id] = 1       /* lease lost; the key expires */
	fi;
	goto again;
end:
	skip
}

init {
	atomic {
		run Exclusive(1);
		run Exclusive(2);
		run Shared(0);

	}
}
