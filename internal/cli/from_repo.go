package cli

import (
	"flag"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
)

// fromFlagNames are the global flags that say where a repository is and
// how to open it: the store settings (config.StoreSettings) and
// fromOnlyFlags. copy takes each of them a second time with a "from-"
// prefix, for the repository it copies from: -from-store,
// -from-password-file, -from-profile, -from-s3-endpoint,
// -from-store-sftp-key, -from-kms-key-arn...
func fromFlagNames() map[string]bool {
	names := map[string]bool{}
	for _, s := range config.StoreSettings {
		names[s.Flag] = true
	}
	for _, f := range fromOnlyFlags {
		names[f] = true
	}
	return names
}

// fromEnv returns the environment the source repository's flags default
// from: each CLOUDSTIC_ variable of a flag above is read as
// CLOUDSTIC_FROM_ (CLOUDSTIC_FROM_STORE, CLOUDSTIC_FROM_PASSWORD...), so the
// destination's settings never open the source by accident. Other
// variables (AWS_*, B2_*) are shared.
func fromEnv(getenv func(string) string) func(string) string {
	return func(name string) string {
		if rest, ok := strings.CutPrefix(name, "CLOUDSTIC_"); ok && name != "CLOUDSTIC_PROFILES_FILE" {
			return getenv("CLOUDSTIC_FROM_" + rest)
		}
		return getenv(name)
	}
}

// fromRepo is the source repository of copy: a second app, with its own
// globals, given by the -from-* flags.
type fromRepo struct {
	app   *app
	flags *flag.FlagSet // the source app's globals under their own names
	given []*replayFlag
}

// registerFrom defines the -from-* flags on fs and returns the source
// repository's app they fill.
func (a *app) registerFrom(fs *flag.FlagSet) *fromRepo {
	from := &fromRepo{app: &app{io: a.io, cmd: a.cmd, ctx: a.ctx, role: "source "}}
	from.flags = flag.NewFlagSet(a.cmd.name, flag.ContinueOnError)
	from.flags.SetOutput(nil)
	from.app.g.register(from.flags, fromEnv(a.io.Getenv))
	// No default store: copy needs to be told where to copy from.
	from.app.g.repo.URI = fromEnv(a.io.Getenv)("CLOUDSTIC_STORE")
	names := fromFlagNames()
	from.flags.VisitAll(func(f *flag.Flag) {
		if !names[f.Name] {
			return
		}
		_, isBool := f.Value.(interface{ IsBoolFlag() bool })
		r := &replayFlag{name: f.Name, isBool: isBool}
		from.given = append(from.given, r)
		usage := "source repository: " + strings.ReplaceAll(f.Usage, "(env CLOUDSTIC_", "(env CLOUDSTIC_FROM_")
		fs.Var(r, "from-"+f.Name, usage)
	})
	return from
}

// apply sets the -from-* values on the source app's flags, as if given
// there, then applies its profile and reads its password, as the main
// repository's are. The settings that are not about the repository
// (-json, -debug, -lock-wait...) are the main run's.
func (f *fromRepo) apply(a *app) error {
	for _, r := range f.given {
		for _, v := range r.values {
			if err := f.flags.Set(r.name, v); err != nil {
				return usageErr("-from-%s: %v", r.name, err)
			}
		}
	}
	g := &f.app.g
	g.json, g.jsonProgress, g.verbose, g.quiet, g.debug = a.g.json, a.g.jsonProgress, a.g.verbose, a.g.quiet, a.g.debug
	g.lockWait, g.storeConns, g.noCache, g.timeouts = a.g.lockWait, a.g.storeConns, a.g.noCache, a.g.timeouts
	g.prof.profilesFile = a.g.prof.profilesFile
	f.app.history = a.history
	if err := f.app.afterParse(f.app.ctx, f.flags); err != nil {
		return err
	}
	if g.repo.URI == "" {
		return usageErr("give the repository to copy from with -from-store URI or -from-profile NAME (or CLOUDSTIC_FROM_STORE)")
	}
	return nil
}

// replayFlag records the values given to one -from-* flag, to be set on
// the source app's flag of the same name.
type replayFlag struct {
	name   string
	isBool bool
	values []string
}

// String shows no default: the values may be secrets.
func (r *replayFlag) String() string { return "" }

// Set records v.
func (r *replayFlag) Set(v string) error { r.values = append(r.values, v); return nil }

// IsBoolFlag lets a boolean flag be given without a value.
func (r *replayFlag) IsBoolFlag() bool { return r.isBool }
