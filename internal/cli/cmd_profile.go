package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/config"
)

func runProfile(ctx context.Context, a *app, args []string) error {
	return a.runSubcommand(ctx, "profile", "profile list | show NAME | new -name N -source S [-store-ref R [-store URI]] [-tag T]...",
		[]subcommand{{"list", profileList}, {"show", profileShow}, {"new", profileNew}}, args)
}

// loadProfilesOrEmpty is loadProfiles for commands that read or add
// entries: a missing file is an empty one.
func (a *app) loadProfilesOrEmpty() (*config.File, error) {
	path, err := config.ProfilesPath(a.g.prof.profilesFile, a.io.Getenv)
	if err != nil {
		return nil, err
	}
	f, err := config.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return config.Empty(path), nil
	}
	if err == nil {
		a.warnExposure(f)
	}
	return f, err
}

func profileList(_ context.Context, a *app, args []string) error {
	if err := a.parseNoArgs(a.flags(), args); err != nil {
		return err
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if a.g.json {
		out := []profileListEntry{}
		for _, n := range f.ProfileNames() {
			p := f.Profiles[n]
			out = append(out, profileListEntry{Name: n, Source: p.Source, Store: p.Store, Enabled: p.IsEnabled()})
		}
		a.writeJSON(out)
		return nil
	}
	if len(f.Profiles) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSOURCE\tSTORE\tENABLED")
	for _, n := range f.ProfileNames() {
		p := f.Profiles[n]
		fmt.Fprintf(w, "%s\t%s\t%s\t%v\n", n, p.Source, p.Store, p.IsEnabled())
	}
	return w.Flush()
}

func profileShow(_ context.Context, a *app, args []string) error {
	name, err := a.parseName(a.flags(), args, "profile show NAME")
	if err != nil {
		return err
	}
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	p, err := f.Profile(name)
	if err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(profileShowResult{Name: name, Profile: p, Enabled: p.IsEnabled()})
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	row("profile", name)
	row("source", p.Source)
	if p.Store != "" {
		row("store", fmt.Sprintf("%s (%s)", p.Store, f.Stores[p.Store].URI))
	}
	if len(p.Tags) > 0 {
		row("tags", strings.Join(p.Tags, ", "))
	}
	if len(p.Excludes) > 0 {
		row("excludes", strings.Join(p.Excludes, ", "))
	}
	if p.ExcludeFile != "" {
		row("exclude_file", p.ExcludeFile)
	}
	if p.HasRetention() {
		row("retention", fmt.Sprintf("last %d, hourly %d, daily %d, weekly %d, monthly %d, yearly %d, prune %v",
			p.KeepLast, p.KeepHourly, p.KeepDaily, p.KeepWeekly, p.KeepMonthly, p.KeepYearly, p.Prune))
	}
	row("enabled", p.IsEnabled())
	if p.AuthRef != "" {
		row("auth_ref", p.AuthRef)
	}
	return w.Flush()
}

func profileNew(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	name := fs.String("name", "", "profile name (required)")
	source := fs.String("source", "", "what to back up, e.g. local:~/Documents (required)")
	storeRef := fs.String("store-ref", "", "the store entry this profile uses; with -store URI, created when missing")
	var tags, excludes multiFlag
	fs.Var(&tags, "tag", "tag the profile's snapshots (repeatable)")
	fs.Var(&excludes, "exclude", "exclude pattern (repeatable)")
	excludeFile := fs.String("exclude-file", "", "exclude file")
	authRef := fs.String("auth-ref", "", "the auth entry of a gdrive or onedrive source (it must exist, for the source's provider)")
	noPrompt := fs.Bool("no-prompt", false, "never ask on a terminal: a missing required flag is an error")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	var err error
	if *name, err = a.ask(ctx, *name, "profile name", *noPrompt, "-name"); err != nil {
		return err
	}
	if *source, err = a.ask(ctx, *source, "source (e.g. local:/home/me/Documents)", *noPrompt, "-source"); err != nil {
		return err
	}
	f, err := a.loadProfilesOrEmpty()
	if err != nil {
		return err
	}
	if *storeRef != "" {
		if _, ok := f.Stores[*storeRef]; !ok {
			if !explicit["store"] {
				return usageErr("store %q is not in %s: give -store URI to create it, or create it with 'cloudstic store new'", *storeRef, f.Path)
			}
			if err := f.AddStore(*storeRef, config.Store{URI: a.g.repo.URI}); err != nil {
				return err
			}
		}
	}
	if err := checkAuthRef(f, *source, *authRef); err != nil {
		return err
	}
	p := config.Profile{Source: *source, Store: *storeRef, Tags: tags, Excludes: excludes, ExcludeFile: *excludeFile, AuthRef: *authRef}
	if err := f.AddProfile(*name, p); err != nil {
		return err
	}
	if err := f.Save(); err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(profileNewResult{Created: *name, Profile: p, File: f.Path})
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "Added profile %s to %s\n", *name, f.Path)
	return nil
}

