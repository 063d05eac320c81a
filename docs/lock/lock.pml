/*
 * Promela model of the cloudstic repository lock, protocol v2 (issue 15):
 * intents, store-clock staleness, leases with a safe end, on stores with
 * create-if-absent + compare-and-swap, create-if-absent only, or neither.
 * docs/lock/check.sh runs every configuration and every broken variant;
 * docs/lock/model.md explains the abstractions and the results.
 *
 * Abstractions (see model.md):
 * - The store is linearizable: each request (Put, Get, Stat+Get, List,
 *   Delete, conditional write) is one atomic step.
 * - Time is discrete: a global store clock `now` ticks from 0 to TMAX; any
 *   number of steps may happen within one tick, any number of ticks between
 *   two steps of a process. A request's mtime is the tick it is applied at.
 * - A lease starts at the tick of the process's first Put of an attempt
 *   (refresh: of the first Put of the refresh) and every request made under
 *   it is fenced: it is only sent while now < ls + SAFE. A process counts as
 *   in its critical section from entering until it releases, or until
 *   ls + WIN (WIN = SAFE + REQ: a data write sent just before the safe end
 *   may land REQ ticks later) if it stops refreshing, crashes or stalls.
 * - Staleness: a judge estimates the store clock with an error of at most
 *   TOL either way (est in [now-TOL, now+TOL], chosen anew at each judgement)
 *   and calls an object stale iff est > mtime + TTL. The design's extra
 *   condition (est > expires_at) and the mtime resolution R only delay
 *   staleness, so leaving them out (R = 0) makes the proof stronger.
 *
 * Property (monitor): no exclusive holder is in its critical section
 * together with any other holder, exclusive or shared. break-lock's victims
 * (a process whose object break-lock deleted) are exempt only until the end
 * of the lease they held at that moment (bend = ls + WIN); after it they
 * must not overlap anyone.
 */

/* store configuration: 1 create-if-absent + CAS, 2 create-if-absent only,
 * 3 neither */
#ifndef STORE
#define STORE 1
#endif
#ifndef INTENTS   /* 0: no intents (the v1 protocol; broken variants) */
#define INTENTS 1
#endif
#ifndef RELIST    /* exclusive lists shared keys again after claiming X */
#define RELIST 1
#endif
#ifndef RECHECK   /* non-CAS refresh re-checks intents/shared (or X) after
                   * its Puts before the extended lease counts */
#define RECHECK 1
#endif
#ifndef COARSE    /* broken: CAS compares size + mtime tick, not a version */
#define COARSE 0
#endif
#ifndef SETTLE    /* broken, with INTENTS=0 STORE=3: wait SETTLE ticks, verify */
#define SETTLE 0
#endif
#ifndef LOCALCLOCK /* broken: the last exclusive judges by its own fast clock */
#define LOCALCLOCK 0
#endif
#ifndef NE        /* intent-aware exclusive processes (prune) */
#define NE 2
#endif
#ifndef NS        /* intent-aware shared processes (backup) */
#define NS 1
#endif
#ifndef NW        /* seed-style shared writers: put key, re-read X only */
#define NW 0
#endif
#ifndef BREAK     /* an admin runs break-lock once, at any moment */
#define BREAK 0
#endif
#ifndef GHOST     /* X may initially hold a crashed holder's lock (mtime 0) */
#define GHOST 1
#endif
#ifndef ATT       /* acquisition attempts per process */
#define ATT 1
#endif
#ifndef NREF      /* refreshes per holder */
#define NREF 1
#endif
#ifndef TMAX
#define TMAX 4
#endif
#ifndef WPREF     /* writer preference (issue 31): a waiting prune keeps its
                   * intent while shared holders drain; a shared acquirer
                   * defers to an older intent. 0: the protocol before it */
#define WPREF 1
#endif
#ifndef FAIR      /* liveness runs: shared acquirers loop LOOPS times, retry
                   * without bound; the FIFO monitor is asserted */
#define FAIR 0
#endif
#ifndef LOOPS
#define LOOPS 1
#endif
#ifndef QUEUE     /* FAIR runs: every waiting acquirer writes a queue
                   * entry before its first key, kept until it enters;
                   * 0: broken, no queue entries */
#define QUEUE 1
#endif

/* time, in ticks */
#define TTL 4
#ifndef MARGIN
#define MARGIN 2
#endif
#define TOL 1
#define REQ 1
#define SKEW TTL          /* LOCALCLOCK: the judge's clock is a TTL fast */
#define SAFE (TTL - MARGIN)
#define WIN (SAFE + REQ)

