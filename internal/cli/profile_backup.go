package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// exitCodeError ends a run with a given exit code; its message is printed
// unless -json (whose document was already written).
type exitCodeError struct {
	code int
	msg  string
}

func (e *exitCodeError) Error() string { return e.msg }

// exitRank orders exit codes from best to worst: success, partial, error,
// usage error.
func exitRank(code int) int {
	switch code {
	case ExitOK:
		return 0
	case ExitPartial:
		return 1
	case ExitError:
		return 2
	}
	return 3
}

// profileBackup handles `backup -all-profiles` and the retention of
// `backup -profile NAME`; done is false when runBackup should go on with
// a plain backup.
func (a *app) profileBackup(ctx context.Context, fs *flag.FlagSet) (done bool, err error) {
	switch {
	case a.g.prof.inner:
		return false, nil
	case a.g.prof.all:
		return true, a.backupAllProfiles(ctx, fs)
	case a.g.prof.profile == "":
		return false, nil
	}
	f, err := a.loadProfiles()
	if err != nil {
		return true, err
	}
	p, err := f.Profile(a.g.prof.profile)
	if err != nil {
		return true, err
	}
	if !p.HasRetention() || fs.Lookup("dry-run").Value.String() == "true" {
		return false, nil
	}
	return true, a.backupThenForget(ctx, fs, p)
}

