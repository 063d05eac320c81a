package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runStore(ctx context.Context, a *app, args []string) error {
	return a.runSubcommand(ctx, "store", "store list | show NAME | new -name N -uri URI [...] | verify NAME | init [-yes] NAME",
		[]subcommand{{"list", storeList}, {"show", storeShow}, {"new", storeNew}, {"verify", storeVerify}, {"init", storeInit}}, args)
}

func storeList(_ context.Context, a *app, args []string) error {
	if err := a.parseNoArgs(a.flags(), args); err != nil {
		return err
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if a.g.json {
		out := []storeListEntry{}
		for _, n := range f.StoreNames() {
			out = append(out, storeListEntry{Name: n, URI: f.Stores[n].URI})
		}
		a.writeJSON(out)
		return nil
	}
	if len(f.Stores) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tURI\tPROFILES")
	for _, n := range f.StoreNames() {
		fmt.Fprintf(w, "%s\t%s\t%s\n", n, f.Stores[n].URI, strings.Join(profilesUsing(f, n), ", "))
	}
	return w.Flush()
}

func profilesUsing(f *config.File, store string) []string {
	var out []string
	for _, n := range f.ProfileNames() {
		if f.Profiles[n].Store == store {
			out = append(out, n)
		}
	}
	return out
}

// storeFields returns a store's settings for display, by YAML key:
// secret references as written, plain secrets masked.
func storeFields(s config.Store) map[string]string {
	out := map[string]string{}
	for _, t := range config.StoreSettings {
		if v := t.Value(&s); v != nil && *v != "" {
			out[t.Key] = *v
			if t.Secret {
				out[t.Key] = "(set in the file)"
			}
		}
		if ref := t.Ref(&s); ref != nil && *ref != "" {
			out[t.RefKey] = *ref
		}
	}
	return out
}

func storeShow(_ context.Context, a *app, args []string) error {
	name, err := a.parseName(a.flags(), args, "store show NAME")
	if err != nil {
		return err
	}
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	s, err := f.Store(name)
	if err != nil {
		return err
	}
	fields := storeFields(s)
	if a.g.json {
		a.writeJSON(storeShowResult{Name: name, Store: fields, Profiles: append([]string{}, profilesUsing(f, name)...)})
		return nil
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "store:\t%s\n", name)
	for _, k := range keys {
		fmt.Fprintf(w, "%s:\t%s\n", k, fields[k])
	}
	fmt.Fprintf(w, "profiles:\t%s\n", strings.Join(profilesUsing(f, name), ", "))
	return w.Flush()
}

func storeNew(_ context.Context, a *app, args []string) error {
	fs := a.flags()
	name := fs.String("name", "", "store name (required)")
	uri := fs.String("uri", "", "store URI: local:PATH, s3:BUCKET[/PREFIX], b2:BUCKET[/PREFIX], sftp://[user@]host[:port]/path (required)")
	var s config.Store
	for _, t := range config.StoreSettings {
		if ref := t.Ref(&s); ref != nil {
			fs.StringVar(ref, t.RefFlag(), "", "secret reference for "+t.RefKey)
		}
	}
	noPrompt := fs.Bool("no-prompt", false, "never ask on a terminal: a missing required flag is an error")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	for _, t := range config.StoreSettings {
		if t.Secret && a.explicit[t.Flag] {
			return usageErr("store new does not write -%s into profiles.yaml: give -%s REF (env://VAR, file:///path, config-token://P/N, secret-service://C/I)", t.Flag, t.RefFlag())
		}
	}
	var err error
	if *name, err = a.ask(a.ctx, *name, "store name", *noPrompt, "-name"); err != nil {
		return err
	}
	if *uri, err = a.ask(a.ctx, *uri, "store URI", *noPrompt, "-uri"); err != nil {
		return err
	}
	s.URI = *uri
	for _, t := range config.StoreSettings { // the other settings given on the command line
		if v := t.Value(&s); v != nil && t.Key != "uri" && a.explicit[t.Flag] {
			*v = *t.Value(&a.g.repo)
		}
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if err := f.AddStore(*name, s); err != nil {
		return err
	}
	if err := f.Save(); err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(storeNewResult{Created: *name, Store: storeFields(s), File: f.Path})
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "Added store %s (%s) to %s\n", *name, s.URI, f.Path)
	return nil
}

// Distinct failures of store verify.
var (
	errVerifyUnreachable = errors.New("cannot reach the store")
	errVerifyNoRepo      = errors.New("no repository in the store")
	errVerifyCredential  = errors.New("wrong password or key (no provided credential matches)")
)

// storeVerify checks credentials, connectivity and that the repository
// unlocks: no data is read beyond the config and the key slots.
func storeVerify(ctx context.Context, a *app, args []string) error {
	name, err := a.storeArg(args, "verify")
	if err != nil {
		return err
	}
	o, err := a.openOptions()
	if err != nil {
		return err
	}
	o.Cache = nil // verifying reads nothing worth caching
	// A credential that could not be had (a prompt, KMS) is reported as
	// it is, not as a refusal of the repository.
	var credErr error
	o.Credentials = func(ctx context.Context) (repo.Credentials, error) {
		c, err := a.credentials(ctx, false)
		credErr = err
		return c, err
	}
	r, err := operation.Open(ctx, o)
	switch {
	case credErr != nil:
		return err
	case errors.Is(err, operation.ErrNoRepository):
		return fmt.Errorf("store %s: %w at %s (run 'cloudstic store init %s')", name, errVerifyNoRepo, a.g.repo.URI, name)
	case errors.Is(err, operation.ErrUnreachable):
		return fmt.Errorf("store %s: %w %s: %w", name, errVerifyUnreachable, a.g.repo.URI, a.openErr(err))
	case errors.Is(err, repo.ErrNeedCredential):
		return fmt.Errorf("store %s: the repository is encrypted and no password_secret or key is configured", name)
	case errors.Is(err, repo.ErrWrongCredential):
		return fmt.Errorf("store %s: %w for the repository at %s", name, errVerifyCredential, a.g.repo.URI)
	case err != nil:
		return fmt.Errorf("store %s: %w", name, err)
	}
	a.st = r
	defer a.closeStore()
	cfg := r.Reader().Config()
	if a.g.json {
		a.writeJSON(storeVerifyResult{Store: name, URI: a.g.repo.URI, OK: true, Repository: cfg.ID, Encrypted: cfg.Encrypted})
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "store %s: ok (%s, repository %s, encrypted: %v)\n", name, a.g.repo.URI, termtext.Safe(cfg.ID[:8]), cfg.Encrypted)
	return nil
}

// storeArg parses `store verify NAME` and applies the store's entry, as
// -profile applies a profile's.
func (a *app) storeArg(args []string, sub string) (string, error) {
	a.g.prof.storeCmd = true
	fs := a.flags()
	name, err := a.parseName(fs, args, "store "+sub+" NAME")
	if err != nil {
		return "", err
	}
	a.g.prof.storeName = name
	return name, a.afterParse(a.ctx, fs)
}

// storeInit creates the repository of a store entry: init with the
// store's settings, after a confirmation unless -yes.
func storeInit(ctx context.Context, a *app, args []string) error {
	a.g.prof.storeCmd = true
	fs := a.flags()
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	fs.Bool("no-encryption", false, "create an unencrypted repository")
	fs.Bool("add-recovery-key", false, "also create a 24-word recovery key (shown once)")
	name, err := a.parseName(fs, args, "store init [-yes] NAME")
	if err != nil {
		return err
	}
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	s, err := f.Store(name)
	if err != nil {
		return err
	}
	if !*yes {
		answer, err := a.ask(ctx, "", fmt.Sprintf("create a repository at %s? [y/N]", s.URI), false, "-yes (to create a repository without a terminal)")
		if err != nil {
			return err
		}
		if answer != "y" && answer != "yes" {
			return errors.New("nothing was created")
		}
	}
	// Run init with the flags given here, the store entry applied.
	var initArgs []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "yes" {
			initArgs = append(initArgs, "-"+f.Name+"="+f.Value.String())
		}
	})
	sub := &app{io: a.io, cmd: a.cmd, ctx: ctx}
	sub.g.prof.storeName = name
	return runInit(ctx, sub, initArgs)
}