#define NP 4              /* process slots 1..NP */
#define GH 5              /* owner id of the crashed ghost holder */

#define ISE(q) ((q) >= 1 && (q) <= NE)
#define ISS(q) ((q) > NE && (q) <= NE + NS + NW)

byte now = 0;

/* index/lock.exclusive: exists, owner, version (unique per write: the
 * exact version, and the per-write nonce content comparison sees), mtime */
bool xe = 0;
byte xo = 0;
byte xv = 0;
byte xm = 0;

/* each process's own uniquely named key: its intent (exclusive) or its
 * shared key (shared, seed-style writer): exists, mtime. Only its owner
 * writes it, so "still ours" is "still there" (no version needed). */
bool oe[NP + 1];
byte om[NP + 1];

/* leases and the monitor's bookkeeping */
byte ls[NP + 1];   /* lease start */
bool incs[NP + 1]; /* in critical section (until release, or ls + WIN) */
byte att[NP + 1];  /* attempt number = lease epoch */
bool vic[NP + 1];  /* break-lock deleted an object of this lease */
byte vatt[NP + 1];
byte bend[NP + 1]; /* end of the lease it held then */

/* queue order (writer preference): a process's priority is fixed when it
 * starts an acquire (the timestamp in its key names), kept over retries;
 * smaller is older. ewait: an exclusive acquirer has written its intent
 * and not yet entered (or given up): the FIFO monitor's state. */
byte seq = 0;
byte prio[NP + 1];
bool ewait[NP + 1];
bool swait[NP + 1]; /* a shared acquirer has begun and not yet entered */
bool qe[NP + 1];    /* index/lock.queue/ entry of a waiting acquirer */
#define OLDER(q, p) (prio[q] < prio[p] || (prio[q] == prio[p] && (q) < (p)))
#define OI(p, q) (ISE(q) && (q) != (p) && LIVEKEY(q) && OLDER(q, p))
#define OLDERINTENT(p) (OI(p, 1) || OI(p, 2) || OI(p, 3) || OI(p, 4))
/* FIFO monitor: a shared acquirer younger than a waiting exclusive one
 * must not enter before it */
#define OVT(p, q) (ISE(q) && ewait[q] && OLDER(q, p))
#define OVERTAKES(p) (OVT(p, 1) || OVT(p, 2) || OVT(p, 3) || OVT(p, 4))
/* and an exclusive acquirer younger than a waiting shared one must not
 * enter before it */
#define OVS(p, q) (ISS(q) && swait[q] && OLDER(q, p))
#define OVERTAKESS(p) (OVS(p, 1) || OVS(p, 2) || OVS(p, 3) || OVS(p, 4))
#define OQS(p, q) (ISS(q) && qe[q] && OLDER(q, p))
#define OLDERQS(p) (OQS(p, 1) || OQS(p, 2) || OQS(p, 3) || OQS(p, 4))
#define OQE(p, q) (ISE(q) && (q) != (p) && qe[q] && OLDER(q, p))
#define OLDERQE(p) (OQE(p, 1) || OQE(p, 2) || OQE(p, 3) || OQE(p, 4))
#ifndef MONE      /* FAIR: assert that no backup overtakes a waiting prune */
#define MONE 1
#endif
#ifndef MONS      /* FAIR: assert that no prune overtakes a waiting backup */
#define MONS 1
#endif
#if FAIR
#define FIFO(p) swait[p] = 0; assert(!MONE || !OVERTAKES(p))
#define FIFOX(p) ewait[p] = 0; assert(!MONS || !OVERTAKESS(p))
#else
#define FIFO(p) skip
#define FIFOX(p) skip
#endif
#if FAIR
#define ATTINC(p) skip
#else
#define ATTINC(p) att[p]++
#endif
#define NEWPRIO(p) if :: prio[p] == 0 -> seq++; prio[p] = seq :: else -> skip fi

#define INCS(p) (incs[p] && now < ls[p] + WIN)
#define EXEMPT(p) (vic[p] && vatt[p] == att[p] && now < bend[p])
#define CONFLICT(p, q) (ISE(p) && (q) != (p) && (ISE(q) || ISS(q)) && \
	INCS(p) && INCS(q) && !EXEMPT(p) && !EXEMPT(q))
