package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/config"
)

// completeCommand is the hidden command the completion scripts run to
// complete values that live outside the script: names from profiles.yaml
// and snapshot ids from the repository. It is not in commands(): help
// does not list it, and it prints candidates, one a line, or nothing.
const completeCommand = "__complete"

// completeTimeout bounds the repository read of a snapshot completion: a
// shell waits for it.
const completeTimeout = 5 * time.Second

// storeURIPrefixes are the store URI schemes -store completes to.
func storeURIPrefixes() []string { return []string{"local:", "s3:", "b2:", "sftp://"} }

// sourceURIPrefixes are the source URI schemes -source completes to.
func sourceURIPrefixes() []string { return []string{"local:", "sftp://"} }

// snapshotCommands take snapshot ids (or latest) as arguments.
func snapshotCommands() []string {
	return []string{"restore", "ls", "diff", "forget", "tag", "dump", "check", "rewrite", "copy", "find", "stats"}
}

// runComplete prints the candidates for kind (profiles, stores, auth,
// snapshots); words are the command line's words after the command, whose
// -profiles-file, -store, -password... say where to look. It always exits
// 0: a completion that cannot be computed offers nothing.
func runComplete(ctx context.Context, stdio IO, args []string) int {
	if len(args) == 0 {
		return ExitOK
	}
	kind, words := args[0], args[1:]
	var names []string
	switch kind {
	case "profiles", "stores", "auth":
		names = profileNames(kind, words, stdio.Getenv)
	case "snapshots":
		names = snapshotRefs(ctx, stdio, words)
	}
	for _, n := range names {
		fmt.Fprintln(stdio.Stdout, n)
	}
	return ExitOK
}

// profileNames are the names of kind in the profiles file the words name
// (-profiles-file), else the default one.
func profileNames(kind string, words []string, getenv func(string) string) []string {
	path, err := config.ProfilesPath(flagValue(words, "profiles-file"), getenv)
	if err != nil {
		return nil
	}
	f, err := config.Load(path)
	if err != nil {
		return nil
	}
	var names []string
	switch kind {
	case "profiles":
		for n := range f.Profiles {
			names = append(names, n)
		}
	case "stores":
		for n := range f.Stores {
			names = append(names, n)
		}
	case "auth":
		for n := range f.Auth {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// flagValue is the value of -name (or --name) in words, "" without one.
func flagValue(words []string, name string) string {
	for i, w := range words {
		n, v, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || n != name {
			continue
		}
		if hasValue {
			return v
		}
		if i+1 < len(words) {
			return words[i+1]
		}
	}
	return ""
}

// snapshotRefs are the short ids of the repository's snapshots, newest
// first. The repository is the one the words' global flags (-store,
// -profile, -password-file...) name, opened as list opens it, without a
// prompt (stdin is not the terminal's here) and without a word on stderr.
func snapshotRefs(ctx context.Context, stdio IO, words []string) []string {
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	list := &command{name: "list"}
	a := &app{ctx: ctx, cmd: list, io: IO{Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: stdio.Getenv, Environ: stdio.Environ, secretEnv: &nameSet{}, warned: &nameSet{}}}
	fs := a.flags()
	fs.SetOutput(io.Discard)
	if _, err := a.parse(fs, globalWords(fs, words)); err != nil {
		return nil
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return nil
	}
	defer a.closeStore()
	snaps, _, err := r.Reader().Snapshots(ctx)
	if err != nil {
		return nil
	}
	var refs []string
	for _, s := range slices.Backward(snaps) {
		refs = append(refs, s.ID.Short())
	}
	return refs
}

// globalWords keeps the flags of words that fs defines, with their values,
// and drops the rest (the command's own flags, arguments, the word being
// completed).
func globalWords(fs *flag.FlagSet, words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		out = append(out, w)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); hasValue || (ok && b.IsBoolFlag()) {
			continue
		}
		if i+1 < len(words) {
			i++
			out = append(out, words[i])
		}
	}
	return out
}
