package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// catKinds are the objects `cat` prints.
func catKinds() []string { return []string{"config", "snapshot", "tree", "lock"} }

// catObject is one object cat is asked for: its kind and its argument
// (none for config).
type catObject struct{ kind, ref string }

// key names the object in cat -json's array and in the "==> KEY <=="
// headers between several objects, as Cloudstic's object keys do.
func (o catObject) key() string {
	if o.kind == "config" {
		return "config"
	}
	return o.kind + "/" + o.ref
}

// catEntry is one element of cat -json: Cloudstic's shape.
type catEntry struct {
	Data json.RawMessage `json:"data"`
	Key  string          `json:"key"`
}

func runCat(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	raw := fs.Bool("raw", false, "print each object's bytes as the repository stores them, decrypted (not with -json)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if *raw && a.g.json {
		return usageErr("give -json or -raw, not both")
	}
	objs, err := parseCatObjects(pos)
	if err != nil {
		return err
	}
	var entries []catEntry
	for i, o := range objs {
		data, err := a.catOne(ctx, o, *raw)
		if err != nil {
			if len(objs) > 1 {
				return fmt.Errorf("%s: %w", o.key(), err)
			}
			return err
		}
		if a.g.json {
			entries = append(entries, catEntry{Key: o.key(), Data: data})
			continue
		}
		if len(objs) > 1 {
			if i > 0 {
				a.infof("")
			}
			a.infof("==> %s <==", o.key())
		}
		if *raw {
			if _, err := a.io.Stdout.Write(data); err != nil {
				return err
			}
			continue
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, data, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(a.io.Stdout, buf.String())
	}
	if a.g.json {
		a.writeJSON(entries)
	}
	return nil
}

// parseCatObjects reads cat's arguments: config, snapshot ID, tree ID,
// lock KEY, each as many times as wanted; "snapshot/ID" and "tree/ID"
// (Cloudstic's keys) are accepted as one argument.
func parseCatObjects(pos []string) ([]catObject, error) {
	if len(pos) == 0 {
		return nil, usageErr("give what to print: cat config | snapshot ID | tree ID | lock KEY ...")
	}
	var objs []catObject
	for i := 0; i < len(pos); i++ {
		kind, ref, hasRef := strings.Cut(pos[i], "/")
		if kind == "lock" || !containsString(catKinds(), kind) {
			kind, ref, hasRef = pos[i], "", false
		}
		switch {
		case !containsString(catKinds(), kind) && len(objs) > 0 && objs[len(objs)-1].kind == "config":
			return nil, usageErr("cat config takes no argument, and %q is not config, snapshot, tree or lock", kind)
		case !containsString(catKinds(), kind):
			return nil, usageErr("cannot cat %q%s: give config, snapshot ID, tree ID or lock KEY", kind, didYouMean(kind, catKinds()))
		case kind == "config" && hasRef:
			return nil, usageErr("cat config takes no argument")
		case kind == "config":
		case hasRef && ref == "", !hasRef && i+1 >= len(pos):
			return nil, usageErr("give one %s: cat %s ID", kind, kind)
		case !hasRef:
			i++
			ref = pos[i]
		}
		objs = append(objs, catObject{kind: kind, ref: ref})
	}
	return objs, nil
}

// catOne reads one object: its JSON, compact; with raw, its plaintext
// exactly as stored (Cloudstic's -raw: the bytes a hash is taken of, not
// JSON re-encoded).
func (a *app) catOne(ctx context.Context, o catObject, raw bool) (json.RawMessage, error) {
	var v any
	var err error
	switch o.kind {
	case "config", "lock":
		v, err = a.catPlain(ctx, o, raw)
	default:
		v, err = a.catSealed(ctx, o.kind, o.ref, raw)
	}
	if err != nil {
		return nil, err
	}
	if m, ok := v.(json.RawMessage); ok {
		return m, nil
	}
	return json.Marshal(v)
}

// catPlain prints objects that are stored as plain JSON; no password is
// needed.
func (a *app) catPlain(ctx context.Context, o catObject, raw bool) (any, error) {
	st, err := a.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	defer a.closeStore()
	if o.kind == "config" {
		c, err := operation.CatConfig(ctx, st)
		switch {
		case errors.Is(err, operation.ErrNoRepository):
			return nil, fmt.Errorf("repository not initialized at %s: run 'cloudstic init'", a.g.repo.URI)
		case err != nil:
			return nil, err
		case raw:
			return json.RawMessage(c.Raw), nil
		}
		return c.Config, c.Err
	}
	key, data, err := operation.CatLock(ctx, st, o.ref)
	switch {
	case errors.Is(err, operation.ErrNotLockKey):
		return nil, usageErr("%q is not a lock key: run 'cloudstic locks' to see them", o.ref)
	case errors.Is(err, operation.ErrNoLock):
		return nil, fmt.Errorf("no lock %s (it may have been released): run 'cloudstic locks' to see the current ones", key)
	case err != nil:
		return nil, err
	}
	if !raw && !json.Valid(data) {
		return nil, fmt.Errorf("lock %s is not valid JSON: remove it with 'cloudstic break-lock'", key)
	}
	return json.RawMessage(data), nil
}

// catSealed prints a snapshot or a tree, which need the repository key.
func (a *app) catSealed(ctx context.Context, kind, ref string, raw bool) (any, error) {
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
		if raw {
			data, err := r.Reader().LoadSnapshotBytes(ctx, s.ID)
			return json.RawMessage(data), err
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
	data, err := r.Reader().LoadBlob(ctx, tid)
	if errors.Is(err, repo.ErrBlobNotFound) {
		return nil, fmt.Errorf("no tree %s in the repository: run 'cloudstic cat snapshot ID' to find tree ids", ref)
	}
	if err != nil || raw {
		return json.RawMessage(data), err
	}
	t, err := tree.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", tid.Short(), err)
	}
	return t, nil
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