#define ROW(p) (CONFLICT(p, 1) || CONFLICT(p, 2) || CONFLICT(p, 3) || CONFLICT(p, 4))
#define BAD (ROW(1) || ROW(2) || ROW(3) || ROW(4))

/* A violation can only begin when a process enters its critical section,
 * extends its lease, or time passes (an exemption ends): each of those
 * steps asserts the property (cheaper than a monitor process). */
#define CHECK assert(!BAD)

/* judgement of staleness with the local variable est */
#define LIVE(m) (est <= (m) + TTL)
#define LIVEKEY(q) (oe[q] && LIVE(om[q]))
#define FI(p, q) (ISE(q) && (q) != (p) && LIVEKEY(q))
#define FOREIGNINTENT(p) (FI(p, 1) || FI(p, 2) || FI(p, 3) || FI(p, 4))
#define SL(p, q) (ISS(q) && (q) != (p) && LIVEKEY(q))
#define SHAREDLIVE(p) (SL(p, 1) || SL(p, 2) || SL(p, 3) || SL(p, 4))
#define LIVEX (xe && LIVE(xm))

#if LOCALCLOCK
#define JUDGE(p) if :: (p) == NE -> est = now + SKEW \
	:: else -> if :: est = now + TOL :: est = (now >= TOL -> now - TOL : 0) fi fi
#else
#define JUDGE(p) if :: est = now + TOL :: est = (now >= TOL -> now - TOL : 0) fi
#endif

/* a request under the lease: not sent once the safe end has passed */
#define FENCE(p, where) if :: now >= ls[p] + SAFE -> goto where :: else -> skip fi

#if COARSE
#define SAMEX (xm == myxm)

#else
#define SAMEX (xv == myxv)

#endif

#if COARSE
#define WRITEX(p) xe = 1; xo = p; xv++; xm = now; myxv = xv; myxm = now
#define WRITEO(p) oe[p] = 1; om[p] = now
#define COARSEVARS byte seenm, myxm;
#define SEEN seenm = xm
#else
#define WRITEX(p) xe = 1; xo = p; xv++; xm = now; myxv = xv
#define WRITEO(p) oe[p] = 1; om[p] = now
#define COARSEVARS
#define SEEN skip
#endif

inline victim(q) {
	if
	:: q >= 1 && q <= NP && !(vic[q] && vatt[q] == att[q]) ->
		vic[q] = 1; vatt[q] = att[q]; bend[q] = ls[q] + WIN
	:: else -> skip
	fi
}

/* break-lock: deletes the exclusive key, every intent and every shared key
 * (one atomic step: an abstraction of its List + Deletes, see model.md) */
proctype Break() {
	byte q = 1;
	atomic {
		if :: xe -> victim(xo); xe = 0 :: else -> skip fi;
		do
		:: q <= NP -> if :: oe[q] -> victim(q); oe[q] = 0 :: else -> skip fi; q++
		:: q > NP -> break
		od;
		q = 0
	}
}

/* an intent-aware exclusive acquirer (prune) */
proctype Exc(byte p) {
	byte est, seenv, myxv, t1, nref;
	COARSEVARS
attempt:
#if !FAIR  /* FAIR: -lock-wait, retries without bound (and no break-lock) */
	if
	:: att[p] >= ATT -> goto finish
	:: else -> skip
	fi;
#endif
#if INTENTS
#if FAIR
	/* -lock-wait: the queue entry first (our place in the queue) */
	atomic { if :: prio[p] == 0 -> NEWPRIO(p); ewait[p] = 1; qe[p] = QUEUE :: else -> skip fi };
#endif
	/* 1. Put own intent; the (provisional) lease starts */
	atomic { ATTINC(p); NEWPRIO(p); WRITEO(p); ls[p] = now };
#if WPREF
check:
	/* 2. List intents: an older one => withdraw (it goes first); only
	 * younger ones => keep ours (they withdraw) unless one holds X */
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if
		:: OLDERINTENT(p) -> est = 0; goto withdrawI
		:: FOREIGNINTENT(p) -> est = 0; goto youngerI
		:: else -> est = 0
		fi
	};
#if FAIR
	/* List the queue: an exclusive waiter queued before us goes first
	 * (withdraw: it needs no other intent); a shared one too (keep the
	 * intent: it does not defer to us). Only FAIR runs write queue
	 * entries; they can only make a prune wait, never enter. */
	atomic {
		FENCE(p, attempt);
		if :: OLDERQE(p) -> goto withdrawI :: OLDERQS(p) -> goto waitI :: else -> skip fi
	};