// checkAuthRef checks profile new's -auth-ref: only for a cloud drive
// source, naming an auth entry of the source's provider.
func checkAuthRef(f *config.File, source, authRef string) error {
	if authRef == "" {
		return nil
	}
	u, isCloud, err := parseCloudURI(source)
	if err != nil {
		return err
	}
	if !isCloud {
		return usageErr("-auth-ref applies to gdrive and onedrive sources only, not to %s", source)
	}
	e, ok := f.Auth[authRef]
	if !ok {
		return usageErr("auth entry %q is not in %s: create it with 'cloudstic auth new -name %s -provider %s'", authRef, f.Path, authRef, u.provider)
	}
	if e.Provider != u.provider {
		return usageErr("auth entry %q is for %s, but the source %s is %s", authRef, e.Provider, source, u.provider)
	}
	return nil
}

// ask returns value, or asks for it on a terminal when it is empty. With
// -no-prompt, or without a terminal, a missing value is a usage error
// naming flagName.
func (a *app) ask(ctx context.Context, value, label string, noPrompt bool, flagName string) (string, error) {
	if value != "" {
		return value, nil
	}
	f, ok := a.io.Stdin.(*os.File)
	if noPrompt || !ok || !term.IsTerminal(int(f.Fd())) {
		return "", usageErr("%s is required", flagName)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fmt.Fprintf(a.io.Stderr, "%s: ", label)
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", label, err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", usageErr("%s is required", flagName)
	}
	return line, nil
}

// profileExamples are the help examples of the profile, store, secret,
// schedule, source and setup commands.
func profileExamples(name string) []string {
	switch name {
	case "profile":
		return []string{"cloudstic profile list",
			"cloudstic profile new -name documents -source local:~/Documents -store-ref nas -tag daily",
			"cloudstic profile show documents", "cloudstic backup -profile documents", "cloudstic backup -all-profiles -json"}
	case "store":
		return []string{"cloudstic store new -name nas -uri sftp://backup@nas/backups/cloudstic -password-secret file:///etc/cloudstic/nas.pw",
			"cloudstic store new -name bucket -uri s3:company-backups/laptops -s3-region eu-west-1 -password-secret secret-service://cloudstic/bucket",
			"cloudstic store init -yes nas", "cloudstic store verify nas", "cloudstic store list"}
	case "secret":
		return []string{"cloudstic secret set secret-service://cloudstic/bucket    # asks without echo on a terminal",
			"cloudstic secret set config-token://cloudstic/nas < nas.pw"}
	case "schedule":
		return []string{"cloudstic schedule install -profile documents -every daily",
			"cloudstic schedule install -all-profiles -every '*-*-* 02:30' -scheduler cron",
			"cloudstic schedule install -profile documents -every daily -scheduler launchd -dry-run",
			"cloudstic schedule list", "cloudstic schedule remove -profile documents"}
	case "source":
		return []string{"cloudstic source discover", "cloudstic source discover -portable-only -json"}
	case "setup":
		return []string{"cloudstic setup workstation -dry-run", "cloudstic setup workstation -store-ref nas -yes",
			"cloudstic setup workstation -dry-run -json"}
	}
	return nil
}