// rerunArgs rebuilds the command line from the flags given on it, minus
// the ones named in drop.
func rerunArgs(fs *flag.FlagSet, drop ...string) []string {
	skip := map[string]bool{}
	for _, d := range drop {
		skip[d] = true
	}
	var args []string
	fs.Visit(func(f *flag.Flag) {
		if skip[f.Name] {
			return
		}
		if m, ok := f.Value.(*multiFlag); ok {
			for _, v := range *m {
				args = append(args, "-"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "-"+f.Name+"="+f.Value.String())
	})
	return args
}

// globalArgs rebuilds the global flags given on the command line.
func (a *app) globalArgs(fs *flag.FlagSet) []string {
	// A throwaway set: registering on a.g would reset it to the defaults.
	var g globals
	globals := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	g.register(globals, a.io.Getenv)
	var args []string
	fs.Visit(func(f *flag.Flag) {
		if globals.Lookup(f.Name) != nil && f.Name != "all-profiles" && f.Name != "profile" && f.Name != "json" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// subRun runs one command for a profile in an app of its own, its stdout
// captured when capture is set. inner marks a run that must not start
// retention or -all-profiles itself.
func (a *app) subRun(ctx context.Context, cmdName string, args []string, capture, inner bool) (code int, out []byte, err error) {
	var buf bytes.Buffer
	stdio := a.io
	if capture {
		stdio.Stdout = &buf
	}
	sub := &app{io: stdio, ctx: ctx}
	for _, c := range commands() {
		if c.name == cmdName {
			sub.cmd = &c
		}
	}
	sub.g.prof.inner = inner
	err = sub.cmd.run(ctx, sub, args)
	code = sub.finish(err)
	return code, buf.Bytes(), err
}

// backupThenForget backs up one profile, then forgets its snapshots by the
// profile's policy (and prunes when it says so): the retention extension.
func (a *app) backupThenForget(ctx context.Context, fs *flag.FlagSet, p config.Profile) error {
	code, bout, berr := a.subRun(ctx, "backup", rerunArgs(fs), a.g.json, true)
	result := profileBackupResult{Profile: a.g.prof.profile, Backup: rawJSON(bout)}
	if exitRank(code) <= exitRank(ExitPartial) {
		host := fs.Lookup("host").Value.String() // the name the backup recorded
		if host == "" {
			host, _ = os.Hostname() // backup records the same, possibly empty, name
		}
		fargs := append(a.globalArgs(fs), "-profile="+a.g.prof.profile, "-source="+p.Source, "-host="+host)
		if a.g.json {
			fargs = append(fargs, "-json")
		}
		fargs = append(fargs, retentionArgs(p)...)
		if p.Prune {
			fargs = append(fargs, "-prune")
		}
		fcode, fout, _ := a.subRun(ctx, "forget", fargs, a.g.json, true)
		forgetDoc := rawJSON(fout)
		result.Forget = &forgetDoc
		if exitRank(fcode) > exitRank(code) {
			code = fcode
		}
	}
	if a.g.json {
		result.ExitCode = code
		a.writeJSON(result)
	}
	if code == ExitOK {
		return nil
	}
	msg := "the backup failed"
	if berr == nil || errors.Is(berr, errPartial) {
		msg = "forget after the backup failed"
	}
	return &exitCodeError{code: code, msg: msg}
}

// retentionArgs are the forget flags of a profile's retention policy,
// limited to the profile's snapshots by its tags.
func retentionArgs(p config.Profile) []string {
	var args []string
	for _, k := range []struct {
		flag string
		n    int
	}{{"keep-last", p.KeepLast}, {"keep-hourly", p.KeepHourly}, {"keep-daily", p.KeepDaily},
		{"keep-weekly", p.KeepWeekly}, {"keep-monthly", p.KeepMonthly}, {"keep-yearly", p.KeepYearly}} {
		if k.n > 0 {
			args = append(args, "-"+k.flag+"="+strconv.Itoa(k.n))
		}
	}
	for _, t := range p.Tags { // only this profile's snapshots
		args = append(args, "-tag="+t)
	}
	return args
}

func rawJSON(b []byte) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// profileOutcome is one line of the -all-profiles summary.
type profileOutcome struct {
	Profile  string          `json:"profile"`
	Store    string          `json:"store,omitempty"`
	ExitCode int             `json:"exit_code"`
	Error    string          `json:"error,omitempty"`
	Seconds  float64         `json:"duration_seconds"`
	Result   json.RawMessage `json:"result,omitempty"`
}

// backupAllProfiles backs up every enabled profile in name order, each
// with its own store and lock; a failure does not stop the others. The
// exit code is the worst of them.
func (a *app) backupAllProfiles(ctx context.Context, fs *flag.FlagSet) error {
	f, err := a.loadProfiles()
	if err != nil {
		return err
	}
	var outcomes []profileOutcome
	worst := ExitOK
	for _, name := range f.ProfileNames() {
		p := f.Profiles[name]
		if !p.IsEnabled() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !a.g.json {
			fmt.Fprintf(a.io.Stderr, "== profile %s ==\n", name)
		}
		start := clock.Real{}.Now()
		args := append(rerunArgs(fs, "all-profiles", "profile"), "-profile="+name)
		code, out, runErr := a.subRun(ctx, "backup", args, a.g.json, false)
		o := profileOutcome{Profile: name, Store: p.Store, ExitCode: code, Seconds: clock.Real{}.Now().Sub(start).Seconds(), Result: rawJSON(out)}
		if runErr != nil && !errors.Is(runErr, errPartial) {
			o.Error = oneLine(runErr.Error())
		}
		outcomes = append(outcomes, o)
		if exitRank(code) > exitRank(worst) {
			worst = code
		}
	}
	if a.g.json {
		if outcomes == nil {
			outcomes = []profileOutcome{}
		}
		a.writeJSON(outcomes)
	} else {
		a.printProfileSummary(outcomes)
	}
	failed := 0
	for _, o := range outcomes {
		if o.ExitCode != ExitOK {
			failed++
		}
	}
	if worst == ExitOK {
		return nil
	}
	return &exitCodeError{code: worst, msg: fmt.Sprintf("%d of %d profiles did not complete cleanly (see the summary)", failed, len(outcomes))}
}

func (a *app) printProfileSummary(outcomes []profileOutcome) {
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nPROFILE\tSTORE\tRESULT\tTIME\tERROR")
	for _, o := range outcomes {
		status := map[int]string{ExitOK: "ok", ExitPartial: "partial", ExitError: "failed", ExitUsage: "bad usage"}[o.ExitCode]
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1fs\t%s\n", o.Profile, o.Store, status, o.Seconds, termtext.Safe(o.Error))
	}
	if err := w.Flush(); err != nil {
		a.warnf("writing the summary: %v", err)
	}
}