#endif
	/* List shared: live => keep the intent and wait for them to drain */
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if :: SHAREDLIVE(p) -> est = 0; goto waitI :: else -> est = 0 fi
	};
#else
	/* 2. List intents, then List shared */
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if :: FOREIGNINTENT(p) -> est = 0; goto withdrawI :: else -> est = 0 fi
	};
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if :: SHAREDLIVE(p) -> est = 0; goto withdrawI :: else -> est = 0 fi
	};
#endif
#else
	atomic { att[p]++; ls[p] = now };
#endif
	/* 3. read index/lock.exclusive (Stat, then Get) */
	atomic {
#if INTENTS
		FENCE(p, attempt);
#endif
		JUDGE(p);
		if
		:: !xe -> est = 0; goto create
		:: LIVEX -> est = 0; goto withdrawI
		:: else -> est = 0; seenv = xv; SEEN
		fi
	};
	/* stale: take over */
#if STORE == 1
	/* compare-and-swap on the version judged */
	atomic {
#if INTENTS
		FENCE(p, attempt);
#else
		ls[p] = now;
#endif
		if
#if COARSE
		:: xe && xm == seenm -> WRITEX(p)
#else
		:: xe && xv == seenv -> seenv = 0; WRITEX(p)
#endif
		:: else -> seenv = 0; goto withdrawI
		fi
	};
	goto relist;
#elif STORE == 2
	/* delete-if-same: Get and compare, then an unconditional Delete */
	atomic {
#if INTENTS
		FENCE(p, attempt);
#endif
		if :: xe && xv == seenv -> seenv = 0 :: else -> seenv = 0; goto withdrawI fi
	};
	atomic {
#if INTENTS
		FENCE(p, attempt);
#endif
		xe = 0
	};
	goto create;
#else
	goto create;
#endif
create:
#if STORE != 3
	/* create-if-absent */
	atomic {
#if INTENTS
		FENCE(p, attempt);
#else
		ls[p] = now;
#endif
		if :: !xe -> WRITEX(p) :: else -> goto withdrawI fi
	};
#else
	/* plain Put */
	atomic {
#if INTENTS
		FENCE(p, attempt);
#else
		ls[p] = now;
#endif
		WRITEX(p); t1 = now
	};
#if SETTLE
	/* settle-only: wait, then verify the key still holds our write */
	(now >= t1 + SETTLE);
	atomic {
		FENCE(p, attempt); t1 = 0;
		if :: xe && xv == myxv -> skip :: else -> goto attempt fi
	};
#endif
#endif
relist:
	/* 4. List shared again (Dekker against seed-style shared writers) */
	atomic {
		FENCE(p, attempt);
#if RELIST
		JUDGE(p);
		if :: SHAREDLIVE(p) -> est = 0; goto withdrawX :: else -> est = 0; incs[p] = 1; FIFOX(p); CHECK fi
#else
		incs[p] = 1; FIFOX(p); CHECK
#endif
	};
#if FAIR
	qe[p] = 0;  /* entered: remove the queue entry */
#endif

	/* critical section: refresh, then release or stop (crash, stall) */
	do
	:: nref < NREF -> nref++;
#if STORE == 1
		/* CAS on own versions: intent, then exclusive key */
		atomic {
			FENCE(p, lost);
			if :: oe[p] -> WRITEO(p); t1 = now :: else -> goto lost fi
		};
		atomic {
			FENCE(p, lost);
			if :: xe && SAMEX -> WRITEX(p); ls[p] = t1; t1 = 0; CHECK :: else -> goto lost fi
		}
#else
		/* Get + compare (per-write nonce) + Put: intent, exclusive key */
		atomic { FENCE(p, lost); if :: oe[p] -> skip :: else -> goto lost fi };
		atomic { FENCE(p, lost); WRITEO(p); t1 = now };
		atomic { FENCE(p, lost); if :: xe && xo == p && xv == myxv -> skip :: else -> goto lost fi };
