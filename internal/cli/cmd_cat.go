package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// catKinds are the objects `cat` prints.
func catKinds() []string { return []string{"config", "snapshot", "tree", "lock"} }

func runCat(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("give what to print: cat config | snapshot ID | tree ID | lock KEY")
	}
	kind := pos[0]
	want := 2
	if kind == "config" {
		want = 1
	}
	switch {
	case !containsString(catKinds(), kind):
		return usageErr("cannot cat %q%s: give config, snapshot ID, tree ID or lock KEY", kind, didYouMean(kind, catKinds()))
	case len(pos) != want && want == 1:
		return usageErr("cat config takes no argument")
	case len(pos) != want:
		return usageErr("give one %s: cat %s ID", kind, kind)
	}
	var v any
	switch kind {
	case "config", "lock":
		v, err = a.catPlain(ctx, pos)
	default:
		v, err = a.catSealed(ctx, kind, pos[1])
	}
	if err != nil {
		return err
	}
	a.writeJSON(v)
	return nil
}

// catPlain prints objects that are stored as plain JSON; no password is
// needed.
func (a *app) catPlain(ctx context.Context, pos []string) (any, error) {
	st, err := a.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	defer a.closeStore()
	if pos[0] == "config" {
		cfg, err := repo.ReadConfig(ctx, st)
		if errors.Is(err, repo.ErrNotRepository) {
			return nil, fmt.Errorf("repository not initialized at %s: run 'cloudstic init'", a.g.repo.URI)
		}
		return cfg, err
	}
	key := pos[1]
	if !strings.HasPrefix(key, "index/lock") {
		key = lock.SharedPrefix + key
	}
	if key != lock.ExclusiveKey && !strings.HasPrefix(key, lock.SharedPrefix) {
		return nil, usageErr("%q is not a lock key: run 'cloudstic locks' to see them", pos[1])
	}
	data, err := st.Get(ctx, key, lock.MaxPayload)
	if errors.Is(err, store.ErrInvalidKey) {
		return nil, usageErr("%q is not a lock key: run 'cloudstic locks' to see them", pos[1])
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no lock %s (it may have been released): run 'cloudstic locks' to see the current ones", key)
	}
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		return nil, fmt.Errorf("lock %s is not valid JSON (%v): remove it with 'cloudstic break-lock'", key, err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// catSealed prints a snapshot or a tree, which need the repository key.
func (a *app) catSealed(ctx context.Context, kind, ref string) (any, error) {
	r, err := a.openRepo(ctx)
	if err != nil {
		return nil, err
	}
	defer a.closeStore()
	if kind == "snapshot" {
		snaps, damaged, err := r.Reader().Snapshots(ctx)
		if err != nil {
			return nil, err
		}
		s, err := repo.FindSnapshot(snaps, ref, nil)
		if errors.Is(err, repo.ErrNoSnapshot) {
			for _, d := range damaged {
				if ref != "" && strings.HasPrefix(strings.TrimPrefix(d.Key, repo.SnapshotPrefix), strings.ToLower(ref)) {
					return nil, d.Err // what is wrong with the object asked for
				}
			}
		}
		if err != nil {
			return nil, err
		}
		return catSnapshotResult{ID: s.ID.String(), Snapshot: s.Snapshot}, nil
	}
	tid, err := id.Parse(ref)
	if err != nil {
		return nil, usageErr("tree id %q: give the 64 hex digits shown by 'cloudstic cat snapshot ID' (field tree)", ref)
	}
	if _, err := r.Reader().LoadIndex(ctx); err != nil {
		return nil, err
	}
	t, err := r.Reader().LoadTree(ctx, tid)
	if errors.Is(err, repo.ErrBlobNotFound) {
		return nil, fmt.Errorf("no tree %s in the repository: run 'cloudstic cat snapshot ID' to find tree ids", ref)
	}
	return t, err
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func didYouMean(s string, candidates []string) string {
	if best := closest(s, candidates); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}