#if RECHECK
		atomic { FENCE(p, lost); WRITEX(p) };
		/* List intents and shared keys: our intent gone (broken) => lost;
		 * a foreign live one is polled once more later (a contender
		 * withdraws); lasting => lost. Only then does the new lease count. */
		atomic {
			FENCE(p, lost); JUDGE(p);
			if
			:: !oe[p] -> est = 0; goto lost
			:: oe[p] && (FOREIGNINTENT(p) || SHAREDLIVE(p)) -> est = 0
			:: else -> est = 0; ls[p] = t1; t1 = 0; CHECK; goto refreshed
			fi
		};
		atomic {
			FENCE(p, lost); JUDGE(p);
			if
			:: !oe[p] || FOREIGNINTENT(p) || SHAREDLIVE(p) -> est = 0; goto lost
			:: else -> est = 0; ls[p] = t1; t1 = 0; CHECK
			fi
		};
refreshed:
		skip
#else
		atomic { FENCE(p, lost); WRITEX(p); ls[p] = t1; t1 = 0; CHECK }
#endif
#endif
	:: break
	od;
	if
	:: skip   /* done: release */
	:: goto finish  /* crash or stall: the objects stay and expire */
	fi;
	incs[p] = 0;
#if STORE == 1
	/* delete the exclusive key only if it still holds our version */
	atomic { FENCE(p, finish); if :: xe && SAMEX -> xe = 0 :: else -> skip fi };
#else
	atomic { FENCE(p, finish); if :: xe && xo == p && xv == myxv -> skip :: else -> goto releaseI fi };
	atomic { FENCE(p, finish); xe = 0 };
releaseI:
#endif
#if INTENTS
	atomic { FENCE(p, finish); oe[p] = 0 };
#endif
	goto finish;

lost:
	/* lease lost: stop (counted in the critical section until ls + WIN) */
	goto finish;

withdrawX:
	/* a live shared key after our claim: withdraw the key if still ours */
#if STORE == 1
	atomic { FENCE(p, attempt); if :: xe && SAMEX -> xe = 0 :: else -> skip fi };
#else
	atomic { FENCE(p, attempt); if :: xe && xo == p && xv == myxv -> skip :: else -> goto withdrawI fi };
	atomic { FENCE(p, attempt); xe = 0 };
#endif
#if INTENTS && WPREF
	goto waitI;  /* keep the intent: the shared holders drain */
#endif
withdrawI:
#if INTENTS
	atomic { FENCE(p, attempt); oe[p] = 0 };
#endif
	goto attempt;
#if INTENTS && WPREF
youngerI:
	/* Get X: a younger intent whose owner holds X does not withdraw */
	atomic { FENCE(p, attempt); JUDGE(p); if :: LIVEX -> est = 0; goto withdrawI :: else -> est = 0 fi };
waitI:
	/* waiting: rewrite the intent (a new provisional lease), look again;
	 * not in a critical section, so a break-lock before is forgotten */
	atomic { FENCE(p, attempt); WRITEO(p); ls[p] = now; vic[p] = 0 };
	goto check;
#endif
finish:
	ewait[p] = 0; qe[p] = 0
}

/* an intent-aware shared acquirer (backup) */
proctype Sh(byte p) {
	byte est, t1, nref, loops;
	bool saw; /* the first of the two reads after our write saw a conflict */
attempt:
#if !FAIR  /* FAIR: -lock-wait, retries without bound (and no break-lock) */
	if
	:: att[p] >= ATT -> goto finish
	:: else -> skip
	fi;
#endif
#if FAIR
	/* -lock-wait: the queue entry first (our place in the queue) */
	atomic { if :: prio[p] == 0 -> NEWPRIO(p); swait[p] = 1; qe[p] = QUEUE :: else -> skip fi };
#if WPREF
	/* List the queue before writing a key: an exclusive waiter queued
	 * before us goes first (we retry, writing nothing meanwhile) */
	(!OLDERQE(p));
#endif
#endif
	/* 1. Put own shared key; the lease starts */
	atomic { ATTINC(p); NEWPRIO(p); WRITEO(p); ls[p] = now };
check:
#if WPREF
	/* 2. Get the exclusive key and 3. list intents, both sent at once
	 * after our write (acquire.go), so they are applied in either order,
	 * each judged on its own; we enter only once both have answered, at
	 * the later one. A live exclusive key or an older intent: withdraw
	 * (the older intent goes first); younger intents wait for us (their
	 * step 4 sees our key if they got that far). */
	if
	:: /* the exclusive key first */
		atomic { skip; FENCE(p, attempt); JUDGE(p); saw = LIVEX; est = 0 };
		atomic {
			FENCE(p, attempt); JUDGE(p);
			if :: saw || OLDERINTENT(p) -> est = 0; saw = 0; goto withdraw
			:: else -> est = 0; incs[p] = 1; FIFO(p); CHECK; goto cs fi
		}
	:: /* the intents first */
		atomic { skip; FENCE(p, attempt); JUDGE(p); saw = OLDERINTENT(p); est = 0 };
		atomic {
			FENCE(p, attempt); JUDGE(p);
			if :: saw || LIVEX -> est = 0; saw = 0; goto withdraw
			:: else -> est = 0; incs[p] = 1; FIFO(p); CHECK; goto cs fi
		}
	fi;
#else
	/* 2. Get the exclusive key */
	atomic { FENCE(p, attempt); JUDGE(p); if :: LIVEX -> est = 0; goto withdraw :: else -> est = 0 fi };
	/* 3. List intents; on contention keep the key and poll once more */
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if :: FOREIGNINTENT(p) -> est = 0 :: else -> est = 0; incs[p] = 1; FIFO(p); CHECK; goto cs fi
	};
	atomic { FENCE(p, attempt); JUDGE(p); if :: LIVEX -> est = 0; goto withdraw :: else -> est = 0 fi };
	atomic {
		FENCE(p, attempt); JUDGE(p);
		if :: FOREIGNINTENT(p) -> est = 0; goto withdraw :: else -> est = 0; incs[p] = 1; FIFO(p); CHECK; goto cs fi
	};
#endif
withdraw:
	atomic { FENCE(p, attempt); oe[p] = 0 };
	goto attempt;  /* FAIR: again, keeping the priority (no attempt bound) */
cs:
#if FAIR
	qe[p] = 0;  /* entered: remove the queue entry */
#endif
	do
	:: nref < NREF -> nref++;
#if STORE == 1
		atomic {
			FENCE(p, finish);
			if :: oe[p] -> WRITEO(p); ls[p] = now; CHECK :: else -> goto finish fi
		}
#else
		atomic { FENCE(p, finish); if :: oe[p] -> skip :: else -> goto finish fi };
#if RECHECK
		atomic { FENCE(p, finish); WRITEO(p); t1 = now };
		/* Get the exclusive key (a live one means our key was broken and
		 * an exclusive holder took over), then Stat our own key (gone:
		 * broken); only then does the new lease count */
		atomic { FENCE(p, finish); JUDGE(p); if :: LIVEX -> est = 0; goto finish :: else -> est = 0 fi };
		atomic { FENCE(p, finish); if :: !oe[p] -> goto finish :: else -> ls[p] = t1; t1 = 0; CHECK fi }
#else
		atomic { FENCE(p, finish); WRITEO(p); ls[p] = now; CHECK }
#endif
#endif
	:: break
	od;
	if
	:: incs[p] = 0; atomic { FENCE(p, finish); oe[p] = 0 }  /* release */
#if FAIR
		/* and back up again: a new acquire, a new priority */
		loops++;
		if :: loops < LOOPS -> prio[p] = 0; nref = 0; goto attempt :: else -> skip fi
#endif
	:: skip     /* crash or stall */
	fi;
finish:
	swait[p] = 0; qe[p] = 0
}

/* a seed-style shared writer (Cloudstic): Get X, Put key, Get X again */
proctype Seed(byte p) {
	byte est;
	atomic { JUDGE(p); if :: LIVEX -> est = 0; goto finish :: else -> est = 0 fi };
	atomic { att[p]++; WRITEO(p); ls[p] = now };
	atomic {
		FENCE(p, finish); JUDGE(p);
		if :: LIVEX -> est = 0 :: else -> est = 0; incs[p] = 1; CHECK; goto cs fi
	};
	atomic { FENCE(p, finish); oe[p] = 0 };
	goto finish;
cs:
	if
	:: incs[p] = 0; atomic { FENCE(p, finish); oe[p] = 0 }
	:: skip
	fi;
finish:
	skip
}

active proctype clock() {
	do
	:: now < TMAX -> atomic { now++; CHECK }
	:: else -> break
	od
}

init {
	byte i = 1;
	atomic {
#if GHOST
		if
		:: skip
		:: xe = 1; xo = GH; xv = 1; xm = 0
		fi;
#endif
		do
		:: i <= NE -> run Exc(i); i++
		:: i > NE && i <= NE + NS -> run Sh(i); i++
		:: i > NE + NS && i <= NE + NS + NW -> run Seed(i); i++
		:: else -> break
		od;
#if BREAK
		run Break();
#endif
		i = 0
	}
}
